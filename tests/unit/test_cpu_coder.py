"""The LLM coder on a CPU kernel: the CPU contract in the system prompt, C/C++ file names kept,
the system compiler's "not declared" read as an undeclared parameter, and a valid rewrite (an
extern "C" function) accepted by the reply check, which asks for what the prompt asks."""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.coder.llm_coder import CoderRequest, LLMCoder, coder_messages, variant_filename
from pragma_ncu.coder.reply import ReplyError, explain_check_error, parse_reply
from pragma_ncu.coder.variant import Variant
from pragma_ncu.infra.llm import LLMClient, LLMConfig
from tests.fakes.llm_server import FakeLLMServer, Reply

ROOT = Path(__file__).resolve().parents[2]


def _request(target: str, filename: str) -> CoderRequest:
    source = (ROOT / "examples" / "cpu" / "conv1d.cpp").read_text()
    current = Variant("original", filename, source, {}, "original")
    return CoderRequest("rewrite", "conv1d", "[kernel]\nname = \"conv1d\"\n", current,
                        {"ACC": 1}, "", ("vectorize",), (),
                        {"classification": "retiring", "metrics": {"Ir": 1.0e6},
                         "findings": []}, None, target=target)


def test_a_cpu_request_gets_the_cpu_contract() -> None:
    system, user = coder_messages(_request("cpu", "conv1d.cpp"))
    assert "system compiler" in system["content"] and "nvcc" not in system["content"]
    assert "extern \"C\"" in system["content"] and "conv1d" in system["content"]
    gpu_system, _ = coder_messages(_request("gpu", "conv1d.cu"))
    assert "nvcc" in gpu_system["content"]


def test_a_cpp_variant_keeps_its_extension() -> None:
    assert variant_filename("conv1d.cpp", False) == "conv1d.cpp"
    assert variant_filename("conv1d.cpp", True) == "conv1d.cpp.j2"
    assert variant_filename("silu.cu", True) == "silu.cu.j2"
    assert variant_filename("silu.cu.j2", False) == "silu.cu"


def test_gcc_and_clang_undeclared_knobs_are_named() -> None:
    gcc = "conv1d.cpp:20:25: error: 'BLOCK' was not declared in this scope"
    clang = "conv1d.c:3:9: error: use of undeclared identifier 'UNROLL'"
    assert explain_check_error(gcc, False).startswith("undeclared parameter BLOCK")
    assert explain_check_error(clang, False).startswith("undeclared parameter UNROLL")


# --- issue 35: the reply check and the prompt say the same thing for every target ------------

REWRITE = json.loads((ROOT / "tests" / "fixtures" / "llm" / "conv1d_rewrite.json")
                     .read_text())["replies"][0]["content"]
SPEC_TEXT = (ROOT / "examples" / "cpu" / "conv1d.toml").read_text()


def _cpu_request() -> CoderRequest:
    request = _request("cpu", "conv1d.cpp")
    return replace(request, spec_text=SPEC_TEXT)


def test_a_replayed_valid_cpu_rewrite_is_accepted(llm_server: FakeLLMServer) -> None:
    """Every CPU rewrite was refused: "the code defines no __global__ function named conv1d"."""
    llm_server.script([Reply.text(REWRITE)])
    checked: list[Variant] = []
    coder = LLMCoder(LLMClient(LLMConfig("replayed-coder", llm_server.base_url),
                               sleep=lambda _: None),
                     lambda variant: checked.append(variant) or None)
    result = coder.propose(_cpu_request(), "llm rewrite 1")
    assert result.variant is not None, result.error
    assert result.variant.filename == "conv1d.cpp" and len(checked) == 1
    assert set(result.variant.overlay["params"]) == {"UNROLL", "THREADS", "OPT", "FAST_MATH"}
    assert [c.outcome for c in result.calls] == ["ok"]
    prompt = llm_server.requests[0]["messages"][0]["content"]
    assert '`conv1d`: a function with C linkage (extern "C" in C++)' in prompt


def test_the_cpu_check_asks_for_what_the_cpu_prompt_asks() -> None:
    code = REWRITE.split("```cpp\n")[1].split("```")[0]
    toml = REWRITE.split("```toml\n")[1].split("```")[0]

    def reply(source: str) -> str:
        return f"```cpp\n{source}```\n\n```toml\n{toml}```\nWhy."

    spec = tomllib.loads(SPEC_TEXT)
    assert parse_reply(reply(code), "conv1d", spec=spec, source="conv1d.cpp").code == code
    cxx = code.replace('extern "C" void conv1d', "void conv1d")
    with pytest.raises(ReplyError, match=r'conv1d has C\+\+ linkage: declare it extern "C"'):
        parse_reply(reply(cxx), "conv1d", spec=spec, source="conv1d.cpp")
    block = cxx.replace("void conv1d", 'extern "C" {\nvoid conv1d').rstrip() + "\n}\n"
    assert parse_reply(reply(block), "conv1d", spec=spec, source="conv1d.cpp")
    assert parse_reply(reply(cxx), "conv1d", spec=spec, source="conv1d.c")  # C: C linkage
    with pytest.raises(ReplyError, match="defines no function with C linkage .* named conv1d "
                                         r"\(functions found: conv2d, dot\)"):
        parse_reply(reply(code.replace("conv1d(", "conv2d(")), "conv1d", spec=spec,
                    source="conv1d.cpp")
    with pytest.raises(ReplyError, match="no __global__ function named conv1d"):
        parse_reply(reply(code), "conv1d", spec=spec, source="conv1d.cu")
