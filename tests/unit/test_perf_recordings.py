"""The perf reader on real `perf stat` outputs taken on CPUs with hardware counters (published
by others; see tests/fixtures/cpu/public/README.md), and on this project's own recordings
where the counters are `<not supported>`."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.backends.cpu.collect import perf_stat

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "cpu" / "public"
OWN = PUBLIC.parent


def _body(name: str) -> str:
    return (PUBLIC / name).read_text().split("# ---\n", 1)[1]


@pytest.mark.parametrize("name", ["spr.perf_stat.csv.txt", "spr.perf_stat.json.txt",
                                  "spr.perf_stat.table.txt"])
def test_sapphire_rapids_counts_and_topdown_read_alike_in_every_format(name: str) -> None:
    ps = perf_stat.parse(_body(name))
    assert {"cycles", "instructions", "branches", "branch-misses"} <= {c.event for c in ps.counts}
    assert ps.missing == () and ps.multiplexed == ()
    level1 = [ps.metrics[f"tma_{k}"] for k in ("retiring", "bad_speculation",
                                               "frontend_bound", "backend_bound")]
    assert sum(level1) == pytest.approx(100.0, abs=1.5)  # level 1 splits all slots
    assert max(level1) == ps.metrics["tma_backend_bound"] > 68
    assert ps.metrics["tma_memory_bound"] + ps.metrics["tma_core_bound"] == pytest.approx(
        ps.metrics["tma_backend_bound"], abs=1.5)
    ipc = next(c for c in ps.counts if c.event == "instructions")
    assert ipc.metric_value == pytest.approx(ipc.value / ps.value("cycles"), rel=0.02)


def test_the_three_formats_agree_on_the_csv_and_json_run() -> None:
    csv, js = perf_stat.parse(_body("spr.perf_stat.csv.txt")), perf_stat.parse(
        _body("spr.perf_stat.json.txt"))
    # the same command twice, a second apart: the same events, similar counts
    assert [c.event for c in csv.counts] == [c.event for c in js.counts]
    assert csv.value("cpu-clock") == pytest.approx(js.value("cpu-clock"), rel=0.01)


def test_zen4_multiplexed_counters_are_flagged_with_their_share() -> None:
    ps = perf_stat.parse(_body("zen4.perf_stat_ddd.table.txt"))
    assert ps.value("L1-dcache-load-misses") == 3_812_144_127
    muxed = {c.event: c.running_pct for c in ps.counts if c.multiplexed}
    assert muxed["cycles"] == 35.77 and muxed["instructions"] == 35.72  # continuation line
    assert "task-clock" not in muxed and ps.value("task-clock") == 7212.26


def test_zen4_pipeline_topdown_metrics_are_kept_by_name() -> None:
    ps = perf_stat.parse(_body("zen4.perf_stat_pipelineL2.table.txt"))
    assert ps.metrics["backend_bound_memory"] == 58.0 and ps.metrics["backend_bound_cpu"] == 24.3
    assert all(c.multiplexed for c in ps.counts)
    assert ps.value("cpu/de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6/") == 1_075_229_713


def test_epyc_user_only_events_keep_their_modifier_and_share() -> None:
    ps = perf_stat.parse(_body("epyc7a53.perf_stat_d.table.txt"))
    assert [c.event for c in ps.counts] == ["cycles:u", "stalled-cycles-frontend:u",
                                            "stalled-cycles-backend:u", "instructions:u"]
    assert [c.running_pct for c in ps.counts] == [74.92, 74.92, 75.01, 75.09]
    assert ps.multiplexed == tuple(c.event for c in ps.counts)


def test_unsupported_counters_on_this_projects_machine_stay_missing() -> None:
    for name in ("perf_stat.gather.csv", "perf_stat.gather.json"):
        ps = perf_stat.parse((OWN / name).read_text())
        assert "cycles" in ps.missing and ps.value("cycles") is None
        assert ps.value("task-clock") and ps.value("task-clock") > 0


def test_a_table_with_nothing_in_it_is_an_error() -> None:
    with pytest.raises(perf_stat.PerfStatError):
        perf_stat.parse_table("\n Performance counter stats for 'true':\n\n")
