"""What `tune` and `autotune` show and log, for real on the CPU example, as a CI log sees
them (stderr not a terminal): plain progress lines with no control character, a search
counted in points of how many, stdout clean JSON with --format json; the run's log kept
beside its store with the LLM exchange (the scripted server plays the coder) and no API key
in any log or output; -v's lines on stderr, --log-file's everything."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pragma_ncu.cli.main import cli
from tests.fakes.llm_server import FakeLLMServer, Reply

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "cpu" / "conv1d.cpp"
KEY = "sk-test-0123456789abcdef"
REPLY = "I would unroll the inner loop by four and keep the sum in a register."
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
pytestmark = pytest.mark.skipif(
    not (shutil.which("c++") or shutil.which("g++")) or not shutil.which("valgrind"),
    reason="needs a C++ compiler and valgrind")


def _env(tmp: Path, **more: str) -> dict[str, str]:
    return {"PRAGMA_NCU_CACHE": str(tmp / "cache"),
            "PRAGMA_NCU_PERF": str(tmp / "no-perf-here"),  # cachegrind, whatever the CPU
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")])),
            **more}


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """tune --rounds 2 with a coder: round 1 searches the knobs, and 30% of the roofline
    sends round 2 to the coder, whose replies (no code) are refused and fed back."""
    tmp = tmp_path_factory.mktemp("cpu-logs")
    with FakeLLMServer() as server:
        server.default = Reply.text(REPLY)
        env = _env(tmp, PRAGMA_NCU_LLM_BASE_URL=server.base_url,
                   PRAGMA_NCU_LLM_MODEL="scripted-coder", PRAGMA_NCU_LLM_API_KEY=KEY)
        result = CliRunner(env=env).invoke(cli, [
            "tune", "--kernel", str(KERNEL), "--shape", "n64k-k33", "--rounds", "2",
            "--store", str(tmp / "store" / "runs.sqlite"), "-v",
            "--log-file", str(tmp / "cli.log")])
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    logs = list((tmp / "store" / "logs").glob("*.log"))
    return {"result": result, "requests": requests, "logs": logs, "tmp": tmp}


def _plain(result: Result) -> list[str]:
    assert not CONTROL.search(result.stderr), "a control character on stderr"
    return result.stderr.splitlines()


def test_a_ci_log_gets_plain_lines_of_each_phase(tuned: dict) -> None:
    lines = _plain(tuned["result"])
    progress = [line for line in lines if line.startswith("  .. ")]
    said = "\n".join(progress)
    for phase in ("round 0:", "round 1/2: tune", "searching 32 points", "search: 32/32 points",
                  "re-testing", "re-test: 2/2 rounds", "side by side with the historical best",
                  "profiling at n64k-k33", "asking the coder for a rewrite"):
        assert phase in said, phase
    counts = [line for line in progress if line.startswith("  .. search: ")]
    assert 5 <= len(counts) <= 12  # a line each tenth of the 32 points, not one per point
    assert all(re.search(r"\d+/32 points \[\d\d:\d\d<\d\d:\d\d, +[\d.]+ points/s\]", c)
               for c in counts)


def test_verbose_lines_go_to_stderr_and_the_results_to_stdout(tuned: dict) -> None:
    result = tuned["result"]
    lines = _plain(result)
    assert any(line.startswith("INFO pragma_ncu.pool.runner: starting the worker")
               for line in lines)
    assert any(line.startswith("INFO pragma_ncu.infra.llm: LLM request to scripted-coder")
               for line in lines)
    assert not any(line.startswith("DEBUG") for line in lines)  # -v, not -vv
    assert "INFO" not in result.stdout and "  .. " not in result.stdout
    assert "log: " in result.stdout


def test_the_runs_log_beside_its_store_holds_the_llm_exchange(tuned: dict) -> None:
    (path,) = tuned["logs"]
    text = path.read_text()
    assert f"log: {path}" in tuned["result"].stdout
    assert len(tuned["requests"]) == 3  # a reply, then two corrected ones asked for
    sent = tuned["requests"][0]["messages"]
    assert "system compiler" in sent[0]["content"]  # the CPU coder's contract
    assert sent[0]["content"].strip().splitlines()[0] in text  # the messages sent, whole
    assert text.count("LLM request to scripted-coder") == 3
    assert text.count(REPLY) >= 3  # the text received, each time
    assert "coder reply 1 of 3: refused" in text
    assert "DEBUG pragma_ncu.build.compile: " in text and "INFO pragma_ncu.backends.cpu.collect: " \
           "cachegrind: " in text  # each compile command and each profiler command
    assert "search: 32/32 points" in text and "round 2: no verified candidate" in text


def test_no_api_key_anywhere(tuned: dict) -> None:
    result = tuned["result"]
    for text in (tuned["logs"][0].read_text(), (tuned["tmp"] / "cli.log").read_text(),
                 result.stdout, result.stderr):
        assert KEY not in text


def test_the_log_file_gets_everything(tuned: dict) -> None:
    text = (tuned["tmp"] / "cli.log").read_text()
    assert "DEBUG pragma_ncu.infra.llm: LLM message 1 (system)" in text
    assert "INFO pragma_ncu.infra.progress: round 1/2: tune (original)" in text


def test_json_stdout_stays_clean_and_a_ci_log_gets_no_progress(tmp_path: Path) -> None:
    result = CliRunner(env=_env(tmp_path)).invoke(cli, [
        "autotune", "--kernel", str(KERNEL), "--shape", "n64k-k33", "--out",
        str(tmp_path / "out"), "--format", "json", "-v", "--no-cache"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # all of stdout is the JSON document
    assert data["kernel"] == "conv1d" and data["stats"]["evaluated"] == 32
    lines = _plain(result)
    assert lines and all(line.startswith(("INFO ", "WARNING ")) for line in lines), lines
