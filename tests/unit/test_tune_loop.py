"""The tune loop end to end without a GPU: recorded H200 searches and ncu profiles played back by
`SimBackend` (simulated clock), the coder LLM played by the scripted `FakeLLMServer`, a real
run store on disk. Each test drives `loop.run` and reads what it left: the State, the store's
rounds, candidates and decisions, the LLM requests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pragma_ncu import backends, loop
from pragma_ncu import loop as session
from pragma_ncu.backends.base import CompiledSession, Target
from pragma_ncu.coder.reply import parse_reply
from pragma_ncu.conductor.situation import Policy
from pragma_ncu.diagnose.engine import Rules
from pragma_ncu.diagnose.findings import Diagnosis, Roofline
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.store import Store
from pragma_ncu.measure.ceilings import ComputeCeiling, cache_compute
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.measure.roofline import ComputeRate
from pragma_ncu.measure.traces import load_trace
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.report.trace import render_markdown
from pragma_ncu.search.evaluator import Phases
from pragma_ncu.search.results import Evaluation
from pragma_ncu.spec.file import load_spec
from pragma_ncu.targets.rules import SpecRules
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.fakes.tune import (
    failing_at,
    load_profile,
    projected,
    scaled,
    text_hash,
    with_status,
)
from tests.fakes.tuner import H200_LIMITS
from tests.tune_rig import TEMPLATED, Rig, make_rig, resumable_rig, silu, templated_rig

ROOT = Path(__file__).resolve().parents[2]
NAIVE = ROOT / "examples" / "silu_and_mul.toml"
REWRITE = json.loads((ROOT / "tests/fixtures/llm/silu_rewrite.json").read_text())[
    "replies"][0]["content"]


def rewrite_code(reply: str = REWRITE) -> str:
    """The code block of a coder reply: the text of the variant file the loop writes."""
    return parse_reply(reply, "silu_and_mul").code


def naive_recording() -> list[Evaluation]:
    """The naive kernel behaves like the template at VEC=1, ROWS=1: its BLOCK knob only."""
    return projected(silu(), {"VEC": 1, "ROWS": 1})


def rewrite_recording() -> list[Evaluation]:
    """The reply's kernel (knobs BLOCK, VEC) behaves like the template at ROWS=1."""
    return projected(silu(), {"ROWS": 1})


def naive_rig(tmp: Path, server: FakeLLMServer | None, rewrite: list[Evaluation] | None = None,
              **kw: Any) -> Rig:
    """The naive silu (knob BLOCK), and the recorded reply's kernel when `rewrite` is given."""
    source = NAIVE.with_name("silu_and_mul.cu").read_text()
    recordings = {source: naive_recording()}
    profiles = {source: "silu_and_mul"}
    if rewrite is not None:
        recordings[rewrite_code()] = rewrite
        profiles[rewrite_code()] = "bandwidth_ok"
    return make_rig(tmp, NAIVE, recordings, profiles, server=server,
                    policy=Policy(llm=server is not None), **kw)


Trace = list[tuple[int, str, str, bool, dict[str, Any]]]


def trace(records: list[RoundRecord]) -> Trace:
    """What two runs must agree on: each round's action, decision, acceptance, best point."""
    return [(r.round, r.action, r.decision.action, r.decision.accepted,
             dict(r.best_after.params) if r.best_after else {}) for r in records]


def user_messages(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return "\n".join(m["content"] for m in messages if m["role"] == "user")


# --- A: no LLM, the templated silu ---------------------------------------------------------

def test_templated_silu_without_llm_tunes_to_a_recorded_speedup(tmp_path: Path) -> None:
    rig = templated_rig(tmp_path)
    st = loop.run(rig.ctx)

    assert [r.action for r in st.records] == ["baseline", "tune"]
    assert [r.decision.action for r in st.records] == ["tune", "stop"]
    tuned = st.records[1]
    assert tuned.decision.accepted and tuned.best_after is tuned.candidate
    summary = session.summary(rig.ctx, st)
    assert summary["speedup"] > 1.5  # recorded: 133.8 µs (BLOCK=256) -> 75.7 µs
    assert summary["best_params"]["VEC"] == 8 and summary["best_round"] == 1
    # the baseline's decision rests on the profile: compendium entries, bullets with values
    for record in st.records:
        d = record.decision
        assert d.citations, f"round {record.round}: no compendium entry cited"
        assert all(c.entry and c.meaning for c in d.citations)
        assert all(b.values for b in d.analysis if "[memory_latency" in b.text)
        assert any(b.cites for b in d.analysis)
    assert "copy ceiling" in st.records[1].decision.reason
    # the store: rounds done, one candidate row per evaluated point, decisions round-trip
    assert rig.store.rounds(rig.run_id) == [(0, "done"), (1, "done")]
    assert len(rig.store.candidates(rig.run_id, 0)) == 1
    rows = rig.store.candidates(rig.run_id, 1)
    search = tuned.search
    assert len(rows) == search["evaluated"] + sum(search["pruned"].values()) == 72
    assert len({json.dumps(r.params, sort_keys=True) for r in rows}) == len(rows)
    assert sum(r.verified for r in rows) == search["verified"]
    stored = rig.store.decisions(rig.run_id)
    assert [(n, action) for n, action, _ in stored] == [(0, "tune"), (1, "stop")]
    for (_, _, data), record in zip(stored, st.records, strict=True):
        again = RoundRecord.from_json(data)
        assert again == record
        assert json.loads(json.dumps(again.to_json())) == data


# --- B: the scripted LLM, the naive silu ---------------------------------------------------

UNUSED_KNOB = REWRITE.replace("VEC = { default = 8, values = [1, 2, 4, 8] }",
                              "VEC = { default = 8, values = [1, 2, 4, 8] }\n"
                              "UNROLL = { default = 1, values = [1, 2, 4] }")


def test_naive_silu_rewrite_through_refusals_becomes_the_best(
        tmp_path: Path, llm_server: FakeLLMServer) -> None:
    assert UNUSED_KNOB != REWRITE
    llm_server.script([Reply.text("Vectorize the loads and stores; use 16-byte accesses."),
                       Reply.text(UNUSED_KNOB), Reply.text(REWRITE)])
    rig = naive_rig(tmp_path, llm_server, rewrite_recording())
    st = loop.run(rig.ctx)

    # the source moves the profile calls for come first (cheap), then the LLM's rewrite
    assert [r.action for r in st.records] == ["baseline", "tune", "moves", "rewrite"]
    assert [r.decision.action for r in st.records] == ["tune", "moves", "rewrite", "stop"]
    assert st.records[1].space == {"BLOCK": [64, 128, 256, 512, 1024]}
    assert st.records[2].decision.route == "designer" and st.records[2].decision.guidance
    assert st.records[2].moves and not st.records[2].decision.accepted
    rewrite = st.records[3]
    assert rewrite.variant["source"] == rewrite_code() and rewrite.variant["origin"] == "llm"
    assert rewrite.space == {"BLOCK": [64, 128, 256, 512, 1024], "VEC": [1, 2, 4, 8]}
    assert rewrite.search["evaluated"] == 20 and rewrite.search["verified"] == 20
    # verified at every shape, the odd one included, and accepted side by side
    assert rewrite.candidate is not None and rewrite.candidate.verified
    assert rewrite.decision.accepted and rewrite.best_after == rewrite.candidate
    odd = [m["shape"] for c in rig.store.candidates(rig.run_id, 3) for m in c.measurements]
    assert odd.count("odd") == 20
    assert st.best_variant.source == rewrite_code() and st.best.params["VEC"] == 8
    baseline = st.records[0].best_after
    assert baseline is not None and baseline.objective_us and st.best.objective_us
    assert st.best.objective_us < 0.7 * baseline.objective_us
    # three coder calls, the refusals fed back in order
    outcomes = [c.outcome for c in rewrite.llm_calls]
    assert len(outcomes) == 3 and outcomes[2] == "ok", outcomes
    assert outcomes[0].startswith("refused: the reply has no code block")
    assert outcomes[1].startswith("refused: declared but unused: UNROLL")
    assert len(llm_server.requests) == 3
    assert "the reply has no code block" in user_messages(llm_server.requests[1])
    assert "declared but unused: UNROLL" in user_messages(llm_server.requests[2])
    assert "declared but unused" not in user_messages(llm_server.requests[1])
    # the request is PRAGMA's: the naive code, its profile and the conductor's guidance
    first = user_messages(llm_server.requests[0])
    assert "blockDim.x" in first and "memory_latency" in first
    assert all(g in first for g in st.records[2].decision.guidance)
    # and it lists the moves tried, with what they measured
    assert "Source moves already tried" in first
    assert all(t.move in first for t in st.records[2].moves)
    assert session.summary(rig.ctx, st)["llm_tokens"] > 0


# --- C: rate limits and timeouts ------------------------------------------------------------

def test_rate_limit_is_retried_by_the_client(tmp_path: Path,
                                             llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.rate_limited(0), Reply.text(REWRITE)])
    rig = naive_rig(tmp_path, llm_server, rewrite_recording(),
                    llm={"max_retries": 2, "timeout_s": 2.0})
    st = loop.run(rig.ctx)

    rewrite = st.records[3]
    assert len(rewrite.llm_calls) == 1
    call = rewrite.llm_calls[0]
    assert (call.outcome, call.attempts) == ("ok", 2)
    assert len(llm_server.requests) == 2 and rewrite.coder_error == ""
    assert st.best_variant.source == rewrite_code()


@pytest.mark.parametrize("retries", [0, 1])
def test_timeout_fails_the_round_and_the_loop_goes_on(tmp_path: Path, retries: int,
                                                      llm_server: FakeLLMServer) -> None:
    slow = Reply.slow(3.0, Reply.text(REWRITE))
    llm_server.script([slow] * (retries + 1) + [Reply.text(REWRITE)])
    rig = naive_rig(tmp_path, llm_server, rewrite_recording(),
                    llm={"max_retries": retries, "timeout_s": 0.25})
    st = loop.run(rig.ctx)

    assert [r.action for r in st.records] == ["baseline", "tune", "moves", "rewrite", "rewrite"]
    failed = st.records[3]
    assert failed.candidate is None and failed.variant == {"name": "(none)"}
    assert "unavailable" in failed.coder_error and "no answer within" in failed.coder_error
    assert [(c.outcome.split(":")[0], c.attempts) for c in failed.llm_calls] == [
        ("unavailable", retries + 1)]
    assert llm_server.base_url not in failed.coder_error  # the endpoint stays out of traces
    assert failed.best_after == failed.best_before  # nothing changed hands
    assert (failed.decision.action, failed.decision.route) == ("rewrite", "designer")
    assert rig.store.rounds(rig.run_id)[3] == (3, "done")
    # the next rewrite got its answer and the run ended with a stop
    assert st.records[4].decision.accepted
    assert st.records[-1].decision.action == "stop"
    assert st.best_variant.source == rewrite_code()


def test_an_unreachable_endpoint_is_said_once_and_the_run_goes_on_without_it(
        tmp_path: Path) -> None:
    """Issue 35: every remaining round spent 14 s retrying a port where nothing listens and
    said only "the coder produced no usable template"; now the first failure says so (the
    URL and the error), the LLM is dropped for the rest of the run, and the summary and the
    store keep the warning."""
    server = FakeLLMServer().start()
    url = server.base_url
    server.stop()  # nothing listens there now
    start = time.monotonic()
    rig = naive_rig(tmp_path, cast(FakeLLMServer, SimpleNamespace(base_url=url)),
                    llm={"max_retries": 3, "backoff_s": 2.0})
    st = loop.run(rig.ctx)

    assert time.monotonic() - start < 30  # no 2 + 4 + 8 s of retries, round after round
    said = [n for n in rig.notices if "unreachable" in n]
    assert said == [f"the LLM endpoint {url} is unreachable (connection failed: [Errno 111] "
                    "Connection refused): from round 3 on, the run goes on without the LLM"]
    calls = [c for r in st.records for c in r.llm_calls]
    assert len(calls) == 1 and calls[0].attempts == 1
    dropped = [r for r in st.records if r.llm_dropped]
    assert [r.round for r in dropped] == [3] and dropped[0].llm_dropped == said[0]
    assert st.records[-1].decision.action == "stop"
    assert all(r.action != "rewrite" for r in st.records[4:])
    summary = session.summary(rig.ctx, st)
    assert summary["warnings"] == said
    stored = [RoundRecord.from_json(data) for _, _, data in rig.store.decisions(rig.run_id)]
    assert [r.llm_dropped for r in stored] == [r.llm_dropped for r in st.records]


# --- D: a wrong answer goes back to the coder ----------------------------------------------

def test_wrong_answer_candidate_is_routed_back_to_the_coder(
        tmp_path: Path, llm_server: FakeLLMServer) -> None:
    fixed = REWRITE.replace("// silu_and_mul rewritten", "// silu_and_mul (repaired) rewritten")
    llm_server.script([Reply.text(REWRITE), Reply.text(fixed)])
    rig = naive_rig(tmp_path, llm_server, with_status(rewrite_recording(), Status.WRONG_ANSWER))
    rig.backend.recordings[text_hash(rewrite_code(fixed))] = rewrite_recording()
    rig.backend.profiles[text_hash(rewrite_code(fixed))] = load_profile("bandwidth_ok")
    st = loop.run(rig.ctx)

    assert [r.action for r in st.records] == ["baseline", "tune", "moves", "rewrite", "repair"]
    wrong = st.records[3]
    assert wrong.candidate is None and not wrong.decision.accepted
    assert wrong.search["verified"] == 0 and wrong.search["evaluated"] == 20
    assert wrong.best_after == wrong.best_before == st.records[2].best_after
    d = wrong.decision
    assert (d.action, d.route) == ("repair", "coder")
    assert len(d.guidance) == 1 and "wrong_answer" in d.guidance[0]
    assert "planted wrong_answer" in d.guidance[0]
    assert any("no verified candidate" in b.text for b in d.analysis)
    # the repair request carries the failure and the failed code; the fix becomes the best
    repair = user_messages(llm_server.requests[1])
    assert "planted wrong_answer" in repair and "rewritten as a template" in repair
    assert st.records[4].decision.accepted
    assert st.best_variant.source == rewrite_code(fixed)


# --- F (through the loop): verified at the tuned shapes, wrong at the check shape ----------

FAST: dict[str, Any] = {"BLOCK": 128, "VEC": 2, "ROWS": 4}  # recorded 97.8 µs; planted 0.6x


def flat(evaluations: list[Evaluation], gain: float) -> list[Evaluation]:
    """Every point timed as the defaults are, but FAST planted `gain` (0.02: 2%) faster: a
    space whose winner a noisy host cannot tell from the defaults."""
    default = next(e for e in evaluations if e.point == {"BLOCK": 256, "VEC": 1, "ROWS": 1})
    base = {m.shape: m.timing.median_us for m in default.measurements if m.timing}

    def at(m: Measurement, us: float) -> Measurement:
        if m.timing is None:
            return m
        return replace(m, timing=replace(m.timing, median_us=us, mean_us=us, min_us=us,
                                         max_us=us, p10_us=us, p90_us=us))
    return [replace(e, measurements=tuple(
        at(m, base[m.shape] * ((1 - gain) if e.point == FAST else 1.0))
        for m in e.measurements)) for e in evaluations]


def test_a_host_too_noisy_to_decide_keeps_the_best_and_says_so(tmp_path: Path) -> None:
    """A point 10% better than the defaults, every timing jittered by up to 60%: the
    side-by-side re-test grows from 2 to 8 rounds, still cannot tell, and the run keeps the
    baseline and says why, in the round's decision, the stop reason, the summary and the
    trace (the simulation's seed 1 is one where the candidate's median came out faster)."""
    source = TEMPLATED.with_name("silu_and_mul.cu").read_text()
    rig = make_rig(tmp_path, TEMPLATED, {source: flat(silu(), 0.1)},
                   {source: "silu_and_mul"}, policy=Policy(max_rounds=1, target_fraction=5.0))
    rig.backend.jitter_pct, rig.backend.seed = 60.0, 1
    st = loop.run(rig.ctx)

    tuned = st.records[1]
    d = tuned.decision
    assert d.outcome == "undecided" and not d.accepted
    assert st.best is st.records[0].best_after  # the baseline stays the best
    assert d.acceptance.startswith("too noisy to decide") and "8 rounds" in d.acceptance
    assert d.noise_pct is not None and f"noise {d.noise_pct:.0f}%" in d.acceptance
    assert d.speedup_interval is not None and d.speedup_interval[0] < 1.01 < d.speedup_interval[1]
    assert d.reason.startswith("round 1 was too noisy to decide") and "round budget" in d.reason
    assert any(n.startswith("undecided after 2 re-test rounds") for n in rig.notices)
    summary = session.summary(rig.ctx, st)
    assert summary["undecided_rounds"] == [1] and summary["speedup"] == 1.0
    assert summary["too_noisy"] == f"round 1 was {d.acceptance}"
    rig.store.set_run_status(rig.run_id, "done", summary)
    md = " ".join(render_markdown(load_trace(rig.store, rig.run_id)).split())  # (prose wraps)
    assert f"- **undecided:** round 1 was {d.acceptance}" in md
    assert "**undecided (too noisy)**" in md


@pytest.mark.parametrize("broken", [False, True], ids=["control", "fails-at-odd"])
def test_candidate_wrong_at_the_check_shape_is_never_the_best(tmp_path: Path,
                                                              broken: bool) -> None:
    recording = scaled(silu(), FAST, 0.6)
    if broken:
        recording = failing_at(recording, FAST, "odd")
    source = TEMPLATED.with_name("silu_and_mul.cu").read_text()
    rig = make_rig(tmp_path, TEMPLATED, {source: recording}, {source: "silu_and_mul"})
    st = loop.run(rig.ctx)

    tuned = st.records[1]
    assert tuned.decision.accepted
    if not broken:  # the control: the planted point is by far the fastest, and wins
        assert st.best.params == FAST
        return
    assert st.best.params != FAST and all(
        r.best_after is None or r.best_after.params != FAST for r in st.records)
    row = next(c for c in rig.store.candidates(rig.run_id, 1) if c.params == FAST)
    assert row.status == "wrong_answer" and not row.verified
    assert tuned.search["failed"] == {"wrong_answer": 1}


# --- E: kill and resume --------------------------------------------------------------------

SCRIPT = """\
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {root!r})
from pragma_ncu import loop
from tests.tune_rig import resumable_rig

rig = resumable_rig(Path({tmp!r}), {run_id!r})
store = rig.store
kill_round, kill_rows = {kill_round!r}, {kill_rows!r}
if kill_rows is None:  # right after the round is stored
    close_round = store.close_round
    def closing(run_id, n, action, record):
        close_round(run_id, n, action, record)
        if n == kill_round:
            os.kill(os.getpid(), signal.SIGKILL)
    store.close_round = closing
else:  # in the middle of the round (begun, not closed): after its kill_rows-th candidate row
    add_candidate = store.add_candidate
    seen = []
    def adding(run_id, n, *args, **kw):
        out = add_candidate(run_id, n, *args, **kw)
        seen.append(n)
        if seen.count(kill_round) == kill_rows:
            os.kill(os.getpid(), signal.SIGKILL)
        return out
    store.add_candidate = adding
loop.run(rig.ctx)
print("finished without being killed")
"""
def _killed_run(tmp: Path, kill_round: int, kill_rows: int | None) -> str:
    """Start the run in a child that SIGKILLs itself at the given point; its run id."""
    with Store.open(tmp / "runs.sqlite") as store:
        run_id = store.create_run("silu_and_mul", str(TEMPLATED), {}, "simulated H200")
    script = tmp / "killed.py"
    script.write_text(SCRIPT.format(root=str(ROOT), tmp=str(tmp), run_id=run_id,
                                    kill_round=kill_round, kill_rows=kill_rows))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    return run_id


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Trace, int]:
    """The same run, never interrupted: its trace and its number of round-2 candidate rows."""
    rig = resumable_rig(tmp_path_factory.mktemp("whole"))
    st = loop.run(rig.ctx)
    return trace(st.records), len(rig.store.candidates(rig.run_id, 2))


@pytest.mark.parametrize(("kill_round", "kill_rows"), [(1, None), (2, 3), (0, 1)],
                         ids=["after-round-1", "inside-round-2", "inside-baseline"])
def test_killed_run_resumes_to_the_same_result(tmp_path: Path, kill_round: int,
                                               kill_rows: int | None,
                                               uninterrupted: tuple[Trace, int]) -> None:
    expected, round2_rows = uninterrupted
    # the run: search (accepted), a retune of VEC beyond 8 whose winner is the same point as
    # the best (within noise: not accepted), then stop; the kills land before its end
    assert [(a, d, ok) for _, a, d, ok, _ in expected] == [
        ("baseline", "tune", False), ("tune", "retune", True), ("retune", "stop", False)]
    run_id = _killed_run(tmp_path, kill_round, kill_rows)

    rig = resumable_rig(tmp_path, run_id)
    done = [(n, "done") for n in range(kill_round if kill_rows else kill_round + 1)]
    if kill_rows:  # begun, not closed: its rows so far are in the store
        assert rig.store.rounds(run_id) == [*done, (kill_round, "running")]
        assert len(rig.store.candidates(run_id, kill_round)) == kill_rows
    else:
        assert rig.store.rounds(run_id) == done
    state = session.load_state(rig.ctx)
    assert rig.store.rounds(run_id) == done  # the interrupted round was discarded
    if kill_rows:
        assert rig.store.candidates(run_id, kill_round) == []
    if done:
        assert state is not None and len(state.records) == len(done)
        assert state.diagnosis is not None  # re-read from the best's stored profile
    else:
        assert state is None  # nothing finished: the run starts over with its baseline

    st = loop.run(rig.ctx, state)
    assert trace(st.records) == expected
    assert rig.store.rounds(run_id) == [(n, "done") for n in range(len(expected))]
    assert [n for n, _, _ in rig.store.decisions(run_id)] == list(range(len(expected)))
    assert len(rig.store.candidates(run_id, 0)) == 1
    assert len(rig.store.candidates(run_id, 2)) == round2_rows  # nothing twice


# --- diagnosis by the recorded collector, with the session's ceilings ----------------------

@dataclass
class Probe(Target):
    """A target whose one collector's rules record what they were given."""

    name: str = "probe"
    rules: SpecRules = SpecRules("probe", (".probe",))
    collectors: tuple[str, ...] = ("probe",)
    seen: list[dict[str, Any]] = field(default_factory=list)

    def open(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the loop's session is the test's")

    def diagnosis(self) -> Rules:
        def rules(kernel: KernelProfile, knowledge: Any, ceiling_gbps: float | None = None,
                  source_file: str | None = None, resources: dict[str, float] | None = None,
                  compute: dict[str, float] | None = None) -> Diagnosis:
            self.seen.append({"ceiling_gbps": ceiling_gbps, "compute": compute})
            return Diagnosis(kernel.name, "probed", Roofline(None, None, None, None, None, "",
                                                             None, "", None), (), (), (), ())
        return rules


def test_the_loop_diagnoses_by_the_recorded_collector_with_the_ceilings(
        tmp_path: Path) -> None:
    """The profiles are ncu's by their metric names, but the session records another
    collector: its rules diagnose them, given the copy and the compute ceilings."""
    probe = Probe()
    backends.register(probe)
    try:
        rig = templated_rig(tmp_path)
        rig.backend.collector = "probe"
        rig.backend.compute_ceilings = {"fp32_fma": 6.0e13}
        st = loop.run(rig.ctx)
    finally:
        backends.unregister(probe.name)
    assert st.diagnosis is not None and st.diagnosis.classification == "probed"
    assert probe.seen and all(s == {"ceiling_gbps": rig.backend.ceiling_gbps,
                                    "compute": {"fp32_fma": 6.0e13}} for s in probe.seen)


def test_a_session_finds_the_compute_ceilings_cached_for_its_device(tmp_path: Path) -> None:
    """Without FLOPs in the spec nothing is measured, but ceilings measured on this device
    before still reach diagnosis; none for another device or driver."""
    settings = replace(load_settings(), cache_dir=tmp_path)
    ceiling = ComputeCeiling({"fp32_fma": 6.0e13}, {}, "H200", "2026-11-26 10:00:00")
    cache_compute(tmp_path / "compute_ceilings.json", "H200|570", ceiling)
    session = CompiledSession(load_spec(TEMPLATED), settings, None, None, Phases(),  # type: ignore[arg-type]
                              H200_LIMITS)
    assert session.known_compute("H200|570") == {"fp32_fma": 6.0e13}
    assert session.known_compute("H200|580") is None
    session.compute = ComputeRate("fp32", {"fp32_fma": 5.0e13})  # measured for the FLOPs
    assert session.known_compute("H200|580") == {"fp32_fma": 5.0e13}
