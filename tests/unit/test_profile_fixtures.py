"""Recorded ncu data from an NVIDIA H200 (2026-11-21; tests/fixtures/profiles/README.md):
the CSV fallback reader, normalization, diagnosis and explain, all without a GPU or ncu."""

from __future__ import annotations

import gzip
import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.backends.cuda import collect as col
from pragma_ncu.backends.cuda.diagnosis import diagnose
from pragma_ncu.backends.cuda.diagnosis import signals as sig
from pragma_ncu.backends.cuda.diagnosis.quantities import QUANTITY_LIST
from pragma_ncu.cli.main import cli
from pragma_ncu.diagnose.cite import metric_names
from pragma_ncu.infra.errors import ToolchainError
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.profile.profiles import Profile, profile_from_json
from pragma_ncu.profile.read import ReportError, read_csv_folder, read_report

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "profiles"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
PLANTED = tomllib.loads((ROOT / "examples" / "planted" / "expected.toml").read_text())
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.toml"))


def recorded(name: str) -> Profile:
    """The profile.json the ncu_report reader produced on the GPU machine."""
    return profile_from_json(json.loads(gzip.decompress(
        (FIXTURES / name / "profile.json.gz").read_bytes())))


def test_every_example_and_planted_kernel_has_a_fixture():
    assert set(EXAMPLES) | set(PLANTED) <= set(NAMES)
    for name in EXAMPLES:
        assert (FIXTURES / name / "report.ncu-rep").stat().st_size > 10_000


@pytest.mark.parametrize("name", NAMES)
def test_csv_reader_matches_the_ncu_report_reader(name):
    via_csv = read_csv_folder(FIXTURES / name).kernels
    api = recorded(name).kernels
    assert len(via_csv) == len(api) == 1
    a, c = api[0], via_csv[0]
    assert (c.name, c.mangled) == (a.name, a.mangled)
    missing = set(a.metrics) - set(c.metrics)
    assert missing <= {"launch__kernel_name"}, missing  # a string the raw page leaves out
    for metric, m in a.metrics.items():
        if metric in missing:
            continue
        other = c.metrics[metric]
        assert other.unit == m.unit, metric
        if isinstance(m.value, float):  # the CSV page rounds to two decimals
            assert isinstance(other.value, float)
            assert abs(other.value - m.value) <= max(0.0051, 1e-4 * abs(m.value)), metric
    assert {(r.section, r.rule) for r in c.rules} == {(r.section, r.rule) for r in a.rules}


@pytest.mark.parametrize("name", NAMES)
def test_normalized_rules_and_hot_lines(name):
    k = read_csv_folder(FIXTURES / name).kernels[0]
    assert k.rules and all(r.kind in ("OPT", "INF", "WRN") for r in k.rules)
    assert all("@section:" not in r.message for r in k.rules)
    assert k.hotspots, "source counters were collected, so there are hot lines"
    assert any(h.file == f"examples/{'planted/' if name in PLANTED else ''}{name}.cu"
               for h in k.hotspots)
    assert all(h.samples >= 0 and h.line > 0 for h in k.hotspots)


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_explain_names_the_planted_cause_first(name, knowledge):
    profile = read_csv_folder(FIXTURES / name)
    d = diagnose(profile.kernels[0], knowledge, ceiling_gbps=4100.0)
    assert d.classification == PLANTED[name]["cause"], [(f.bottleneck, f.score)
                                                         for f in d.findings]
    assert d.findings[0].actions, "the compendium has a strategy for every cause"


@pytest.mark.parametrize("name", NAMES)
def test_every_metric_explain_mentions_is_in_the_compendium(name, knowledge):
    d = diagnose(recorded(name).kernels[0], knowledge)
    assert not d.uncited
    mentioned = {n for f in d.findings for e in f.evidence for n in metric_names(e.metric)}
    assert mentioned <= {c.metric for c in d.citations}


def test_default_metric_set_has_compendium_entries(knowledge):
    """Every metric our collection asks for and every metric any quantity can be read from
    is explained by the compendium."""
    names = set(col.DIAGNOSIS_METRICS) | set(sig.LIMITERS)
    names |= {n for quantity in QUANTITY_LIST for source in quantity.sources
              for n in metric_names(source.label)}
    names |= {sig.stall_name(r) for r in ("long_scoreboard", "barrier", "mio_throttle",
                                          "short_scoreboard", "drain", "lg_throttle")}
    names |= {sig.SAMPLED_PREFIX + r for r in ("long_scoreboard", "barrier")}
    missing = sorted(n for n in names if knowledge.lookup(n) is None)
    assert not missing


def test_bandwidth_kernel_is_not_ranked_by_ncus_generic_rule(knowledge):
    """The DEVICE.md lesson: ncu put 'low utilization' first for a kernel at the roofline."""
    k = recorded("bandwidth_ok").kernels[0]
    d = diagnose(k, knowledge)
    assert d.classification == "memory_bandwidth"
    assert d.roofline.dram_peak_pct is not None and d.roofline.dram_peak_pct > 80
    assert d.guidance and d.guidance[0].rule != "UncoalescedGlobalAccess"


def test_profile_json_round_trips(tmp_path):
    p = recorded("silu_and_mul")
    p.save(tmp_path / "p.json")
    again = read_report(tmp_path / "p.json", load_settings())
    assert again == p


def test_bad_inputs_say_what_is_wrong(tmp_path):
    with pytest.raises(ReportError, match="neither raw.csv nor details.csv"):
        read_csv_folder(tmp_path)
    (tmp_path / "raw.csv").write_text("not,a,report\n1,2,3\n")
    with pytest.raises(ReportError, match="raw"):
        read_csv_folder(tmp_path)
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(ReportError, match="not valid JSON"):
        read_report(tmp_path / "x.json", load_settings())
    with pytest.raises(ReportError, match="no such report"):
        read_report(tmp_path / "missing.ncu-rep", load_settings())
    (tmp_path / "page.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ReportError, match="not an ncu CSV raw or details page"):
        read_report(tmp_path / "page.csv", load_settings())
    (tmp_path / "bin.csv.gz").write_bytes(b"\x00\x01 not gzip")
    with pytest.raises(ReportError, match="a truncated or corrupt gzip file"):
        read_report(tmp_path / "bin.csv.gz", load_settings())


def test_ncu_rep_without_ncu_says_how_to_proceed(tmp_path):
    settings = load_settings().with_(ncu=None)
    with pytest.raises(ToolchainError, match="needs Nsight Compute"):  # the environment's
        read_report(FIXTURES / "silu_and_mul" / "report.ncu-rep", settings)


@pytest.mark.parametrize("fmt", ["table", "md", "json"])
def test_explain_cli_on_fixtures(fmt):
    result = CliRunner().invoke(cli, ["explain", str(FIXTURES / "bank_conflicts"),
                                      "--format", fmt])
    assert result.exit_code == 0, result.output
    if fmt == "json":
        data = json.loads(result.output)
        assert data["kernels"][0]["classification"] == "shared_bank_conflicts"
        assert data["kernels"][0]["citations"]
    else:
        assert "shared_bank_conflicts" in result.output and "ncu" in result.output


def test_explain_cli_unknown_kernel_lists_the_names():
    result = CliRunner().invoke(cli, ["explain", str(FIXTURES / "atomics"), "--kernel", "nope"])
    # bad input (exit 2), naming the kernel asked for and the one the report holds
    assert result.exit_code == 2, result.output
    assert "no kernel matches 'nope'" in result.output
    assert "the report holds: atomics" in result.output


def test_a_report_of_many_kernels_is_explained_kernel_by_kernel():
    """CSV pages of an ncu report of a whole program (`bench` of softmax, ten launches): one
    entry per kernel group, every launch kept in the JSON; --kernel gives one group's section."""
    multi = ROOT / "tests" / "fixtures" / "profiles_multi"
    result = CliRunner().invoke(cli, ["explain", str(multi), "--format", "json"])
    assert result.exit_code == 0, result.output
    groups = json.loads(result.output)["application"]["groups"]
    names = [g["name"] for g in groups]
    assert sum(len(g["launches"]) for g in groups) == 10 and "softmax" in names
    assert len(names) == len(set(names)) >= 4
    one = CliRunner().invoke(cli, ["explain", str(multi), "--kernel", "softmax"])
    assert one.exit_code == 0 and one.output.count("\nKernel ") == 1
    assert one.output.startswith("Kernel group softmax")
