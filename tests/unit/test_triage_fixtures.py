"""The planted regression pairs (examples/regressions/): their specs, and, once recorded on the
GPU machine by tools/record_regressions.py, triage of the recordings in
tests/fixtures/regressions/<pair>/ (skipped until they exist)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli
from pragma_ncu.knowledge.schema import BOTTLENECKS
from pragma_ncu.spec.file import load_spec

ROOT = Path(__file__).resolve().parents[2]
PAIRS_DIR = ROOT / "examples" / "regressions"
EXPECTED = tomllib.loads((PAIRS_DIR / "expected.toml").read_text())
RECORDED = ROOT / "tests" / "fixtures" / "regressions"


@pytest.mark.parametrize("pair", sorted(EXPECTED))
def test_every_pair_has_two_loadable_sides_with_one_reference(pair):
    exp = EXPECTED[pair]
    assert exp["cause"] in BOTTLENECKS or (exp["cause"] == "" and not exp["regression"])
    specs = [load_spec(PAIRS_DIR / exp[s]["spec"], PAIRS_DIR / exp[s]["kernel"])
             for s in ("base", "new")]
    assert all(s.source_path.is_file() for s in specs)
    assert specs[0].kernel_name == specs[1].kernel_name  # "the same kernel", two versions
    assert specs[0].reference.function == specs[1].reference.function
    assert [a.name for a in specs[0].args] == [a.name for a in specs[1].args]
    assert specs[0].shapes[0] == specs[1].shapes[0]


@pytest.mark.parametrize("pair", sorted(EXPECTED))
def test_triage_of_the_recorded_pair_names_the_planted_cause(pair):
    folder = RECORDED / pair
    if not (folder / "base").is_dir() or not (folder / "new").is_dir():
        pytest.skip(f"{pair} not recorded yet: run tools/record_regressions.py on a GPU machine")
    exp = EXPECTED[pair]
    result = CliRunner().invoke(cli, ["triage", str(folder / "base"), str(folder / "new"),
                                      "--format", "json"])
    assert result.exit_code == (1 if exp["regression"] else 0), result.output
    data = json.loads(result.output)
    k = data["kernels"][0]
    assert k["duration"]["basis"] == "timing", "both sides carry a timing.json"
    if exp["regression"]:
        assert k["verdict"] == "regression"
        assert k["top_cause"] == exp["cause"], [(c["bottleneck"], c["score"])
                                                 for c in k["causes"]]
    else:
        assert k["verdict"] == "unchanged"
    text = CliRunner().invoke(cli, ["triage", str(folder / "base"), str(folder / "new")])
    assert max(len(line) for line in text.output.splitlines()) <= 100
