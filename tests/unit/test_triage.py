"""Triage without a GPU: kernel matching, the noise rules of the duration verdict, and the cause
ranking, on synthetic profiles and on pairs built from the recorded H200 profiles."""

from __future__ import annotations

import gzip
import json
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.measure.stats import summarize
from pragma_ncu.profile.profiles import KernelProfile, Metric, Profile, RuleResult, SourceLine
from pragma_ncu.profile.read import read_csv_folder
from pragma_ncu.triage import evidence
from pragma_ncu.triage.compare import group_change
from pragma_ncu.triage.engine import triage
from pragma_ncu.triage.groups import group_launches
from pragma_ncu.triage.match import match_by_order, match_groups
from pragma_ncu.triage.report import (
    IMPROVEMENT,
    REGRESSION,
    UNCHANGED,
    UNDECIDED,
    DurationChange,
    KernelMatch,
    Side,
    Timing,
    TriageError,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "profiles"
PLANTED = tomllib.loads((ROOT / "examples" / "planted" / "expected.toml").read_text())


def kernel(name: str, index: int = 0, mangled: str = "", **values: float | str) -> KernelProfile:
    """A synthetic kernel profile: metric names with '__' spelled as keyword arguments."""
    metrics = {}
    for key, value in values.items():
        metric = key.replace("__dot__", ".")
        metrics[metric] = Metric(metric, float(value) if not isinstance(value, str) else value,
                                 "ns" if "duration" in metric else "")
    return KernelProfile(name, mangled or name, index, metrics, display_name=name)


def launch(name: str, index: int, grid: int, block: int = 256, **extra: float | str
           ) -> KernelProfile:
    return kernel(name, index, launch__grid_size=grid, launch__block_size=block, **extra)


def with_values(k: KernelProfile, **values: float) -> KernelProfile:
    metrics = dict(k.metrics)
    for name, value in values.items():
        metric = name.replace("__dot__", ".")
        unit = metrics[metric].unit if metric in metrics else ""
        metrics[metric] = Metric(metric, value, unit)
    return replace(k, metrics=metrics)


def side(*kernels: KernelProfile, timings: tuple[Timing, ...] = (), label: str = "x") -> Side:
    return Side(label, "profile-json", Profile(tuple(kernels), "test"), timings)


def recorded(name: str) -> KernelProfile:
    return read_csv_folder(FIXTURES / name).kernels[0]


# --- matching (kernel groups; tests/unit/test_triage_apps.py covers applications) -----------


def groups(*kernels: KernelProfile):
    return group_launches(kernels)


def test_kernels_match_by_mangled_name_then_name_then_template_free_name():
    base = groups(kernel("a", 0, "_Z1av"), kernel("ns::b<128>", 1, "_Z1bILi128EEv"),
                  kernel("c", 2))
    new = groups(kernel("c", 0), kernel("a", 1, "_Z1av"), kernel("ns::b<256>", 2, "_Z1bILi256EEv"),
                 kernel("d", 3))
    m = match_groups(base, new)
    pairs = {(p.base.name, p.new.name): p.how for p in m.pairs}
    assert pairs == {("a", "a"): "same kernel", ("ns::b<128>", "ns::b<256>"):
                     "template arguments changed", ("c", "c"): "same kernel"}
    assert [g.name for g in m.added] == ["d"] and not m.removed


def test_one_kernel_at_several_launches_pairs_by_launch_configuration():
    base = groups(launch("k", 0, grid=64), launch("k", 1, grid=128), launch("k", 2, grid=32))
    new = groups(launch("k", 0, grid=128), launch("k", 1, grid=64), launch("k", 2, grid=16))
    m = match_groups(base, new)
    grids = sorted((p.base.config.grid, p.new.config.grid, p.how) for p in m.pairs)
    assert grids == [((32,), (16,), "launch configuration changed"),
                     ((64,), (64,), "same kernel"), ((128,), (128,), "same kernel")]


def test_nvtx_ranges_tell_groups_apart_when_the_profile_has_them():
    base = groups(launch("k", 0, 64, nvtx__range="prefill"), launch("k", 1, 64,
                                                                   nvtx__range="decode"))
    new = groups(launch("k", 0, 64, nvtx__range="decode"), launch("k", 1, 64,
                                                                 nvtx__range="prefill"))
    m = match_groups(base, new)
    assert {(p.base.config.nvtx, p.new.config.nvtx) for p in m.pairs} == {
        ("prefill", "prefill"), ("decode", "decode")}
    assert all(p.how == "same kernel" for p in m.pairs)


def test_different_names_stay_unmatched_unless_paired_by_order():
    base, new = groups(kernel("old", 0)), groups(kernel("renamed", 0), kernel("extra", 1))
    assert not match_groups(base, new).pairs
    m = match_by_order(base, new)
    assert [(p.base.name, p.new.name) for p in m.pairs] == [("old", "renamed")]
    assert [g.name for g in m.added] == ["extra"]


# --- the duration verdict and noise --------------------------------------------------------------


def timing(name: str, *medians: float, spread: float = 0.01) -> Timing:
    """Runs whose samples lie within ±spread of each median."""
    runs = tuple(summarize([m * (1 - spread), m, m * (1 + spread)] * 10) for m in medians)
    return Timing(name, runs, "test")


def pair(base_ns: float = 100_000.0, new_ns: float = 100_000.0) -> KernelMatch:
    return KernelMatch(kernel("k", gpu__time_duration__dot__sum=base_ns),
                       kernel("k", gpu__time_duration__dot__sum=new_ns), "name")


def duration_change(match: KernelMatch, base: Timing | None, new: Timing | None,
                    threshold_pct: float) -> DurationChange:
    """The verdict of one launch per side (a kernel profiled once), with timings if given."""
    (gb,), (gn,) = group_launches([match.base]), group_launches([match.new])
    return group_change(gb, gn, base, new, threshold_pct)


def test_timing_noise_covers_run_to_run_spread():
    t = timing("k", 100.0, 104.0, 101.0, spread=0.001)
    assert t.median_us == 101.0
    assert t.noise_us == pytest.approx(4.0)  # the medians' spread beats the tiny IQRs
    assert t.pooled().iqr_us == t.noise_us and t.pooled().reps == 90


def test_a_difference_the_noise_swamps_is_too_noisy_to_decide_never_a_regression():
    """Issue 35: an 8% change inside a ±43% noise was called unchanged (no regression, exit
    0) though a 40% regression was as plausible; it is too noisy to decide (still exit 0)."""
    d = duration_change(pair(), timing("k", 100, 100, 100, spread=0.2),
                        timing("k", 108, 108, 108, spread=0.2), threshold_pct=5)
    assert d.basis == "timing" and d.delta_pct == pytest.approx(8.0)
    assert d.beyond_noise is False and d.verdict == UNDECIDED
    assert "too noisy to decide: the noise swamps the difference" in d.note


def test_a_difference_within_a_noise_below_the_threshold_is_unchanged():
    d = duration_change(pair(), timing("k", 100, 100, 100, spread=0.01),
                        timing("k", 100.5, 100.5, 100.5, spread=0.01), threshold_pct=5)
    assert d.beyond_noise is False and d.verdict == UNCHANGED and "within the noise" in d.note


def test_a_difference_beyond_the_noise_must_also_pass_the_threshold():
    base = timing("k", 100, 100.5, 100)
    slower = duration_change(pair(), base, timing("k", 110, 110, 110.5), threshold_pct=5)
    assert slower.beyond_noise and slower.verdict == REGRESSION
    small = duration_change(pair(), base, timing("k", 103, 103, 103), threshold_pct=5)
    assert small.beyond_noise and small.verdict == UNCHANGED
    faster = duration_change(pair(), base, timing("k", 80, 80, 80), threshold_pct=5)
    assert faster.verdict == IMPROVEMENT


def test_one_ncu_sample_per_side_is_judged_by_the_threshold_alone():
    d = duration_change(pair(100_000, 106_000), None, None, threshold_pct=5)
    assert d.basis == "ncu" and d.verdict == REGRESSION and d.beyond_noise is None
    assert "no noise estimate" in d.note
    assert duration_change(pair(100_000, 104_000), None, None, 5).verdict == UNCHANGED
    one = duration_change(pair(100_000, 104_000), timing("k", 100), None, 5)
    assert one.basis == "ncu" and "timing only on BASE" in one.note


def test_no_duration_is_an_input_error():
    m = KernelMatch(kernel("k"), kernel("k", gpu__time_duration__dot__sum=1.0), "name")
    with pytest.raises(TriageError, match="no duration on BASE"):
        duration_change(m, None, None, 5)


# --- evidence ------------------------------------------------------------------------------------


def test_rules_that_appear_or_vanish_ignore_the_numbers_in_messages():
    def rules(*items: tuple[str, str, str]) -> KernelProfile:
        return replace(kernel("k"), rules=tuple(RuleResult("S", r, kind, msg, 10.0)
                                                for r, kind, msg in items))

    b = rules(("CPIStall", "OPT", "each warp spends 12.5 cycles"), ("Gone", "OPT", "x"),
              ("Info", "INF", "y"))
    n = rules(("CPIStall", "OPT", "each warp spends 40.1 cycles"),
              ("ThreadDivergence", "OPT", "avg 16.0 threads"))
    changes = evidence.rule_changes(b, n)
    assert [(c.rule, c.change) for c in changes] == [("ThreadDivergence", "appeared"),
                                                     ("Gone", "vanished")]
    assert changes[0].causes == ("warp_divergence",)


def line(file: str, no: int, samples: int, text: str, stall: str = "long_scoreboard"
         ) -> SourceLine:
    return SourceLine(file, no, samples, {stall: samples}, 0.0, text)


def test_line_shifts_match_by_position_in_the_same_file_and_by_text_across_files():
    b = replace(kernel("k"), hotspots=(line("k.cu", 10, 90, "a = x[i];"),
                                       line("k.cu", 12, 10, "y[i] = a;")))
    n = replace(kernel("k"), hotspots=(line("k.cu", 10, 40, "a = x[i];"),
                                       line("k.cu", 12, 60, "y[i] = a;", "drain")))
    shifts = evidence.line_shifts(b, n)
    assert [(s.location, round(s.shift, 2), s.stall) for s in shifts] == [
        ("k.cu:10", -0.5, "long_scoreboard"), ("k.cu:12", 0.5, "drain")]
    moved_code = replace(kernel("k"), hotspots=(line("new.cu", 30, 40, "a = x[i];"),
                                                line("new.cu", 31, 60, "if (a & 1) {")))
    by_text = {s.location: s for s in evidence.line_shifts(
        replace(b, hotspots=(line("base.cu", 10, 100, "a  =  x[i];"),)), moved_code)}
    assert by_text["new.cu:30"].base_share == 1.0 and by_text["new.cu:30"].new_share == 0.4
    assert by_text["new.cu:31"].base_share == 0.0


def test_config_changes_and_coverage():
    b = kernel("k", launch__block_size=1024, launch__registers_per_thread=32,
               l1tex__t_sectors_pipe_lsu_mem_global_op_ld__dot__sum=1600,
               l1tex__t_requests_pipe_lsu_mem_global_op_ld__dot__sum=100, only_base=1.0)
    n = kernel("k", launch__block_size=128, launch__registers_per_thread=32,
               l1tex__t_sectors_pipe_lsu_mem_global_op_ld__dot__sum=1600,
               l1tex__t_requests_pipe_lsu_mem_global_op_ld__dot__sum=800)
    assert [(c.label, c.base, c.new) for c in evidence.config_changes(b, n)] == [
        ("block size", 1024.0, 128.0), ("global load sectors/request", 16.0, 2.0)]
    notes = evidence.coverage(b, n)
    assert any("1 metrics only on BASE" in s and "only_base" in s for s in notes)
    assert any("no source counters on either side" in s for s in notes)  # neither has them


def test_movement_is_a_capped_log_ratio():
    assert evidence.moved(100, 200) == pytest.approx(1.0, abs=0.02)
    assert evidence.moved(0, 5) == 1.0 and evidence.moved(0, 0) == 0.0
    assert evidence.moved(100, 102) < evidence.MIN_MOVED


# --- ranking -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_the_cause_that_took_over_ranks_first(name, knowledge):
    """BASE: the recorded silu_and_mul (memory-latency-bound); NEW: a planted kernel made twice
    as slow. The planted cause is what grew, so it must rank first."""
    base = recorded("silu_and_mul")
    planted = recorded(name)
    slower = with_values(planted, gpu__time_duration__dot__sum=2 * base.value(
        "gpu__time_duration.sum"))
    report = triage(side(base), side(slower), knowledge, by_order=True)
    k = report.kernels[0].detail
    assert k.duration.verdict == REGRESSION and report.exit_code == 1
    assert k.causes[0].bottleneck == PLANTED[name]["cause"], [(c.bottleneck, c.score)
                                                              for c in k.causes]
    assert k.causes[0].rise > 0 and k.checks and k.diagnosis


def test_metric_deltas_are_ranked_by_their_relation_to_the_cause(knowledge):
    report = triage(side(recorded("bandwidth_ok")), side(recorded("uncoalesced")), knowledge,
                    by_order=True)
    k = report.kernels[0].detail
    assert k.causes[0].bottleneck == "uncoalesced_access"
    assert k.causes[0].rule_support == 1.0  # UncoalescedGlobalAccess appeared
    top = [m.metric for m in k.metrics[:5]]
    assert "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct" in top
    assert all(m.supports for m in k.metrics)
    assert all(knowledge.lookup(m.metric) is not None for m in k.metrics)
    assert any(c.label == "global load sectors/request" for c in k.config)
    assert "uncoalesced" in k.diagnosis and k.checks[0].startswith("Confirm:")


def test_the_same_profile_twice_is_no_regression(knowledge):
    k = recorded("fused_add_rmsnorm")
    report = triage(side(k), side(k), knowledge)
    assert report.exit_code == 0 and not report.regressed
    assert report.kernels[0].verdict == UNCHANGED and report.kernels[0].detail is None
    kt = triage(side(k), side(k), knowledge, kernel=k.name).kernels[0].detail  # drilled into
    assert kt.duration.verdict == UNCHANGED and kt.duration.delta_pct == 0
    assert all(c.rise == 0 for c in kt.causes)
    assert not kt.metrics and not kt.rules and not kt.lines and not kt.config and not kt.checks


def test_an_improvement_names_the_relief(knowledge):
    fast, slow = recorded("fma_bound"), recorded("divergence")
    slow = with_values(slow, gpu__time_duration__dot__sum=2 * fast.value(
        "gpu__time_duration.sum"))
    report = triage(side(slow), side(fast), knowledge, by_order=True)
    assert report.kernels[0].duration.verdict == IMPROVEMENT and report.exit_code == 0
    assert "Largest relief" in report.kernels[0].detail.diagnosis
    assert "warp" in report.kernels[0].detail.diagnosis


def test_triage_is_deterministic(knowledge):
    def run() -> str:
        r = triage(side(recorded("register_pressure")), side(recorded("bank_conflicts")),
                   knowledge, by_order=True)
        return json.dumps(r.to_json(), sort_keys=True)

    assert run() == run()


def test_kernel_filter_and_explicit_pairing(knowledge):
    b = side(recorded("atomics"), label="b")
    n = side(recorded("barrier"), label="n")
    report = triage(b, n, knowledge, kernel="atomics=barrier")
    assert report.kernels[0].match.how == "paired by --kernel OLD=NEW"
    with pytest.raises(TriageError, match="no kernel matches 'nope'"):
        triage(b, n, knowledge, kernel="nope")
    with pytest.raises(TriageError, match="no kernel in common"):
        triage(b, n, knowledge)


def test_recorded_profiles_json_round_trip_through_the_report(knowledge):
    data = json.loads(gzip.decompress((FIXTURES / "barrier" / "profile.json.gz").read_bytes()))
    assert data["kernels"]  # the ncu_report profile of the same kernel as the CSV pages
    report = triage(side(recorded("barrier")), side(recorded("barrier")), knowledge)
    out = report.to_json()
    assert out["verdict"] == "ok" and out["kernels"][0]["verdict"] == UNCHANGED
    assert json.loads(json.dumps(out)) == out
