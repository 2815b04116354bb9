"""The CPU collectors' readers on recorded output (tests/fixtures/cpu/README.md): perf stat in
CSV and JSON, and cachegrind's simulated cache and branch counts."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pragma_ncu.backends.cpu.collect import cachegrind, perf_stat

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "cpu"
EVENTS = ("task-clock", "cycles", "instructions", "cache-misses", "branch-misses")


@pytest.mark.parametrize("name", ["perf_stat.gather.csv", "perf_stat.gather.json"])
def test_recorded_perf_stat_keeps_unsupported_events_missing(name: str) -> None:
    stat = perf_stat.parse((FIX / name).read_text())
    assert tuple(c.event for c in stat.counts) == EVENTS
    clock = stat.value("task-clock")
    assert clock is not None and clock > 0
    assert stat.missing == EVENTS[1:]  # never zero
    assert all(c.status == "not_supported" for c in stat.counts[1:])
    assert stat.multiplexed == ()


def test_csv_and_json_of_the_same_events_agree_on_what_was_counted() -> None:
    csv = perf_stat.parse((FIX / "perf_stat.gather.csv").read_text())
    js = perf_stat.parse((FIX / "perf_stat.gather.json").read_text())
    assert [(c.event, c.status, c.unit) for c in csv.counts] == \
        [(c.event, c.status, c.unit) for c in js.counts]


# Written by hand in perf's `-x,` layout (value, unit, event, run time, % running, metric value,
# metric unit): counters multiplexed at 50%, one not counted, and metric-only top-down lines.
HAND_CSV = """\
# started on Sat Nov 21 10:00:00 2026
1500000000,,cycles,500000000,50.00,,
3000000000,,instructions,500000000,50.00,2.00,insn per cycle
<not counted>,,branch-misses,0,0.00,,
,,,,,31.5,%  tma_frontend_bound
,,,,,12.0,%  tma_bad_speculation
"""


def test_multiplexed_counts_are_flagged_and_metric_lines_kept() -> None:
    stat = perf_stat.parse(HAND_CSV)
    assert stat.multiplexed == ("cycles", "instructions")
    assert stat.missing == ("branch-misses",)
    insn = next(c for c in stat.counts if c.event == "instructions")
    assert insn.metric_value == 2.0 and insn.metric_unit == "insn per cycle"
    assert stat.metrics == {"tma_frontend_bound": 31.5, "tma_bad_speculation": 12.0}


def test_garbage_is_a_clear_error() -> None:
    with pytest.raises(perf_stat.PerfStatError, match="not `perf stat"):
        perf_stat.parse("hello")
    with pytest.raises(perf_stat.PerfStatError, match="not a number"):
        perf_stat.parse("abc,,cycles,1,100.00,,")
    with pytest.raises(perf_stat.PerfStatError, match="not JSON"):
        perf_stat.parse_json('{"event": "cycles", "counter-value": "1"}\n{oops')


@pytest.fixture(scope="module")
def gather() -> cachegrind.Cachegrind:
    return cachegrind.parse(gzip.decompress((FIX / "cachegrind.gather.out.gz").read_bytes())
                            .decode())


def test_cachegrind_totals_and_rates(gather: cachegrind.Cachegrind) -> None:
    assert gather.command == "./gather"
    assert set(gather.totals) == set(cachegrind.EVENTS)
    d = gather.derived()
    # the planted pattern: one scattered read per element misses L1 (~1 in 2 data accesses)
    assert 0.4 < d["d1_miss_rate"] < 0.6
    assert d["mispredict_rate"] < 0.01  # the loops' branches are predictable
    summed = {}
    for ln in gather.lines:
        for k, v in ln.counts.items():
            summed[k] = summed.get(k, 0) + v
    assert summed == gather.totals  # the per-line counts add up to the summary


def test_cachegrind_hot_line_is_the_scattered_read(gather: cachegrind.Cachegrind) -> None:
    top = gather.hot_lines("D1mr", 1)[0]
    assert (top.file, top.function) == ("gather.c", "main")
    source = (FIX / "gather.c").read_text().splitlines()
    assert "a[(i * 17)" in source[top.line - 1]


def test_cachegrind_compressed_names_and_bad_input() -> None:
    text = ("events: Ir D1mr\nfl=(1) k.c\nfn=(1) main\n3 10 4\nfl=(1)\nfn=(2) f\n4 5\n")
    cg = cachegrind.parse(text)
    assert {(ln.file, ln.function, ln.line) for ln in cg.lines} == {("k.c", "main", 3),
                                                                    ("k.c", "f", 4)}
    assert cg.totals == {"Ir": 15, "D1mr": 4}
    with pytest.raises(cachegrind.CachegrindError, match="events"):
        cachegrind.parse("summary: 1 2\n")
    with pytest.raises(cachegrind.CachegrindError, match="counts"):
        cachegrind.parse("events: Ir\n1 2 3\n")
