"""The LLM coder against the scripted OpenAI-compatible server: prompts, reply checks, and the
retry-with-feedback loop (no network, no GPU, no compiler: `check` is a test double)."""

from __future__ import annotations

import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pragma_ncu.coder.llm_coder import (
    CoderRequest,
    CoderResult,
    LLMCoder,
    coder_messages,
    overlay_toml,
    variant_filename,
)
from pragma_ncu.coder.reply import ReplyError, explain_check_error, parse_reply
from pragma_ncu.coder.variant import Variant, variant_spec
from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.infra.llm import LLMClient, LLMConfig
from pragma_ncu.measure.records import Citation, KernelState
from tests.fakes.llm_server import FakeLLMServer, Reply

KEY = "sk-test-secret-123"

SPEC_TEXT = """\
[kernel]
name = "axpy"
flags = ["-O3"]

[params]
BLOCK = { default = 256, values = [128, 256] }

[launch]
grid = ["ceil_div(N, BLOCK)"]
block = ["BLOCK"]

[[args]]
name = "y"
dtype = "fp32"
shape = ["N"]
role = "output"

[[args]]
name = "x"
dtype = "fp32"
shape = ["N"]
role = "input"

[[args]]
name = "n"
dtype = "int32"
role = "scalar"
value = "N"

[[shapes]]
name = "big"
N = 1048576

[[shapes]]
name = "odd"
N = 1001
"""
SPEC = tomllib.loads(SPEC_TEXT)

ORIGINAL = """\
extern "C" __global__ void axpy(float* y, const float* x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""

DEFINE_CODE = """\
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 4
#endif

// Each thread scales VEC consecutive elements.
extern "C" __global__ void __launch_bounds__(BLOCK)
axpy(float* __restrict__ y, const float* __restrict__ x, int n)
{
    const int base = (blockIdx.x * BLOCK + threadIdx.x) * VEC;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
        if (base + k < n) y[base + k] = 2.0f * x[base + k];
    }
}
"""

DEFINE_TOML = """\
[params]
BLOCK = { default = 256, values = [128, 256, 512] }
VEC = { default = 4, values = [1, 2, 4] }

[launch]
grid = ["ceil_div(N, BLOCK * VEC)"]
block = ["BLOCK"]
"""

JINJA_CODE = """\
{# VEC elements per thread; UNROLL unrolls the element loop. #}
constexpr int kVec = {{ VEC }};

extern "C" __global__ void __launch_bounds__({{ BLOCK }})
axpy(float* __restrict__ y, const float* __restrict__ x, int n)
{
    const int base = (blockIdx.x * {{ BLOCK }} + threadIdx.x) * kVec;
{% if UNROLL %}#pragma unroll{% endif %}
    for (int k = 0; k < kVec; ++k) {
        if (base + k < n) y[base + k] = 2.0f * x[base + k];
    }
}
"""

JINJA_TOML = """\
[params]
BLOCK = { default = 256, values = [128, 256] }
VEC = { default = 2, values = [1, 2, 4] }
UNROLL = { default = true, values = [true, false] }

[launch]
grid = ["ceil_div(N, BLOCK * VEC)"]
block = ["BLOCK"]
"""

RATIONALE = ("Each thread now handles VEC consecutive elements, so the block count drops. "
             "The unrolled loop keeps several loads in flight.")


def reply_text(code: str = DEFINE_CODE, toml: str = DEFINE_TOML, lang: str = "cuda",
               rationale: str = RATIONALE) -> str:
    return f"Here is the kernel.\n\n```{lang}\n{code}```\n\n```toml\n{toml}```\n\n{rationale}\n"


def make_request(kind: str = "rewrite", diagnosis: str = "", current: Variant | None = None,
                 best_source: str = "") -> CoderRequest:
    best = KernelState(
        round=2, variant="retune 1", variant_key="k", source_hash="h", params={"BLOCK": 256},
        times_us={"big": 41.2345, "odd": 3.5}, noise_us={"big": 0.25}, objective_us=12.0177,
        verified=True, metrics={"dram__throughput.avg.pct_of_peak_sustained_elapsed": 71.5},
        registers=18, classification="dram_bandwidth",
        findings=({"bottleneck": "dram_bandwidth", "title": "DRAM-bound at 72%",
                   "summary": "loads are 4 bytes wide", "score": 0.8},))
    return CoderRequest(
        kind=kind, kernel_name="axpy", spec_text=SPEC_TEXT,
        current=current or Variant("original", "axpy.cu", ORIGINAL),
        current_params={"BLOCK": 256}, diagnosis=diagnosis,
        guidance=("vectorize the loads with 16-byte accesses",),
        compendium=(Citation("dram__throughput", "dram-throughput", "DRAM throughput",
                             "How busy the DRAM interface is, as a fraction of its peak."),
                    Citation("l1tex__t_sectors_pipe_lsu_mem_global_op_ld", "global-load-sectors",
                             "Global load sectors", "Sectors requested by global loads.")),
        profile={"classification": "dram_bandwidth",
                 "metrics": {"smsp__warps_issue_stalled_long_scoreboard": 14.25},
                 "findings": [{"bottleneck": "dram_bandwidth", "title": "Narrow loads",
                               "summary": "each thread loads 4 bytes"}]},
        best=best, best_source=best_source)


class Checks:
    """A `check` double: answers from a script (None = fine), records what it saw."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.seen: list[Variant] = []

    def __call__(self, variant: Variant) -> str | None:
        self.seen.append(variant)
        return self.answers.pop(0) if self.answers else None


def make_coder(server: FakeLLMServer, check: Checks | None = None, max_attempts: int = 3,
               **options: Any) -> LLMCoder:
    config = LLMConfig(model="fake-coder", base_url=server.base_url, api_key=KEY,
                       **{"timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.0, **options})
    return LLMCoder(LLMClient(config, sleep=lambda s: None), check or Checks(),
                    max_attempts=max_attempts)


def user_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def no_secrets(result: CoderResult, server: FakeLLMServer) -> None:
    texts = [result.error] + [c.outcome for c in result.calls]
    texts += [m["content"] for r in server.requests for m in r["messages"]]
    for text in texts:
        assert KEY not in text and server.base_url not in text and "127.0.0.1" not in text


# --- the loop -------------------------------------------------------------------------------

def test_good_define_reply_gives_a_variant_with_its_overlay(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.text(reply_text())])
    check = Checks()
    result = make_coder(llm_server, check).propose(make_request(), "llm rewrite 3")
    variant = result.variant
    assert variant is not None and result.error == ""
    assert (variant.name, variant.filename, variant.origin) == ("llm rewrite 3", "axpy.cu", "llm")
    assert variant.source == DEFINE_CODE
    assert variant.overlay["params"] == {"BLOCK": {"default": 256, "values": [128, 256, 512]},
                                         "VEC": {"default": 4, "values": [1, 2, 4]}}
    assert variant.overlay["launch"] == {"grid": ["ceil_div(N, BLOCK * VEC)"],
                                         "block": ["BLOCK"]}
    assert variant.overlay["kernel"] == {"template_args": []}
    assert variant.overlay["tune"] == {"restrictions": []}
    assert variant.note == ("Each thread now handles VEC consecutive elements, so the block "
                            "count drops.")
    assert check.seen == [variant]
    [call] = result.calls
    assert (call.role, call.model, call.attempts, call.outcome) == ("coder", "fake-coder", 1, "ok")
    # The fake server counts a quarter token per character (see completion_body).
    [request] = llm_server.requests
    prompt_chars = sum(len(m["content"]) for m in request["messages"])
    assert call.prompt_tokens == prompt_chars // 4 > 500
    assert call.completion_tokens == len(reply_text()) // 4
    assert call.latency_s > 0
    no_secrets(result, llm_server)


def test_good_jinja_reply_gives_a_template_variant(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.text(reply_text(JINJA_CODE, JINJA_TOML, "jinja"))])
    result = make_coder(llm_server).propose(make_request(), "llm rewrite 1")
    assert result.variant is not None
    assert result.variant.filename == "axpy.cu.j2"
    assert set(result.variant.overlay["params"]) == {"BLOCK", "VEC", "UNROLL"}
    assert result.variant.overlay["params"]["UNROLL"] == {"default": True,
                                                          "values": [True, False]}


def test_no_code_block_then_good_feeds_the_error_back(llm_server: FakeLLMServer) -> None:
    prose = "I would vectorize the loads and unroll the loop."
    llm_server.script([Reply.text(prose), Reply.text(reply_text())])
    result = make_coder(llm_server).propose(make_request(), "v")
    assert result.variant is not None
    assert [c.outcome.split(":")[0] for c in result.calls] == ["refused", "ok"]
    assert "no code block" in result.calls[0].outcome
    second = llm_server.requests[1]["messages"]
    assert second[:2] == llm_server.requests[0]["messages"]
    assert second[2] == {"role": "assistant", "content": prose}
    assert second[3]["role"] == "user"
    assert "the reply has no code block" in second[3]["content"]
    assert "corrected full reply in the same format" in second[3]["content"]
    assert "This is attempt 2 of 3." in second[3]["content"]


def test_undeclared_jinja_parameter_is_refused_by_name(llm_server: FakeLLMServer) -> None:
    code = JINJA_CODE.replace("kVec = {{ VEC }}", "kVec = {{ VEC }} * {{ TILE }}")
    llm_server.script([Reply.text(reply_text(code, JINJA_TOML, "jinja")),
                       Reply.text(reply_text())])
    result = make_coder(llm_server).propose(make_request(), "v")
    assert result.variant is not None and result.variant.filename == "axpy.cu"
    assert "undeclared parameter(s): TILE" in result.calls[0].outcome
    assert "undeclared parameter(s): TILE" in user_messages(llm_server.requests[1])[-1]


def test_declared_but_unused_parameter_is_refused(llm_server: FakeLLMServer) -> None:
    toml = DEFINE_TOML.replace("[launch]", "UNROLL = { default = 1, values = [1, 2] }\n\n[launch]")
    llm_server.script([Reply.text(reply_text(toml=toml))] * 3)
    result = make_coder(llm_server).propose(make_request(), "v")
    assert result.variant is None
    assert "declared but unused: UNROLL" in result.error
    assert len(result.calls) == 3


def test_wrong_kernel_name_is_refused(llm_server: FakeLLMServer) -> None:
    code = DEFINE_CODE.replace("\naxpy(", "\nsaxpy(")
    llm_server.script([Reply.text(reply_text(code)), Reply.text(reply_text())])
    result = make_coder(llm_server).propose(make_request(), "v")
    assert result.variant is not None
    feedback = user_messages(llm_server.requests[1])[-1]
    assert "no __global__ function named axpy (__global__ functions found: saxpy)" in feedback


def test_bad_toml_is_refused_with_the_parser_message(llm_server: FakeLLMServer) -> None:
    toml = DEFINE_TOML.replace("values = [1, 2, 4] }", "values = [1, 2, 4 }")
    llm_server.script([Reply.text(reply_text(toml=toml)), Reply.text(reply_text())])
    result = make_coder(llm_server).propose(make_request(), "v")
    assert result.variant is not None
    feedback = user_messages(llm_server.requests[1])[-1]
    assert "the ```toml block does not parse" in feedback and "line 3" in feedback


def test_nvcc_undefined_identifier_is_explained(llm_server: FakeLLMServer) -> None:
    log = ('/tmp/v/axpy.cu(12): error: identifier "TILE" is undefined\n'
           '/tmp/v/axpy.cu(13): error: identifier "tile_count" is undefined\n'
           '2 errors detected in the compilation of "axpy.cu".')
    check = Checks(log, None)
    llm_server.script([Reply.text(reply_text()), Reply.text(reply_text(rationale="Fixed."))])
    result = make_coder(llm_server, check).propose(make_request(), "v")
    assert result.variant is not None and result.variant.note == "Fixed."
    assert len(check.seen) == 2
    assert result.calls[0].outcome.startswith("refused: the kernel did not pass the build check")
    feedback = user_messages(llm_server.requests[1])[-1]
    assert ("undeclared parameter TILE (declare it in [params] or define it in the code)"
            in feedback)
    assert "undeclared parameter tile_count" not in feedback  # only ALL-CAPS names are knobs
    assert 'identifier "tile_count" is undefined' in feedback  # the log itself follows


def test_all_attempts_bad_gives_no_variant(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.text("no code"), Reply.text(reply_text(lang="python"))])
    result = make_coder(llm_server, max_attempts=2).propose(make_request(), "v")
    assert result.variant is None
    assert result.error.startswith("no usable variant after 2 replies")
    assert "labeled 'python'" in result.error
    assert len(result.calls) == 2 == len(llm_server.requests)
    assert all(c.outcome.startswith("refused: ") for c in result.calls)


def test_rate_limit_is_retried_inside_one_call(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.rate_limited(retry_after=0), Reply.text(reply_text())])
    result = make_coder(llm_server).propose(make_request(), "v")
    assert result.variant is not None
    [call] = result.calls
    assert call.attempts == 2 and call.outcome == "ok"
    assert len(llm_server.requests) == 2


def test_slow_reply_past_the_timeout_ends_the_proposal(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.slow(5.0, Reply.text(reply_text()))])
    start = time.monotonic()
    result = make_coder(llm_server, timeout_s=0.3, max_retries=0).propose(make_request(), "v")
    assert time.monotonic() - start < 3.0
    assert result.variant is None
    assert result.error.startswith("LLM unavailable: ")
    assert "no answer within 0.3 s" in result.error
    [call] = result.calls
    assert call.outcome.startswith("unavailable: ") and call.attempts == 1
    assert (call.prompt_tokens, call.completion_tokens) == (0, 0)
    assert len(llm_server.requests) == 1
    no_secrets(result, llm_server)


def test_server_errors_after_retries_report_the_attempts(llm_server: FakeLLMServer) -> None:
    llm_server.default = Reply.server_error(503)
    result = make_coder(llm_server, max_retries=2).propose(make_request(), "v")
    assert result.error.startswith("LLM unavailable: ") and "HTTP 503" in result.error
    [call] = result.calls
    assert call.attempts == 3
    no_secrets(result, llm_server)


def test_empty_reply_counts_as_a_failed_attempt(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.text(""), Reply.text(reply_text())])
    result = make_coder(llm_server).propose(make_request(), "v")
    assert result.variant is not None
    assert result.calls[0].outcome == "bad reply: the reply is empty"
    assert "the reply was unusable: the reply is empty" in user_messages(
        llm_server.requests[1])[-1]


def test_an_unchanged_kernel_is_refused(llm_server: FakeLLMServer) -> None:
    current = Variant("retune 1", "axpy.cu", DEFINE_CODE,
                      tomllib.loads(reply_text().split("```toml\n")[1].split("```")[0]))
    current = Variant(current.name, current.filename, current.source,
                      {**current.overlay, "kernel": {"template_args": []},
                       "tune": {"restrictions": []}})
    llm_server.script([Reply.text(reply_text())] * 2)
    result = make_coder(llm_server, max_attempts=2).propose(make_request(current=current), "v")
    assert result.variant is None and "unchanged from the current code" in result.error


def test_a_repair_of_a_template_keeps_the_stem(llm_server: FakeLLMServer) -> None:
    failed = Variant("llm rewrite 2", "axpy.cu.j2", JINJA_CODE, origin="llm")
    llm_server.script([Reply.text(reply_text())])
    result = make_coder(llm_server).propose(
        make_request("repair", "out of bounds at shape odd", failed, ORIGINAL), "llm repair 3")
    assert result.variant is not None and result.variant.filename == "axpy.cu"


# --- the prompt -----------------------------------------------------------------------------

def test_prompt_has_the_five_parts_and_the_evidence() -> None:
    system, user = coder_messages(make_request())
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    headings = ["## 1. Current code", "## 2. Error diagnosis",
                "## 3. Compendium entries for the metrics involved", "## 4. Current profile",
                "## 5. Historical best with its profile", "## Guidance from the conductor",
                "## The user's spec"]
    positions = [text.index(h) for h in headings[:5]]
    assert positions == sorted(positions)
    assert all(h in text for h in headings)
    assert "## 2. Error diagnosis\nnone" in text
    assert "- dram-throughput: DRAM throughput (metric `dram__throughput`)" in text
    assert "global-load-sectors" in text
    assert "Classification: dram_bandwidth" in text
    assert "smsp__warps_issue_stalled_long_scoreboard = 14.25" in text
    assert "- [dram_bandwidth] Narrow loads: each thread loads 4 bytes" in text
    assert "- big: 41.23 us (noise 0.25 us)" in text and "- odd: 3.5 us" in text
    assert "Objective (geometric mean of the times): 12.02 us" in text
    assert "dram__throughput.avg.pct_of_peak_sustained_elapsed = 71.5" in text
    assert "- [dram_bandwidth] DRAM-bound at 72%: loads are 4 bytes wide" in text
    assert "- vectorize the loads with 16-byte accesses" in text
    assert ORIGINAL.strip() in text and 'name = "odd"' in text
    assert "Task: rewrite" in text
    for rule in ("exactly", "```toml", "[params]", "default", "values", "template_args",
                 "restrictions", "```jinja", "`axpy`"):
        assert rule in system["content"]


def test_repair_prompt_shows_the_diagnosis_and_the_best_code() -> None:
    failed = Variant("llm rewrite 2", "axpy.cu.j2", JINJA_CODE, {"params": {"VEC": {
        "default": 2, "values": [1, 2]}}}, origin="llm")
    request = make_request("repair", "verification failed at shape odd: 12 of 1001 wrong",
                           failed, ORIGINAL)
    text = coder_messages(request)[1]["content"]
    assert "Task: repair" in text
    assert "## 2. Error diagnosis\nverification failed at shape odd: 12 of 1001 wrong" in text
    assert "```jinja\n" + JINJA_CODE.rstrip() + "\n```" in text
    assert 'VEC = { default = 2, values = [1, 2] }' in text
    assert "Its code:\n```cuda\n" + ORIGINAL.rstrip() in text


def test_prompt_without_a_best_says_so() -> None:
    request = make_request()
    request = CoderRequest(**{**request.__dict__, "best": None, "compendium": (),
                              "guidance": ()})
    text = coder_messages(request)[1]["content"]
    assert "## 5. Historical best with its profile\nnone yet" in text
    assert "## 3. Compendium entries for the metrics involved\nnone" in text


def test_unknown_kind_is_a_caller_error() -> None:
    request = CoderRequest(**{**make_request().__dict__, "kind": "polish"})
    with pytest.raises(ValueError, match="'polish'"):
        coder_messages(request)


# --- parsing and static checks --------------------------------------------------------------

def test_parse_reply_splits_code_overlay_and_rationale() -> None:
    parsed = parse_reply(reply_text(), "axpy", spec=SPEC)
    assert parsed.code == DEFINE_CODE and not parsed.is_jinja
    assert parsed.rationale == RATIONALE
    assert parse_reply(reply_text(JINJA_CODE, JINJA_TOML, "jinja"), "axpy", spec=SPEC).is_jinja


TEMPLATE_CODE = """\
template <int VEC, int BLOCK>
__global__ void __launch_bounds__(BLOCK) axpy(float* y, const float* x, int n)
{
    const int i = (blockIdx.x * BLOCK + threadIdx.x) * VEC;
    for (int k = 0; k < VEC; ++k) if (i + k < n) y[i + k] = 2.0f * x[i + k];
}
"""


def test_template_args_are_kept() -> None:
    toml = DEFINE_TOML + '\n[kernel]\ntemplate_args = ["VEC", "BLOCK"]\n'
    parsed = parse_reply(reply_text(TEMPLATE_CODE, toml, "cpp"), "axpy", spec=SPEC)
    assert parsed.overlay["kernel"] == {"template_args": ["VEC", "BLOCK"]}


@pytest.mark.parametrize("text, message", [
    (reply_text() + "\n```cuda\n__global__ void other() {}\n```\n", "2 code blocks"),
    ("```cuda\n" + DEFINE_CODE + "```\nno toml", "no ```toml block"),
    (reply_text(toml=DEFINE_TOML + "\n[[args]]\nname = 'z'\n"), "it has [args]"),
    (reply_text(toml=DEFINE_TOML + '\n[kernel]\nflags = ["-O2"]\n'),
     "[kernel] may only set template_args; it sets 'flags'"),
    (reply_text(toml=DEFINE_TOML.replace("VEC = { default = 4, values = [1, 2, 4] }",
                                         "VEC = { default = 4 }")),
     "params.VEC has no 'values'"),
    (reply_text(toml=DEFINE_TOML.replace("VEC = { default = 4, values = [1, 2, 4] }",
                                         "VEC = 4")),
     "params.VEC must be a table"),
    (reply_text(toml=DEFINE_TOML.replace("default = 4, values = [1, 2, 4]",
                                         "default = 8, values = [1, 2, 4]")),
     "params.VEC: default 8 is not among values [1, 2, 4]"),
    (reply_text(toml=DEFINE_TOML.replace("default = 4, values = [1, 2, 4]",
                                         "default = 4, values = [1, 4, 4]")),
     "field 'params.VEC.values': expected a list of distinct candidate values"),
    (reply_text(toml="[params]\n"), "[params] is empty"),
    (reply_text(toml=DEFINE_TOML.replace('block = ["BLOCK"]\n', "")),
     "field 'launch.block': expected 1 to 3 expressions"),
    (reply_text(toml=DEFINE_TOML.replace("BLOCK * VEC", "BLOCK * M")),
     "[launch] uses M, which is neither a declared parameter nor a shape dim (dims: N)"),
    (reply_text(toml=DEFINE_TOML.split("[launch]")[0].replace(
        "BLOCK = { default = 256, values = [128, 256, 512] }\n", "")),
     "the spec's [launch] uses BLOCK, which your [params] does not declare"),
    (reply_text(DEFINE_CODE.replace("#ifndef VEC\n#define VEC 4\n#endif",
                                    "#define VEC 4")),
     "VEC is #defined in the code without an #ifndef VEC guard"),
    (reply_text(DEFINE_CODE.replace(", int n)", ")").replace("< n", "< 1000")),
     "axpy takes 2 argument(s) but the spec passes 3 (y, x, n)"),
    (reply_text(JINJA_CODE, JINJA_TOML, "cuda"), "label it ```jinja"),
    (reply_text(JINJA_CODE.replace("{% endif %}", ""), JINJA_TOML, "jinja"),
     "the jinja2 template does not parse"),
    (reply_text(TEMPLATE_CODE, DEFINE_TOML), "axpy is a C++ function template"),
    (reply_text(toml=DEFINE_TOML + '\n[kernel]\ntemplate_args = ["VEC"]\n'),
     "template_args is set but axpy is not a function template"),
    (reply_text(toml=DEFINE_TOML + '\n[tune]\nrestrictions = ["BLOCK * VEC <= K"]\n'),
     "restrictions[0] uses K"),
    (reply_text("// __global__ void axpy(float* y, const float* x, int n) {}\n"
                "__global__ void scale(float* y, const float* x, int n) "
                "{ y[0] = BLOCK * VEC; }\n"),
     "no __global__ function named axpy (__global__ functions found: scale)"),
])
def test_parse_reply_refusals_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ReplyError) as info:
        parse_reply(text, "axpy", spec=SPEC)
    assert message in str(info.value)


def test_jinja_names_set_inside_the_template_are_its_own() -> None:
    code = JINJA_CODE.replace("constexpr int kVec = {{ VEC }};",
                              "{% if UNROLL %}{% set width = VEC * 1 %}constexpr int kVec = "
                              "{{ width }};{% else %}constexpr int kVec = {{ VEC }};{% endif %}")
    assert parse_reply(reply_text(code, JINJA_TOML, "jinja"), "axpy", spec=SPEC).is_jinja


def test_flag_params_need_no_use_in_the_code() -> None:
    toml = DEFINE_TOML.replace(
        "[launch]", 'MAXREG = { default = 0, values = [0, 64], flag = "-maxrregcount={}" }\n\n'
        "[launch]")
    parsed = parse_reply(reply_text(toml=toml), "axpy", spec=SPEC)
    assert parsed.overlay["params"]["MAXREG"]["flag"] == "-maxrregcount={}"


def test_explain_check_error_only_maps_all_caps_names() -> None:
    log = 'a.cu(3): error: identifier "TILE_K" is undefined'
    assert explain_check_error(log, is_jinja=False).startswith(
        "undeclared parameter TILE_K (declare it in [params] or define it in the code)\n")
    assert "write {{ TILE_K }}" in explain_check_error(log, is_jinja=True)
    other = 'a.cu(3): error: identifier "tile" is undefined'
    assert explain_check_error(other, is_jinja=False) == other


@pytest.mark.parametrize("current, jinja, expected", [
    ("silu_and_mul.cu", False, "silu_and_mul.cu"), ("silu_and_mul.cu", True, "silu_and_mul.cu.j2"),
    ("rms.cu.j2", False, "rms.cu"), ("rms.cu.j2", True, "rms.cu.j2"),
])
def test_variant_filename(current: str, jinja: bool, expected: str) -> None:
    assert variant_filename(current, jinja) == expected


def test_overlay_toml_round_trips() -> None:
    overlay = {"params": {"VEC": {"default": 4, "values": [1, 2, 4]},
                          "FAST": {"default": True, "values": [True, False],
                                   "flag": "--use_fast_math"},
                          "MODE": {"default": "a\"b", "values": ["a\"b", "c"]}},
               "launch": {"grid": ["ceil_div(N, 256)"], "block": ["256"], "shared_mem": "0"},
               "kernel": {"template_args": []}, "tune": {"restrictions": ["VEC <= 4"]}}
    assert tomllib.loads(overlay_toml(overlay)) == overlay
    assert overlay_toml({}) == ""


# --- through the real build (nvcc) ----------------------------------------------------------

def nvcc_check(tmp_path: Path) -> Callable[[Variant], str | None]:
    """The loop's check, built from the same pieces: the variant's spec, compiled at defaults."""
    from pragma_ncu.backends.cuda.build import build
    from pragma_ncu.build import task
    from pragma_ncu.build.compile import BuildCache
    from pragma_ncu.infra.settings import load_settings
    from pragma_ncu.infra.toolchain import find_nvcc

    spec_path = tmp_path / "axpy.toml"
    spec_path.write_text(SPEC_TEXT)
    nvcc = find_nvcc(load_settings())

    def check(variant: Variant) -> str | None:
        try:
            spec = variant_spec(SPEC, variant, spec_path, tmp_path / "variants")
            req = task.build_request(spec, "sm_80", {}, render_dir=tmp_path / "rendered")
        except PragmaError as exc:
            return str(exc)
        built = build(req, nvcc, BuildCache(tmp_path / "build"))
        return None if built.ok else built.log or built.status

    return check


@pytest.mark.toolchain
def test_accepted_replies_build_with_nvcc(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    template_toml = DEFINE_TOML + '\n[kernel]\ntemplate_args = ["VEC", "BLOCK"]\n'
    undefined = DEFINE_CODE.replace("* VEC;", "* VEC * TILE;")
    llm_server.script([Reply.text(reply_text(JINJA_CODE, JINJA_TOML, "jinja")),
                       Reply.text(reply_text(TEMPLATE_CODE, template_toml, "cpp")),
                       Reply.text(reply_text(undefined)), Reply.text(reply_text())])
    coder = LLMCoder(make_coder(llm_server).client, nvcc_check(tmp_path))
    for filename in ("axpy.cu.j2", "axpy.cu"):
        result = coder.propose(make_request(), "v")
        assert result.variant is not None, result.error
        assert result.variant.filename == filename
    result = coder.propose(make_request(), "v")
    assert result.variant is not None and len(result.calls) == 2
    feedback = user_messages(llm_server.requests[-1])[-1]
    assert "undeclared parameter TILE (declare it in [params]" in feedback
    assert 'error: identifier "TILE" is undefined' in feedback
