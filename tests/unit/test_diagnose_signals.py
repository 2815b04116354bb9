"""Signals from whatever a report carries: each quantity read from its preferred metric or a
fallback (other ncu versions and collections), stall breakdowns from four sources, causes
ranked before their symptoms, and the coverage notes."""

from __future__ import annotations

import pytest

from pragma_ncu.backends.cuda.diagnosis import coverage, diagnose
from pragma_ncu.backends.cuda.diagnosis.quantities import QUANTITIES
from pragma_ncu.backends.cuda.diagnosis.signals import Signals, stalls
from pragma_ncu.diagnose import causality
from pragma_ncu.diagnose.findings import Finding
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.profile.profiles import KernelProfile, Metric, SourceLine

SECTOR_USE = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld"


def kernel(metrics: dict[str, float], hotspots: tuple[SourceLine, ...] = ()) -> KernelProfile:
    return KernelProfile("k", "k", 0, {n: Metric(n, v, "") for n, v in metrics.items()},
                         hotspots=hotspots)


@pytest.mark.parametrize(("metrics", "quantity", "value", "metric"), [
    ({SECTOR_USE + ".ratio": 4.0}, "global_ld_bytes_per_sector", 4.0, SECTOR_USE + ".ratio"),
    ({SECTOR_USE + ".pct": 12.5}, "global_ld_bytes_per_sector", 4.0, SECTOR_USE + ".pct"),
    ({"dram__throughput.avg.pct_of_peak_sustained_elapsed": 80.0}, "dram", 0.8,
     "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
    ({"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 70.0,
      "dram__throughput.avg.pct_of_peak_sustained_elapsed": 80.0}, "dram", 0.7,
     "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
    ({"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": 10.0,
      "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": 5.0}, "local_bytes", 480.0, None),
    ({"gpc__cycles_elapsed.max": 2000.0, "gpc__cycles_elapsed.avg.per_second": 2e9},
     "duration_ns", 1000.0, None),
    ({"l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed": 96.0,
      "l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed": 3.0},
     "l1_wavefronts_per_request", 32.0, None),
    ({"smsp__thread_inst_executed.sum": 16.0e6, "smsp__inst_executed.sum": 1.0e6}, "lanes",
     16.0, None),
])
def test_each_quantity_is_read_from_whichever_metric_carries_it(metrics, quantity, value,
                                                                 metric):
    found = QUANTITIES[quantity].read(kernel(metrics))
    assert found is not None and found.value == pytest.approx(value)
    if metric:
        assert found.metric == metric


def test_elapsed_utilizations_are_put_over_the_active_time():
    """The default set gives pipes over elapsed cycles; a kernel whose SMs idle half the time
    and whose FMA pipe shows 45% elapsed ran it at 90% while it had work."""
    k = kernel({"sm__cycles_active.avg": 500.0, "sm__cycles_elapsed.avg": 1000.0,
                "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed": 45.0})
    s = Signals.of(k)
    assert s.active == pytest.approx(0.5)
    assert s.val("pipe_FMA") == pytest.approx(0.9)


@pytest.mark.parametrize(("metrics", "source"), [
    ({"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 9.0,
      "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": 1.0}, "warp state"),
    ({"smsp__pcsamp_warps_issue_stalled_barrier": 90.0,
      "smsp__pcsamp_warps_issue_stalled_barrier_not_issued": 50.0,
      "smsp__pcsamp_warps_issue_stalled_wait": 10.0}, "sampled"),
    ({"smsp__warp_issue_stalled_barrier_per_warp_active.pct": 45.0,
      "smsp__warp_issue_stalled_wait_per_warp_active.pct": 5.0}, "old"),
])
def test_stalls_come_from_any_of_the_families(metrics, source):
    found = stalls(kernel(metrics))
    assert found is not None and found.source == source
    assert found.share("barrier") == pytest.approx(0.9)


def test_stalls_fall_back_to_the_hot_source_lines():
    lines = (SourceLine("a.cu", 3, 10, {"barrier": 8, "wait": 2}, 1.0),
             SourceLine("a.cu", 4, 10, {"barrier": 1, "wait": 9}, 1.0))
    found = stalls(kernel({}, lines))
    assert found is not None and found.source == "hot lines"
    assert found.share("wait") == pytest.approx(0.55)


def _finding(name: str, score: float) -> Finding:
    return Finding(name, name, score, name, ())


def test_a_cause_ranks_above_the_symptom_it_produces():
    ranked = causality.rank([_finding("memory_latency", 0.7), _finding("small_grid", 0.6),
                             _finding("latency_bound", 0.72)])
    assert [f.bottleneck for f in ranked] == ["small_grid", "memory_latency", "latency_bound"]
    assert ranked[0].score == pytest.approx(0.72)  # it explains the time the symptom took
    assert "follows from small_grid" in ranked[1].summary


def test_a_cause_too_small_for_the_symptom_keeps_its_own_rank():
    ranked = causality.rank([_finding("memory_latency", 0.8), _finding("uncoalesced_access",
                                                                       0.1)])
    assert [f.bottleneck for f in ranked] == ["memory_latency", "uncoalesced_access"]


def test_a_limit_near_its_ceiling_yields_to_a_loss_worth_fixing():
    findings = [_finding("compute_fma", 0.49), _finding("tail_effect", 0.4)]
    assert causality.rank(findings, {"compute_fma": 0.83})[0].bottleneck == "tail_effect"
    # not near its ceiling: the larger share leads
    assert causality.rank(findings, {"compute_fma": 0.6})[0].bottleneck == "compute_fma"


def test_coverage_names_what_is_missing_and_the_sections_that_carry_it():
    k = kernel({"gpu__time_duration.sum": 1e5, "launch__grid_size": 1024.0,
                "launch__sm_count": 132.0,
                "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 20.0})
    gaps = {g.cause: g for g in coverage.gaps(Signals.of(k))}
    assert "memory_latency" in gaps and gaps["memory_latency"].sections == ("WarpStateStats",)
    assert "small_grid" not in gaps
    command = coverage.collect_command("ns::gemm<64, 128>", tuple(gaps.values()))
    assert "-k regex:ns::gemm" in command and "--section WarpStateStats" in command


def test_a_kernel_with_no_bottleneck_signal_still_gets_a_verdict_or_says_none():
    """Nothing but a duration: nothing to classify, and the coverage says so."""
    d = diagnose(kernel({"gpu__time_duration.sum": 2e5}), Compendium.load())
    assert d.classification == "none"
    assert len(d.not_assessed) > 5 and d.collect_command
