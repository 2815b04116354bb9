"""Reading the launches of a large report light (pragma_ncu.profile.launches): what is parsed
for every launch, that a full launch read on demand equals the whole-report read, the
ncu_report passes (--light, --actions) on a fake ncu_report module, and the demangler."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pragma_ncu.infra.settings import load_settings
from pragma_ncu.profile import ncu_dump
from pragma_ncu.profile.csv_reader import dump_pages
from pragma_ncu.profile.demangle import demangle
from pragma_ncu.profile.launches import LIGHT_METRICS, csv_launches
from pragma_ncu.profile.read import ReportError, read_csv_file, read_csv_folder, read_launches
from tests.synthetic_app import reordered

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "corpus" / "default" / "first"
PROFILES = ROOT / "tests" / "fixtures" / "profiles"


def page(folder: Path, name: str) -> str:
    return gzip.decompress((folder / f"{name}.csv.gz").read_bytes()).decode()


def test_light_launches_carry_only_what_grouping_needs_and_full_ones_everything():
    launches = read_launches(CORPUS, load_settings())
    whole = read_csv_folder(CORPUS)
    assert len(launches.profile.kernels) == len(whole.kernels) == 47
    for light in launches.profile.kernels:
        assert set(light.metrics) <= set(LIGHT_METRICS) and not light.rules
        assert light.value("gpu__time_duration.sum") is not None
    full = launches.full([3, 16, 40])
    assert set(full) == {3, 16, 40}
    for i, k in full.items():
        assert k == whole.kernels[i]  # every metric, the details page's rules and summaries


def test_source_rows_are_read_for_the_launches_asked_for(tmp_path):
    folder = tmp_path / "k"
    shutil.copytree(PROFILES / "uncoalesced", folder)
    whole = read_csv_folder(folder)
    got = read_launches(folder, load_settings()).full([0])[0]
    assert got.hotspots and got == whole.kernels[0]


def test_a_raw_page_file_alone_and_bad_pages(tmp_path):
    raw = tmp_path / "raw.csv.gz"
    shutil.copy(CORPUS / "raw.csv.gz", raw)
    launches = read_launches(raw, load_settings())
    assert len(launches.profile.kernels) == 47
    assert launches.full([0])[0] == read_csv_file(raw).kernels[0]
    with pytest.raises(ValueError, match="header has no 'ID' and 'Kernel Name' column"):
        csv_launches("a,b\n1,2\n", "")
    with pytest.raises(ValueError, match="details"):
        csv_launches(page(CORPUS, "raw"), "x,y\n1,2\n")
    with pytest.raises(KeyError):
        launches.full([999])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match="neither raw.csv nor details.csv"):
        read_launches(tmp_path / "empty", load_settings())


def test_a_truncated_row_is_an_error_naming_it_in_both_reads():
    """A launch silently dropped would change what triage judges: both reads refuse the
    page and say which record is short."""
    text = page(CORPUS, "raw")
    lines = text.splitlines()
    cut = "\n".join([*lines[:3], lines[3][: len(lines[3]) // 2], *lines[4:]])
    with pytest.raises(ValueError, match="record 4 of the raw page has .* cells where the "
                       "header has 566"):
        csv_launches(cut, "")
    with pytest.raises(ValueError, match="record 4 of the raw page"):
        dump_pages(cut, "")


@pytest.mark.parametrize("order", ["reversed", "rotated"])
def test_pages_with_their_columns_in_another_order_read_the_same(tmp_path, order):
    """Issue 35: columns are found by their header's name in every page and both reads."""
    folder = PROFILES / "layernorm"  # its source rows all fit the header
    for name in ("raw", "details", "source"):
        (tmp_path / f"{name}.csv").write_text(reordered(page(folder, name), order))
    whole = read_csv_folder(folder)
    assert read_csv_folder(tmp_path).kernels == whole.kernels
    assert whole.kernels[0].hotspots  # the source page was read
    assert read_launches(tmp_path, load_settings()).full([0])[0] == whole.kernels[0]


# --- ncu_report's two passes, on a fake module ---------------------------------------------------


class FakeMetric:
    def __init__(self, value: Any, unit: str = "") -> None:
        self._value, self._unit = value, unit

    def value(self) -> Any:
        return self._value

    def unit(self) -> str:
        return self._unit

    def has_correlation_ids(self) -> bool:
        return False


class FakeAction:
    def __init__(self, i: int) -> None:
        self.i = i
        self.metrics = {"gpu__time_duration.sum": FakeMetric(1000.0 + i, "nsecond"),
                        "launch__grid_size": FakeMetric(64), "sm__other": FakeMetric(5.0)}
        self.read: list[str] = []

    def name(self, base: Any = None) -> str:
        return f"k{self.i % 2}" if base is None else f"{base}:k{self.i % 2}"

    def metric_names(self) -> list[str]:
        self.read.append("*")
        return list(self.metrics)

    def metric_by_name(self, name: str) -> FakeMetric | None:
        self.read.append(name)
        return self.metrics.get(name)

    def rule_results_as_dicts(self) -> list[dict[str, Any]]:
        return []

    def source_files(self) -> dict[str, str]:
        return {}


def fake_module(actions: list[FakeAction]) -> Any:
    rng = SimpleNamespace(num_actions=lambda: len(actions), action_by_idx=lambda a: actions[a])
    context = SimpleNamespace(num_ranges=lambda: 1, range_by_idx=lambda r: rng)
    iaction = SimpleNamespace(NameBase_MANGLED="m", NameBase_DEMANGLED="d")
    return SimpleNamespace(load_report=lambda path: context, IAction=iaction)


def test_the_light_pass_reads_only_the_light_metrics():
    actions = [FakeAction(i) for i in range(4)]
    out = ncu_dump.dump("r.ncu-rep", fake_module(actions), light=LIGHT_METRICS)
    assert [k["index"] for k in out["kernels"]] == [0, 1, 2, 3]
    assert out["kernels"][1]["metrics"] == {"gpu__time_duration.sum": [1001.0, "nsecond"],
                                            "launch__grid_size": [64, ""]}
    assert all("*" not in a.read and "sm__other" not in a.read for a in actions)
    assert "rules" not in out["kernels"][0]


def test_the_full_pass_reads_only_the_actions_asked_for():
    actions = [FakeAction(i) for i in range(4)]
    out = ncu_dump.dump("r.ncu-rep", fake_module(actions), actions=frozenset({2}))
    (k,) = out["kernels"]
    assert k["index"] == 2 and k["metrics"]["sm__other"] == [5.0, ""] and k["rules"] == []
    assert not actions[0].read and not actions[3].read


def test_demangling_through_cxxfilt():
    cxxfilt = load_settings().cxxfilt
    if cxxfilt is None:
        pytest.skip("no c++filt on this machine")
    names = demangle(["_Z4workILi17EEvPfPKfi", "plain", "_Znot a symbol"], cxxfilt)
    assert names == {"_Z4workILi17EEvPfPKfi": "void work<17>(float*, float const*, int)"}
    assert demangle(["_Z4workILi17EEvPfPKfi"], None) == {}
    assert demangle(["_Z4workILi17EEvPfPKfi"], "/no/such/c++filt") == {}


# --- a .ncu-rep through a stand-in ncu_report, end to end (subprocesses included) -------------

FAKE_NCU_REPORT = '''
"""A stand-in for ncu's ncu_report module (tests only): a "report" is a report's first bytes
(NVR and a NUL) then a JSON list of actions, each {"name", "metrics": {name: [value, unit]}};
every metric read is logged beside it."""
import json


class IAction:
    NameBase_MANGLED, NameBase_DEMANGLED = "mangled", "demangled"


class _Metric:
    def __init__(self, value, unit):
        self._v, self._u = value, unit

    def value(self):
        return self._v

    def unit(self):
        return self._u

    def has_correlation_ids(self):
        return False


class _Action:
    def __init__(self, data, log):
        self.data, self.log = data, log

    def name(self, base=None):
        return self.data["name"]

    def metric_names(self):
        return list(self.data["metrics"])

    def metric_by_name(self, name):
        self.log.write(name + "\\n")
        found = self.data["metrics"].get(name)
        return _Metric(*found) if found else None

    def rule_results_as_dicts(self):
        return []

    def source_files(self):
        return {}


class _Range:
    def __init__(self, actions):
        self.actions = actions

    def num_actions(self):
        return len(self.actions)

    def action_by_idx(self, i):
        return self.actions[i]


class _Context:
    def __init__(self, actions):
        self.rng = _Range(actions)

    def num_ranges(self):
        return 1

    def range_by_idx(self, i):
        return self.rng


def load_report(path):
    log = open(path + ".read.log", "a")
    return _Context([_Action(a, log) for a in json.loads(open(path, "rb").read()[4:])])
'''


def test_an_ncu_rep_is_read_light_then_full_through_ncu_report(tmp_path):
    import json
    import os
    import stat

    from pragma_ncu.infra.settings import load_settings as settings_from

    (tmp_path / "py").mkdir()
    (tmp_path / "py" / "ncu_report.py").write_text(FAKE_NCU_REPORT)
    ncu = tmp_path / "ncu"
    ncu.write_text("#!/bin/sh\necho 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
                   "echo 'Version 2025.3.1.0 (build 1) (public-release)'\n")
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    actions = [{"name": f"k{i % 3}", "metrics": {
        "gpu__time_duration.sum": [1000.0 + i, "nsecond"], "launch__grid_size": [64, ""],
        "sm__heavy_metric": [float(i), ""]}} for i in range(30)]
    report = tmp_path / "app.ncu-rep"
    report.write_bytes(b"NVR\x00" + json.dumps(actions).encode())  # starts as a report does
    settings = settings_from({**os.environ, "PRAGMA_NCU_NCU": str(ncu),
                              "PRAGMA_NCU_NCU_PYTHON": str(tmp_path / "py")})
    launches = read_launches(report, settings, reader="ncu_report")
    assert len(launches.profile.kernels) == 30 and launches.profile.ncu_version == "2025.3.1.0"
    assert all("sm__heavy_metric" not in k.metrics for k in launches.profile.kernels)
    log = (tmp_path / "app.ncu-rep.read.log")
    assert "sm__heavy_metric" not in log.read_text()  # the light pass never asked for it
    full = launches.full([4, 29])
    assert full[29].value("sm__heavy_metric") == 29.0 and full[4].name == "k1"
    assert log.read_text().count("sm__heavy_metric") == 2  # only the two launches asked for


def test_a_line_break_inside_a_quoted_cell_stays_in_its_record():
    details = page(CORPUS, "details")
    lines = details.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('"5"') and "OPT" in line)
    lines[at] = lines[at].replace("The ", "The\nfirst ", 1)
    text = "\n".join(lines)
    whole = read_csv_folder(CORPUS)  # for the metrics; the rule's text differs by the break
    launch = csv_launches(page(CORPUS, "raw"), text).full([5])[5]
    assert launch.metrics == whole.kernels[5].metrics
    assert any("The first " in r.message for r in launch.rules)  # one record, one rule
    assert len(launch.rules) == len(whole.kernels[5].rules)


def test_a_template_instantiation_keeps_its_arguments_in_its_name():
    """ncu_report's default action name drops template arguments ("work" for every work<N>);
    the name is taken from the demangled signature instead, as the CSV pages give it."""
    from pragma_ncu.profile import normalize

    raw = {"kernels": [{"index": 0, "name": "work", "mangled": "_Z4workILi17EEvPfPKfi",
                        "display_name": "void work<17>(float *, const float *, int)"},
                       {"index": 1, "name": "scale", "mangled": "scale",
                        "display_name": "scale"}]}
    kernels = normalize.from_raw(raw).kernels
    assert [k.name for k in kernels] == ["work<17>", "scale"]


def test_a_metric_ncu_could_not_compute_is_left_out_by_both_readers():
    """`--set full` exports `derived_tempMetric4` as "nan" on most kernels (recorded on an
    H200, tests/fixtures/corpus/full/first); ncu_report gives the same as a float NaN. Neither
    reader's profile keeps it: a detector never sees NaN, nor text where a number belongs."""
    import math

    from pragma_ncu.profile import normalize

    folder = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "full" / "first"
    for profile in (read_csv_folder(folder), read_csv_file(folder / "raw_display.csv.gz")):
        values = [m.value for k in profile.kernels for m in k.metrics.values()]
        assert values and not any(normalize.not_a_number(v) for v in values)
        assert sum("derived_tempMetric4" in k.metrics for k in profile.kernels) == 4
    raw = {"kernels": [{"index": 0, "name": "k", "metrics": {
        "derived_tempMetric4": [math.nan, ""], "a": [math.inf, ""], "b": ["-nan", ""],
        "c": [1.5, "ms"], "d": ["Hit", ""]}}]}
    kept = normalize.from_raw(raw).kernels[0].metrics
    assert {name: m.value for name, m in kept.items()} == {"c": 1.5, "d": "Hit"}


@pytest.mark.parametrize("display, name", [
    # recorded on an H200 (ncu 2025.3.1, examples/apps/pipeline.cu): the same kernel as
    # ncu_report's demangled name and as the CSV details page name it
    ("void relu_block<(int)256>(float *, const float *, int)", "relu_block<256>"),
    ("void relu_block<256>(float *, const float *, int)", "relu_block<256>"),
    # c++filt on the raw page's mangled symbol
    ("void relu_block<256>(float*, float const*, int)", "relu_block<256>"),
    ("void k<(unsigned int)4, (bool)1, (long)-5>(int)", "k<4, true, -5>"),
    ("void k<4u, true, -5l>(int)", "k<4, true, -5>"),
    ("void ns::gemm<float, 128, 64>(float *)", "ns::gemm<float, 128, 64>"),
    ("void k<3.5f, f2x>(int)", "k<3.5f, f2x>"),
    ("silu_and_mul", "silu_and_mul"),
])
def test_either_readers_template_arguments_give_one_name(display, name):
    from pragma_ncu.profile.demangle import function_name

    assert function_name(display) == name
