"""The acceptance rule under noise (`search.compare`): decided from the repeated timings of the
interleaved re-test, more rounds while undecided (`search.retest.settle`), and a verdict too
noisy to decide said as such by the conductor, the run's summary and the trace."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import pytest

from pragma_ncu.build.compile import BuildResult
from pragma_ncu.conductor.accept import UNDECIDED, accept
from pragma_ncu.conductor.rules import decide
from pragma_ncu.conductor.situation import Policy, Situation
from pragma_ncu.infra.store import RunRow
from pragma_ncu.measure.measurement import Measurement
from pragma_ncu.measure.records import Decision, KernelState, RoundRecord
from pragma_ncu.measure.traces import Trace
from pragma_ncu.report.trace import render_html, render_markdown, trace_json
from pragma_ncu.report.tune import rounds_table, summary_lines
from pragma_ncu.search.compare import MARGIN, compare
from pragma_ncu.search.results import FASTER, NOT_FASTER
from pragma_ncu.search.results import UNDECIDED as OPEN
from pragma_ncu.search.retest import MORE_ROUNDS, Entrant, Rounds, decide_all, settle
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import Shape
from tests.fakes.timings import Noise, measurement, retest, samples

# A busy host, as the issue saw it: a third of the calls preempted for up to 4 ms, whole rounds
# moved by 10%, and a 30% spread besides.
BUSY = Noise(spread=0.30, round_sigma=0.10, preempted=0.3, stall_us=4000.0)


def _pair(inc_us: float, cand_us: float, noise: Noise, seed: int = 0, **kw: object):  # type: ignore[no-untyped-def]
    inc = retest({"s": inc_us}, noise, seed=2 * seed, incumbent=True, **kw)  # type: ignore[arg-type]
    cand = retest({"s": cand_us}, noise, seed=2 * seed + 1, **kw)  # type: ignore[arg-type]
    return inc, cand


# --- the rule on synthetic samples ----------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_a_clear_win_under_heavy_noise_is_accepted(seed: int) -> None:
    """8.5x faster at the noise the issue measured (89%; here more): accepted, not 'within the
    noise' as the old rule had it; and a 2x win as well."""
    inc, cand = _pair(400.0, 47.0, BUSY, seed)
    assert inc.shapes[0].noise_pct > 89
    found = compare(inc, cand)
    assert found.outcome == FASTER, found.text
    assert found.low is not None and found.low > 2.0
    inc, cand = _pair(400.0, 200.0, BUSY, seed + 10, rounds=6)
    assert compare(inc, cand).outcome == FASTER


@pytest.mark.parametrize("seed", range(5))
def test_a_one_percent_gain_under_ten_percent_noise_is_not_accepted(seed: int) -> None:
    inc, cand = _pair(100.0, 99.0, Noise(spread=0.10, round_sigma=0.02), seed)
    assert compare(inc, cand).outcome != FASTER


@pytest.mark.parametrize("seed", range(5))
def test_identical_kernels_are_not_accepted(seed: int) -> None:
    quiet = Noise(spread=0.02, round_sigma=0.001)
    inc, cand = _pair(100.0, 100.0, quiet, seed, rounds=6)
    found = compare(inc, cand)
    assert found.outcome == NOT_FASTER, found.text  # quiet: the interval rules out 1%
    assert "not faster by the 1% margin" in found.text
    inc, cand = _pair(100.0, 100.0, Noise(spread=0.10, round_sigma=0.02), seed)
    assert compare(inc, cand).outcome != FASTER


@pytest.mark.parametrize("seed", range(5))
def test_a_gain_of_the_margins_size_measured_closely_is_decided_not_too_noisy(seed: int) -> None:
    """A 1% gain on a quiet GPU: an interval far narrower than the margin that straddles it
    (seen on an H100: "too noisy to decide: 1.01x (interval 1.01-1.01x), noise 0%"). More
    rounds cannot make it worth taking: not faster, and never called noise."""
    quiet = Noise(spread=0.001, round_sigma=0.0005)
    inc, cand = _pair(100.0, 99.0, quiet, seed, rounds=6)
    found = compare(inc, cand)
    assert found.low is not None and found.high is not None
    assert found.high / found.low - 1 < MARGIN
    assert found.outcome == NOT_FASTER, found.text
    assert "too noisy" not in found.text


def test_a_hopeless_spread_is_undecided_and_says_so() -> None:
    hopeless = Noise(spread=1.0, round_sigma=0.8, preempted=0.5, stall_us=2000.0)
    inc, cand = _pair(100.0, 80.0, hopeless, 4)
    found = compare(inc, cand)
    assert found.outcome == OPEN
    assert found.text.startswith("too noisy to decide: ")
    assert f"noise {found.noise_pct:.0f}%" in found.text and "quieter machine" in found.text
    assert found.low is not None and found.high is not None and found.low < 0.99 < found.high


def test_over_random_truths_no_gain_is_accepted_and_clear_gains_are() -> None:
    """Planted ratios, spreads, round drifts, shapes and sample counts: a candidate whose true
    gain is below the margin is never accepted, and one 10% faster or more at a spread of at
    most 10% always is."""
    rng = random.Random(3)
    seen = {"no gain": 0, "gain": 0}
    for i in range(150):
        ratio = rng.uniform(0.6, 1.3)
        noise = Noise(spread=rng.uniform(0.005, 0.3), round_sigma=rng.uniform(0.0, 0.03))
        times = {f"s{j}": rng.uniform(5, 2000) for j in range(rng.randint(1, 3))}
        reps = rng.randint(30, 300)
        inc = retest(times, noise, seed=2 * i, incumbent=True, reps=reps)
        cand = retest({k: v * ratio for k, v in times.items()}, noise, seed=2 * i + 1,
                      reps=reps)
        got = compare(inc, cand).outcome
        if ratio >= 1 - MARGIN:
            assert got != FASTER, (ratio, noise, times)
            seen["no gain"] += 1
        elif ratio <= 0.9 and noise.spread <= 0.1:
            assert got == FASTER, (ratio, noise, times)
            seen["gain"] += 1
    assert seen["no gain"] > 50 and seen["gain"] > 10  # both sides were exercised


def test_without_samples_the_rounds_alone_decide() -> None:
    """Recordings keep no samples: the rounds' paired medians give the interval, and one round
    gives none."""
    inc, cand = _pair(100.0, 90.0, Noise(spread=0.02, round_sigma=0.005), keep=False)
    found = compare(inc, cand)
    assert found.outcome == FASTER and found.samples == 0 and found.rounds == 3
    inc, cand = _pair(100.0, 50.0, Noise(spread=0.02), keep=False, rounds=1)
    alone = compare(inc, cand)
    assert alone.outcome == OPEN and alone.low is None and "too few timings" in alone.text


def test_rounds_that_disagree_widen_the_interval_past_the_launches() -> None:
    """Each round alone is precise, but they disagree by far more: the per-round interval
    governs, and the gain is not taken."""
    inc, cand = _pair(100.0, 97.0, Noise(spread=0.01, round_sigma=0.08), 2)
    found = compare(inc, cand)
    assert found.outcome == OPEN, found.text
    assert found.high is not None and found.high / found.low > 1.1  # type: ignore[operator]


def test_every_shape_counts_in_the_general_verdict() -> None:
    """Faster at one shape and as much slower at another: not faster overall, and the per-shape
    verdicts say which shape gained."""
    quiet = Noise(spread=0.02, round_sigma=0.002)
    inc = retest({"a": 100.0, "b": 100.0}, quiet, seed=1, incumbent=True)
    cand = retest({"a": 80.0, "b": 125.0}, quiet, seed=2)
    assert compare(inc, cand).outcome == NOT_FASTER
    assert compare(inc, cand, "a").outcome == FASTER
    assert compare(inc, cand, "b").outcome == NOT_FASTER


# --- measuring more while undecided ---------------------------------------------------------


@dataclass
class QuietingEvaluator:
    """A fake worker whose rounds calm down: the first `loud` calls of each kernel come from a
    machine whose rounds jump by about 10%, later ones from a quiet one. `calls` counts the
    calls per kernel."""

    true_us: dict[str, float]
    loud: int = 3
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(7))
    calls: dict[str, int] = field(default_factory=dict)
    limits: object = None

    def build(self, point: Point) -> BuildResult:
        raise AssertionError("not called")

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        name = str(point["K"])
        self.calls[name] = self.calls.get(name, 0) + 1
        loud = self.calls[name] <= self.loud
        noise = Noise(spread=0.05, round_sigma=0.1 if loud else 0.002)
        return measurement(shape.name, samples(self.true_us[name], noise, 200, self.rng))


BUILT = BuildResult(status="ok", kernel_name="k", symbol="k", cubin_path="", resources=None,
                    log="", arch="", command=(), key="k")
SHAPE = Shape("s", {})


def _rounds(evaluator: QuietingEvaluator, names: list[str]) -> Rounds:
    return Rounds([Entrant(evaluator, {"K": n}, BUILT, is_best=n == "best") for n in names],
                  [SHAPE])


def test_an_undecided_retest_measures_more_rounds_until_it_can_decide() -> None:
    fake = QuietingEvaluator({"best": 100.0, "fast": 90.0, "slow": 150.0})
    rounds = _rounds(fake, ["best", "fast", "slow"])
    rounds.run(3)
    (first,) = decide_all(rounds.retests(), [])
    assert first.undecided  # three loud rounds cannot tell a 10% gain
    notices: list[str] = []
    fresh = QuietingEvaluator({"best": 100.0, "fast": 90.0, "slow": 150.0})
    retests, (verdict,) = settle(_rounds(fresh, ["best", "fast", "slow"]), 3,
                                 lambda rts: decide_all(rts, []), notice=notices.append)
    assert verdict.accepted and verdict.winner is not None and verdict.winner.point["K"] == "fast"
    assert verdict.comparison is not None and verdict.comparison.rounds > 3
    assert notices and notices[0].startswith("undecided after 3 re-test rounds")
    # only the two the verdict compares were measured again; the slow one kept its 3 rounds
    assert fresh.calls["slow"] == 3 and fresh.calls["best"] == fresh.calls["fast"] > 3
    assert [len(r.shapes[0].rounds_us) for r in retests] == [fresh.calls[n] for n in
                                                             ("best", "fast", "slow")]


def test_the_extra_rounds_are_bounded_and_the_verdict_then_says_too_noisy() -> None:
    fake = QuietingEvaluator({"best": 100.0, "fast": 95.0}, loud=10**6)  # never calms down
    _, (verdict,) = settle(_rounds(fake, ["best", "fast"]), 2, lambda rts: decide_all(rts, []))
    assert verdict.undecided and not verdict.accepted
    assert fake.calls == {"best": 2 * MORE_ROUNDS, "fast": 2 * MORE_ROUNDS}
    assert verdict.reason.startswith("too noisy to decide") and "8 rounds" in verdict.reason
    assert verdict.chosen == {"K": "best"}  # the incumbent is kept, and the verdict says why


def test_rounds_alternate_the_order_of_the_entrants() -> None:
    order: list[str] = []

    class Recorder(QuietingEvaluator):
        def measure(self, point: Point, built: BuildResult, shape: Shape,
                    phase: str) -> Measurement:
            order.append(str(point["K"]))
            return super().measure(point, built, shape, phase)

    _rounds(Recorder({"best": 1.0, "x": 1.0}), ["best", "x"]).run(3)
    assert order == ["best", "x", "x", "best", "best", "x"]


# --- tune: the conductor, the summary and the trace -----------------------------------------


def _state(round_: int, us: float) -> KernelState:
    return KernelState(round_, "original", "k", "h", {"K": round_}, {"s": us}, {"s": 1.0}, us,
                       True)


def test_tune_keeps_the_best_and_its_stop_reason_names_the_noise() -> None:
    hopeless = Noise(spread=1.0, round_sigma=0.8, preempted=0.5, stall_us=2000.0)
    best, cand = _pair(100.0, 80.0, hopeless, 4)
    got = accept(best, cand, verified_everywhere=True)
    assert not got.accepted and got.outcome == UNDECIDED and got.noise_pct is not None
    assert got.reason.startswith("too noisy to decide") and got.interval is not None
    situation = Situation(1, _state(0, 100.0), _state(0, 100.0), _state(1, 80.0), False,
                          got.reason, got.speedup, None, (), history=(Decision(0, "tune", ""),),
                          outcome=got.outcome, interval=got.interval, noise_pct=got.noise_pct)
    d = decide(situation, Policy(max_rounds=1))
    assert d.action == "stop" and d.outcome == UNDECIDED and not d.accepted
    assert d.reason.startswith("round 1 was too noisy to decide")
    assert "round budget" in d.reason  # the rule that stopped it follows
    assert any("undecided, the best stays" in b.text for b in d.analysis)


def test_the_summary_and_the_trace_show_the_round_too_noisy_to_decide() -> None:
    from pragma_ncu.measure.records import too_noisy

    text = "too noisy to decide: 1.25× (interval 0.31–5.02× at 95%, 12 rounds), noise 533%"
    records = (RoundRecord(0, "baseline", {"name": "original"}, {}, {}, None, _state(0, 100.0),
                           _state(0, 100.0), Decision(0, "tune", "search")),
               RoundRecord(1, "tune", {"name": "original"}, {}, {}, _state(0, 100.0),
                           _state(1, 80.0), _state(0, 100.0),
                           Decision(1, "stop", f"round 1 was {text}; no move is left",
                                    acceptance=text, speedup_vs_best=1.25, outcome=UNDECIDED,
                                    speedup_interval=(0.31, 5.02), noise_pct=533.0)))
    summary = {"baseline_us": 100.0, "best_us": 100.0, "speedup": 1.0, "best_round": 0,
               "stop_reason": records[1].decision.reason, **too_noisy(records)}
    assert summary["undecided_rounds"] == [1]
    assert summary["too_noisy"] == f"round 1 was {text}"
    assert f"undecided: round 1 was {text}" in summary_lines("r1", summary)
    assert "undecided" in rounds_table(records).splitlines()[-1]
    for stored in (summary, {}):  # from the run's summary, or from its rounds alone
        trace = Trace(RunRow("r1", 0.0, "k", "k.toml", "done", {}, "sim", None, stored),
                      records)
        md = " ".join(render_markdown(trace).split())  # as read: prose wraps at 100
        assert f"- **undecided:** round 1 was {text}" in md
        assert f"- **undecided (too noisy)**: {text}" in md
        assert "| undecided |" in md
        assert "round 1 was too noisy to decide" in render_html(trace)
    data = trace_json(trace)
    assert data["rounds"][1]["decision"]["outcome"] == UNDECIDED
    assert data["rounds"][1]["decision"]["speedup_interval"] == (0.31, 5.02)
    assert RoundRecord.from_json(records[1].to_json()) == records[1]
