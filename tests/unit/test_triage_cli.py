"""`pragma-ncu triage` as a CI gate: exit statuses, JSON output, timing.json sidecars and clear
messages for bad inputs, on the recorded H200 profiles (no GPU, no ncu)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pragma_ncu import api
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import InputError
from pragma_ncu.infra.store import Store
from pragma_ncu.measure.stats import summarize
from pragma_ncu.triage.load import read_timings, timing_path, write_timings
from pragma_ncu.triage.report import Timing

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "profiles"


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["triage", *map(str, args)])


def copy_side(name: str, dest: Path, *medians: float, spread: float = 0.005) -> Path:
    """A recorded fixture folder, with a timing.json of runs around `medians` µs."""
    shutil.copytree(FIXTURES / name, dest)
    if medians:
        runs = tuple(summarize([m * (1 - spread), m, m * (1 + spread)] * 20) for m in medians)
        write_timings(dest / "timing.json", (Timing(name, runs),), shape="h200")
    return dest


def test_the_same_profile_twice_exits_0():
    result = run(FIXTURES / "softmax", FIXTURES / "softmax")
    assert result.exit_code == 0, result.output
    assert "no regression" in result.output and "1 kernel groups unchanged" in result.output
    drilled = run(FIXTURES / "softmax", FIXTURES / "softmax", "--kernel", "softmax")
    assert drilled.exit_code == 0 and "UNCHANGED" in drilled.output


def test_a_regression_exits_1_with_json_naming_the_cause():
    result = run(FIXTURES / "bandwidth_ok", FIXTURES / "uncoalesced", "--match", "order",
                 "--format", "json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["verdict"] == "regression" and data["exit_code"] == 1
    k = data["kernels"][0]
    assert k["verdict"] == "regression" and k["top_cause"] == "uncoalesced_access"
    assert k["duration"]["basis"] == "ncu" and k["duration"]["delta_pct"] > 100
    assert k["metrics"] and k["rules"] and k["lines"] and k["checks"] and k["diagnosis"]
    assert data["summary"] == {"regression": 1, "improvement": 0, "undecided": 0,
                               "unchanged": 0, "swapped": 0, "added": 0, "removed": 0}
    assert [(c["kind"], c["name"]) for c in data["changes"]] == [("regression", k["name"])]


def test_threshold_decides_a_single_sample_comparison():
    args = (FIXTURES / "bandwidth_ok", FIXTURES / "uncoalesced", "--kernel",
            "bandwidth_ok=uncoalesced")
    assert run(*args).exit_code == 1
    assert run(*args, "--threshold", "200").exit_code == 0


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_text_and_markdown_fit_a_terminal(fmt):
    args = (FIXTURES / "register_pressure", FIXTURES / "bank_conflicts", "--match", "order",
            "--format", fmt)
    result = run(*args)
    assert result.exit_code == 1, result.output
    assert "shared_bank_conflicts" in result.output
    detail = run(*args, "--kernel", "register_pressure=bank_conflicts")
    assert detail.exit_code == 1, detail.output
    if fmt == "text":
        assert max(len(line) for line in result.output.splitlines()) <= 100
        assert max(len(line) for line in detail.output.splitlines()) <= 100
        assert "What to check:" in detail.output and "What to check:" not in result.output
    else:
        assert result.output.startswith("## pragma-ncu triage") and "|---" in result.output
        assert detail.output.startswith("# pragma-ncu triage") and "|---" in detail.output


def test_timing_json_turns_the_verdict_into_a_noise_aware_one(tmp_path):
    """Same profile on both sides, but repeated timings 20% apart: the timings decide."""
    base = copy_side("layernorm", tmp_path / "base", 60.0, 60.3, 59.8)
    new = copy_side("layernorm", tmp_path / "new", 72.0, 72.2, 71.9)
    result = run(base, new, "--format", "json")
    assert result.exit_code == 1, result.output
    d = json.loads(result.output)["kernels"][0]["duration"]
    assert d["basis"] == "timing" and d["beyond_noise"] is True
    assert d["delta_pct"] == pytest.approx(20.0, abs=0.5)
    noisy = copy_side("layernorm", tmp_path / "noisy", 60.0, 75.0, 50.0)
    result = run(base, noisy, "--format", "json")
    assert result.exit_code == 0, result.output  # noise never fails the gate
    d = json.loads(result.output)["kernels"][0]["duration"]
    assert d["beyond_noise"] is False and d["verdict"] == "undecided"
    text = run(base, noisy)
    assert text.exit_code == 0 and "too noisy to decide" in text.output, text.output


def test_timing_sidecars_are_found_beside_files_and_round_trip(tmp_path):
    profile = tmp_path / "k-h200.profile.json"
    profile.write_bytes(gzip.decompress((FIXTURES / "sgemm" / "profile.json.gz").read_bytes()))
    assert timing_path(profile) is None
    t = Timing("sgemm", (summarize([1.0, 2.0, 3.0]),))
    write_timings(tmp_path / "k-h200.timing.json", (t,))
    assert timing_path(profile) == tmp_path / "k-h200.timing.json"
    assert read_timings(tmp_path / "k-h200.timing.json")[0].runs == t.runs
    result = run(profile, profile, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["kernels"][0]["duration"]["basis"] == "timing"


def test_gzipped_profile_json_is_a_side():
    gz = FIXTURES / "small_grid" / "profile.json.gz"
    result = run(gz, FIXTURES / "small_grid", "--format", "json")
    assert result.exit_code == 0, result.output
    sides = json.loads(result.output)
    assert sides["base"]["kind"] == "profile-json" and sides["new"]["kind"] == "csv-folder"


# --- bad inputs: a clear one-line message and exit status 2 ----------------------------------


def assert_input_error(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, result.output


def test_missing_file(tmp_path):
    assert_input_error(run(tmp_path / "nope.ncu-rep", FIXTURES / "atomics"),
                       "BASE", "no such file or folder")
    assert_input_error(run(FIXTURES / "atomics", tmp_path / "gone.cu"), "kernel file not found")


def test_a_file_that_is_not_a_report(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("kernel got slower\n")
    assert_input_error(run(FIXTURES / "atomics", notes), "NEW", "not a report", ".ncu-rep")
    bad_json = tmp_path / "x.json"
    bad_json.write_text("{")
    assert_input_error(run(bad_json, FIXTURES / "atomics"), "not valid JSON")
    (tmp_path / "empty").mkdir()
    assert_input_error(run(tmp_path / "empty", FIXTURES / "atomics"), "no report in this folder")


def test_reports_with_no_common_kernel():
    assert_input_error(run(FIXTURES / "atomics", FIXTURES / "barrier"),
                       "no kernel in common", "atomics", "barrier", "--kernel OLD=NEW")


def test_unknown_kernel_filter_lists_the_names():
    assert_input_error(run(FIXTURES / "atomics", FIXTURES / "atomics", "--kernel", "nope"),
                       "no kernel matches 'nope'", "atomics")


def test_a_run_side_says_what_is_missing(tmp_path):
    store = tmp_path / "runs.sqlite"
    assert_input_error(run("run:42", FIXTURES / "atomics", "--store", store),
                       "BASE run:42", f"no run store at {store}")
    Store.open(store).close()
    assert_input_error(run("run:42", FIXTURES / "atomics", "--store", store),
                       "no run '42'")


def test_a_broken_timing_json(tmp_path):
    side = copy_side("atomics", tmp_path / "a")
    (side / "timing.json").write_text('{"schema": 1, "timings": [{"kernel": "atomics"}]}')
    assert_input_error(run(side, FIXTURES / "atomics"), "not a usable timing.json")


def test_bad_options_are_usage_errors():
    result = run(FIXTURES / "atomics", FIXTURES / "atomics", "--threshold", "-1")
    assert result.exit_code == 2
    result = run(FIXTURES / "atomics", FIXTURES / "atomics", "--format", "xml")
    assert result.exit_code == 2


@pytest.mark.parametrize("threshold", ["nan", "NaN", "inf", "-inf", "1e9"])
def test_a_threshold_that_is_not_a_percentage_is_a_usage_error(threshold):
    """Issue 35: `--threshold nan` said "no regression at nan%" and exited 0 on a pair that
    regresses by +11,159% (NaN fails every comparison, so no bound refused it)."""
    args = (FIXTURES / "bandwidth_ok", FIXTURES / "uncoalesced", "--kernel",
            "bandwidth_ok=uncoalesced")
    result = run(*args, "--threshold", threshold)
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--threshold'" in result.output
    assert "no regression" not in result.output


@pytest.mark.parametrize(("command", "option"), [
    ("triage", "--timeout"), ("explain", "--ceiling-gbps"), ("explain", "--timeout"),
    ("profile", "--timeout"), ("bench", "--timeout"), ("bench", "--budget-ms"),
    ("tune", "--target"), ("tune", "--time-budget"), ("tune", "--llm-timeout"),
    ("autotune", "--time-budget"), ("autotune", "--timeout")])
def test_every_float_option_takes_only_a_finite_number(command, option):
    args = {"triage": [FIXTURES / "atomics", FIXTURES / "atomics"],
            "explain": [FIXTURES / "atomics"]}.get(command, ["--kernel", "k.cu"])
    for value in ("nan", "inf"):
        result = CliRunner().invoke(cli, [command, *map(str, args), option, value])
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '{option}'" in result.output


def test_the_library_refuses_them_too():
    """The API checks the same bounds at the call (pragma_ncu.infra.bounds): bad input."""
    with pytest.raises(InputError, match="'threshold' takes a finite number >= 0"):
        api.triage(FIXTURES / "atomics", FIXTURES / "atomics", threshold=float("nan"))
    with pytest.raises(InputError, match="'ceiling_gbps' takes a finite number > 0"):
        api.explain(FIXTURES / "atomics", ceiling_gbps=-1.0)


CPU_PAIR = ROOT / "tests" / "fixtures" / "cpu" / "triage_conv1d"


def test_a_cpu_pair_shows_the_measured_times_in_the_cpus_words():
    """Issue 35: CPU triage printed "GPU time 0 µs -> 0 µs" and "median µs 0 -> 0" (the CPU
    collectors measure no launch duration; the timings have 1,015 -> 2,051 µs), and called the
    2x slowdown unchanged because NEW's samples fell in two modes (IQR 4 ms)."""
    result = run(CPU_PAIR / "base", CPU_PAIR / "new")
    assert result.exit_code == 1, result.output
    assert "CPU time 1.01 ms -> 2.05 ms (+102%, +1.04 ms)" in result.output
    assert "1015 -> 2051" in result.output and "What moved the CPU time, most first" in \
        result.output
    assert "GPU" not in result.output and " 0 µs" not in result.output
    data = json.loads(run(CPU_PAIR / "base", CPU_PAIR / "new", "--format", "json").output)
    assert data["device_word"] == "CPU" and data["totals"]["base_us"] == pytest.approx(1014.6275)
    assert data["kernels"][0]["base"]["median_us"] == pytest.approx(1014.6275)
    d = data["kernels"][0]["duration"]
    assert d["verdict"] == "regression" and d["ci_low_pct"] > 50  # every pair of runs agrees


def test_the_same_cpu_side_twice_is_too_noisy_to_decide_at_5_percent():
    """Its three runs' medians are 951 to 1,035 µs apart: no 5% change can be ruled out, so
    the verdict says so, and the gate passes (noise never fails CI)."""
    result = run(CPU_PAIR / "base", CPU_PAIR / "base")
    assert result.exit_code == 0, result.output
    assert "no regression shown, too noisy to decide at 5%" in result.output
    assert "Too noisy to decide" in result.output
    assert run(CPU_PAIR / "base", CPU_PAIR / "base", "--threshold", "10").exit_code == 0
    junit = run(CPU_PAIR / "base", CPU_PAIR / "base", "--format", "junit").output
    assert 'skipped="1"' in junit and "too noisy to decide" in junit
