"""The LLM coder on a CPU kernel: the CPU contract in the system prompt, C/C++ file names kept,
and the system compiler's "not declared" read as an undeclared parameter."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.coder.llm_coder import CoderRequest, coder_messages, variant_filename
from pragma_ncu.coder.reply import explain_check_error
from pragma_ncu.coder.variant import Variant

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
