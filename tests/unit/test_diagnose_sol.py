"""A verdict for every clear speed-of-light picture, throughput findings only near their unit's
peak, the waits the stalls name ranked above a unit below its peak, and the attainable fraction
of the roofline each diagnosis carries (issue 27). Synthetic kernels: the metrics of ncu's
default set (and WarpStateStats' stall ratios where a case needs them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pragma_ncu.backends import diagnose
from pragma_ncu.backends.cuda.diagnosis import attainable_fraction
from pragma_ncu.backends.cuda.diagnosis.detectors import LAUNCH_FLOOR_NS
from pragma_ncu.backends.cuda.diagnosis.signals import Signals, stall_name
from pragma_ncu.backends.cuda.diagnosis.traffic import PRACTICAL_DRAM
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.profile.profiles import KernelProfile, Metric
from tests.corpus_eval import AT_ROOFLINE, COLLECTIONS, verdicts

ROOT = Path(__file__).resolve().parents[2]
E = ".avg.pct_of_peak_sustained_elapsed"
KNOWLEDGE = Compendium.load()


def picture(issue: float = 0.1, dram: float = 0.1, l1: float = 0.1, l2: float | None = None,
            fma: float = 0.05, alu: float = 0.05, active: float = 1.0,
            duration_ns: float = 100_000.0, stalls: dict[str, float] | None = None
            ) -> KernelProfile:
    """A kernel as ncu's default set shows it: utilizations are fractions while the SMs are
    active (the elapsed forms the set carries are derived from them)."""
    values = {
        "gpu__time_duration.sum": duration_ns, "sm__cycles_active.avg": 1000.0 * active,
        "sm__cycles_elapsed.avg": 1000.0, "launch__grid_size": 10_000.0,
        "launch__sm_count": 132.0,
        "sm__throughput" + E: 100 * active * max(issue, fma, alu),
        "sm__issue_active" + E: 100 * active * issue,
        "sm__pipe_fma_cycles_active" + E: 100 * active * fma,
        "sm__pipe_alu_cycles_active" + E: 100 * active * alu,
        "gpu__dram_throughput" + E: 100 * active * dram,
        "lts__throughput" + E: 100 * active * (dram if l2 is None else l2),
        "l1tex__throughput.avg.pct_of_peak_sustained_active": 100 * l1,
    }
    values.update({stall_name(r): v for r, v in (stalls or {}).items()})
    return KernelProfile("k", "k", 0, {n: Metric(n, v, "") for n, v in values.items()})


def diagnosed(k: KernelProfile) -> Diagnosis:
    return diagnose(k, KNOWLEDGE, collector="ncu")


def order(d: Diagnosis) -> list[str]:
    return [f.bottleneck for f in d.findings]


# --- a verdict for every clear picture ----------------------------------------------------------


def test_an_sm_side_busy_below_its_peak_is_named_not_none():
    """The PyTorch block's layer-norm kernel: issue slots 72% busy, no pipe above 36%: ncu's
    SpeedOfLight calls it high compute throughput; it said 'no bottleneck stands out'."""
    d = diagnosed(picture(issue=0.72, alu=0.36, dram=0.15, l1=0.2))
    assert d.classification == "instruction_issue"
    assert d.findings[0].title == "SM side busy below its peak (issue slots 72%, SM throughput 72%)"
    assert "no warp-state statistics" in d.findings[0].summary
    assert "memory_latency" in {g.cause for g in d.not_assessed}  # what was not assessed
    assert "--section WarpStateStats" in d.collect_command  # and how to assess it


def test_near_the_peak_the_issue_slots_are_the_bound():
    d = diagnosed(picture(issue=0.85, alu=0.4))
    assert d.findings[0].title == "Instruction-issue-bound"


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0),
       st.floats(0.0, 1.0), st.floats(0.05, 1.0))
def test_no_speed_of_light_picture_is_left_without_a_verdict(issue, dram, l1, fma, alu, active):
    """Whatever the units show, busy or idle, the picture supports a class: 'none' is left
    for a report without these figures."""
    d = diagnosed(picture(issue=issue, dram=dram, l1=l1, fma=fma, alu=alu, active=active))
    assert d.classification != "none", (issue, dram, l1, fma, alu, active)


def test_without_speed_of_light_figures_nothing_is_judged():
    k = KernelProfile("k", "k", 0, {"gpu__time_duration.sum": Metric("x", 5e5, "ns")})
    d = diagnosed(k)
    assert d.classification == "none" and d.roofline.attainable_fraction is None


# --- a throughput finding needs its unit near its peak -----------------------------------------


@pytest.mark.parametrize("busy, title", [
    (0.7, "Compute-heavy on the FMA pipe, below its peak"),
    (0.85, "Compute-bound on the FMA pipe"),
    (0.95, "Compute-bound on the FMA pipe, at the roofline"),
])
def test_a_pipe_is_the_bound_only_near_its_peak(busy, title):
    assert diagnosed(picture(fma=busy, issue=busy)).findings[0].title == title


@pytest.mark.parametrize("l1, title", [(0.7, "L1/shared-memory-heavy, below its peak"),
                                       (0.9, "L1/shared-memory-bandwidth-bound")])
def test_l1_is_the_bound_only_near_its_peak(l1, title):
    assert diagnosed(picture(l1=l1)).findings[0].title == title


@pytest.mark.parametrize("stalls, first", [
    ({"long_scoreboard": 6.0, "not_selected": 0.5}, "memory_latency"),
    ({"barrier": 5.0, "long_scoreboard": 1.0, "not_selected": 0.5}, "barrier_stall"),
    ({"wait": 2.0, "short_scoreboard": 2.0, "not_selected": 0.5}, "latency_bound"),
    ({"not_selected": 3.0, "math_pipe_throttle": 2.0, "long_scoreboard": 0.5}, "compute_fma"),
])
def test_below_its_peak_the_wait_the_stalls_name_ranks_first(stalls, first):
    """The FMA pipe 65% busy: warps waiting on memory, at barriers or on dependencies explain
    the other 35%, so the wait ranks above it; warps ready but not picked (or throttled by the
    pipe) say the pipe is the limit after all."""
    d = diagnosed(picture(fma=0.65, issue=0.65, stalls=stalls))
    assert order(d)[0] == first, d.findings
    if first != "compute_fma":
        pipe = next(f for f in d.findings if f.bottleneck == "compute_fma")
        assert "Here it follows from " in pipe.summary and first in pipe.summary


def test_near_its_peak_the_unit_stays_first_whatever_the_stalls():
    d = diagnosed(picture(fma=0.85, issue=0.85, stalls={"long_scoreboard": 6.0}))
    assert order(d)[0] == "compute_fma"


def test_without_stalls_a_unit_below_its_peak_stays_first():
    """The default set has no stall data: the busy unit is all the picture shows."""
    assert order(diagnosed(picture(dram=0.7)))[0] == "memory_bandwidth"


# --- the attainable fraction of the roofline ---------------------------------------------------


def test_a_copy_at_the_practical_ceiling_is_at_its_roofline():
    frac, by = attainable_fraction(Signals.of(picture(dram=PRACTICAL_DRAM)))
    assert frac == pytest.approx(1.0) and "DRAM traffic" in by


def test_a_pipes_work_counts_only_over_the_time_the_sms_had_work():
    frac, by = attainable_fraction(Signals.of(picture(fma=0.8, active=0.5, dram=0.01)))
    assert frac == pytest.approx(0.4) and by == "the FMA pipe's work at its peak"


def test_no_launch_beats_the_floor():
    k = picture(dram=0.01, duration_ns=2 * LAUNCH_FLOOR_NS)
    frac, by = attainable_fraction(Signals.of(k))
    assert frac == pytest.approx(0.5) and by == "the shortest a launch takes"


def test_measured_ceilings_count_when_they_bind():
    frac, by = attainable_fraction(Signals.of(picture(dram=0.1)), 0.6, "FP32 FMA")
    assert frac == pytest.approx(0.6) and by == "FP32 FMA at the measured ceilings"
    assert diagnosed(picture(dram=0.425)).roofline.attainable_fraction == pytest.approx(0.5)


# --- on the corpus, every collection --------------------------------------------------------

@pytest.mark.parametrize("coll", COLLECTIONS)
def test_the_corpus_kernels_at_their_roofline_still_are(coll):
    """The copies at the DRAM ceiling and the kernels with a pipe at its peak read at 90% of
    their attainable roofline or more, under ncu's default set too; the other kernels'
    verdicts name a cause (no 'none' anywhere: tests/unit/test_corpus.py)."""
    judged = {v.kernel: v.diagnosis for v in verdicts(coll)}
    at = {k: judged[k].roofline.attainable_fraction for k in AT_ROOFLINE}
    assert all(f is not None and f >= 0.9 for f in at.values()), at
    below = [k for k, d in judged.items() if k not in AT_ROOFLINE and d.classification == "none"]
    assert below == []


@pytest.mark.parametrize("coll", ["full", "ours"])
def test_wasted_sector_bytes_are_no_roofline(coll):
    """aos_field and scatter_store keep DRAM at its ceiling moving sectors they use a fifth
    of: where the report counts the bytes used per sector, the roofline counts only those."""
    judged = {v.kernel: v.diagnosis for v in verdicts(coll)}
    for name in ("aos_field", "scatter_store", "gather_random"):
        fraction = judged[name].roofline.attainable_fraction
        assert fraction is not None and fraction < 0.3, (name, fraction)


def test_docs_show_the_roofline_table_the_tool_prints():
    from tools.corpus_table import roofline

    table = roofline({coll: verdicts(coll) for coll in COLLECTIONS})
    assert table in (ROOT / "docs" / "profiler.md").read_text()
