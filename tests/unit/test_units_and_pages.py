"""CSV pages in any units: display units converted to base ones, a details page read alone,
one exported page read as a file, profile.json.gz read without ncu."""

from __future__ import annotations

import gzip
import json

import pytest

from pragma_ncu.infra.settings import load_settings
from pragma_ncu.profile import csv_reader
from pragma_ncu.profile.read import ReportError, read_report
from pragma_ncu.profile.units import to_base
from tests.corpus_eval import FIXTURES


@pytest.mark.parametrize(("value", "unit", "want"), [
    (269.12, "us", (269_120.0, "ns")), (0.26912, "ms", (269_120.0, "ns")),
    (0.26912, "msecond", (269_120.0, "ns")), (5.0, "nsecond", (5.0, "ns")),
    (1.5, "Gbyte", (1.5e9, "byte")), (2.0, "Kbyte", (2000.0, "byte")),
    (1.0, "Kibyte", (1024.0, "byte")), (3.2, "Ghz", (3.2e9, "hz")),
    (1.1, "Tbyte/s", (1.1e12, "byte/s")), (4.0, "sector/ns", (4e9, "sector/s")),
    (1.5, "Kbyte/block", (1500.0, "byte/block")), (1.5, "Kbyte/cycle", (1500.0, "byte/cycle")),
    (3.0, "Minst", (3e6, "inst")), (95.5, "%", (95.5, "%")),
    (28.0, "register/thread", (28.0, "register/thread")), (7.0, "", (7.0, "")),
])
def test_display_units_become_base_units(value, unit, want):
    got = to_base(value, unit)
    assert got[1] == want[1]
    assert got[0] == pytest.approx(want[0])


def _pages(folder, raw):
    page = lambda stem: gzip.decompress((folder / f"{stem}.csv.gz").read_bytes()).decode()  # noqa: E731
    return csv_reader.dump_pages(page(raw), page("details"))


@pytest.mark.parametrize("collection", ["default", "full"])
def test_a_raw_page_in_display_units_reads_like_the_base_one(collection):
    """Recorded on an H200: the same report exported with and without --print-units base.
    The display page's units row says ms, Gbyte, Ghz, Tbyte/s...: every value must come out
    equal to display precision (ncu prints 6 decimals in the column's unit, so a small value in
    a large unit keeps 2-3 significant digits)."""
    folder = FIXTURES / collection / "first"
    base, display = _pages(folder, "raw"), _pages(folder, "raw_display")
    rows = csv_reader._rows(gzip.decompress((folder / "raw_display.csv.gz").read_bytes())
                            .decode())
    step = {name: to_base(1e-6, unit)[0] for name, unit in zip(rows[0], rows[1], strict=True)}
    compared = 0
    for kb, kd in zip(base["kernels"], display["kernels"], strict=True):
        for name, (value, unit) in kb["metrics"].items():
            if name.startswith("derived__pct_occupancy_per_shared_mem_size"):
                continue  # ncu's own base page scales this one differently from its display
            other = kd["metrics"].get(name)
            if other is None or isinstance(value, str):
                continue
            assert other[1] == unit, name
            assert other[0] == pytest.approx(value, rel=1e-3, abs=max(0.011, step[name])), name
            compared += 1
    assert compared > 1000


def test_durations_of_short_and_long_kernels_survive_display_units():
    """The display page prints gpu__time_duration in ms for every row (the first kernel's
    unit): a 2.4 µs kernel must not become 2.4 ms, nor a 0.27 ms one 0.27 ns."""
    display = _pages(FIXTURES / "default" / "first", "raw_display")
    by_name = {k["name"]: k["metrics"]["gpu__time_duration.sum"] for k in display["kernels"]}
    assert by_name["tiny_add"][1] == "ns" and 2_000 < by_name["tiny_add"][0] < 3_000
    assert 250_000 < by_name["uncoalesced"][0] < 300_000


def test_a_details_page_alone_carries_the_section_summaries(tmp_path):
    text = gzip.decompress((FIXTURES / "full" / "first" / "details_display.csv.gz")
                           .read_bytes()).decode()
    assert csv_reader.page_kind(text) == "details"
    path = tmp_path / "app_details.csv"
    path.write_text(text)
    profile = read_report(path, load_settings())
    tiny = next(k for k in profile.kernels if k.name == "tiny_add")
    assert tiny.metrics["gpu__time_duration.sum"].unit == "ns"
    assert 2_000 < tiny.value("gpu__time_duration.sum") < 3_000
    assert tiny.value("launch__grid_size") == 256
    assert tiny.value("smsp__thread_inst_executed_per_inst_executed.ratio") is not None
    assert any(r.rule for r in tiny.rules)


def test_one_raw_page_is_read_as_a_file_gzipped_or_not(tmp_path):
    data = (FIXTURES / "default" / "first" / "raw_display.csv.gz").read_bytes()
    (tmp_path / "raw.csv.gz").write_bytes(data)
    (tmp_path / "plain.csv").write_bytes(gzip.decompress(data))
    for name in ("raw.csv.gz", "plain.csv"):
        profile = read_report(tmp_path / name, load_settings())
        assert len(profile.kernels) == 47


def test_a_profile_json_gz_needs_no_ncu(tmp_path):
    profile = read_report(FIXTURES / "default" / "first", load_settings())
    path = tmp_path / "p.profile.json.gz"
    path.write_bytes(gzip.compress(json.dumps(profile.to_json()).encode()))
    again = read_report(path, load_settings().with_(ncu=None))
    assert [k.name for k in again.kernels] == [k.name for k in profile.kernels]


def test_a_page_that_is_not_ncus_says_so(tmp_path):
    (tmp_path / "x.csv").write_text("name,value\na,1\n")
    with pytest.raises(ReportError, match="not an ncu CSV raw or details page"):
        read_report(tmp_path / "x.csv", load_settings())


@pytest.mark.parametrize("page", ["raw", "details"])
def test_a_page_of_a_header_only_says_it_has_no_launch_rows(tmp_path, page):
    """Issue 35: a header-only page said "(no ID header)" although its header has ID."""
    text = gzip.decompress((FIXTURES.parent / "profiles" / "uncoalesced" / f"{page}.csv.gz")
                           .read_bytes()).decode()
    path = tmp_path / f"{page}.csv"
    path.write_text(text.splitlines()[0] + "\n")
    with pytest.raises(ReportError, match="header but no launch rows") as caught:
        read_report(path, load_settings())
    assert "no ID" not in str(caught.value) and str(path) in str(caught.value)
