"""ncu collection without a GPU: the command line, log classification, and the whole flow
against a fake ncu driving the fake worker (timeouts, crashes, permission, no kernel)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pragma_ncu.backends.cuda import collect as col
from tests.fakes.requests import fake_request as request

ROOT = Path(__file__).resolve().parents[2]
FAKE_NCU = str(ROOT / "tests" / "fakes" / "fake_ncu.py")
FAKE_WORKER = [sys.executable, str(ROOT / "tests" / "fakes" / "fake_worker.py")]


@pytest.fixture()
def fake_ncu(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    launcher = tmp_path / "ncu"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_NCU} \"$@\"\n")
    launcher.chmod(0o755)
    return str(launcher)


def run(fake_ncu: str, symbol: str, mode: str, tmp_path: Path, timeout: float = 20.0
        ) -> col.Collection:
    os.environ["FAKE_NCU_MODE"] = mode
    try:
        return col.collect(fake_ncu, FAKE_WORKER, request(symbol),
                           col.CollectRequest(timeout_s=timeout), tmp_path / "out", "k")
    finally:
        del os.environ["FAKE_NCU_MODE"]


def test_command_follows_the_measurement_rules(tmp_path):
    req = col.CollectRequest(metrics=("a.sum", "b.sum", "a.sum"), source=True, warmup=3)
    cmd = col.ncu_command("ncu", "_Z3fooPf", req, tmp_path / "r.ncu-rep", tmp_path / "l")
    text = " ".join(cmd)
    assert "--clock-control none" in text and "--target-processes all" in text
    assert "--kernel-name-base mangled --kernel-name _Z3fooPf" in text
    assert "--launch-skip 3 --launch-count 1" in text
    assert "--metrics a.sum,b.sum" in text  # merged, without duplicates
    sections = [cmd[i + 1] for i, c in enumerate(cmd) if c == "--section"]
    assert sections == [*col.DEFAULT_SECTIONS, "SourceCounters"]
    assert "--log-file" in cmd and "--import-source" in cmd


def test_ok_keeps_the_report(fake_ncu, tmp_path):
    c = run(fake_ncu, "ok", "ok", tmp_path)
    assert c.ok and c.report is not None and c.report.read_bytes() == b"fake report"
    assert "Profiling" in c.log_path.read_text()


def test_no_counter_permission_explains_the_fix(fake_ncu, tmp_path):
    c = run(fake_ncu, "ok", "perm", tmp_path)
    assert c.status is col.CollectStatus.NO_PERMISSION and c.report is None
    assert "NVreg_RestrictProfilingToAdminUsers=0" in c.message and "timing-only" in c.message


def test_no_kernel_matched_names_the_filter(fake_ncu, tmp_path):
    c = run(fake_ncu, "ok", "nokernel", tmp_path)
    assert c.status is col.CollectStatus.NO_KERNEL and "'ok'" in c.message


def test_ncu_refusing_its_arguments_is_not_mistaken_for_no_gpu(fake_ncu, tmp_path):
    c = run(fake_ncu, "ok", "error", tmp_path)
    assert c.status is col.CollectStatus.NCU_FAILED and "no_such_metric" in c.message


def test_a_kernel_crashing_under_replay_is_a_status(fake_ncu, tmp_path):
    c = run(fake_ncu, "crash", "ok", tmp_path)
    assert c.status is col.CollectStatus.CRASH and "exited with code" in c.message


def test_a_hang_is_killed_with_its_process_group(fake_ncu, tmp_path):
    c = run(fake_ncu, "hang", "ok", tmp_path, timeout=2.0)
    assert c.status is col.CollectStatus.TIMEOUT and c.wall_s < 30


@pytest.mark.parametrize("log, status", [
    ("==ERROR== ERR_NVGPUCTRPERM - no permission", col.CollectStatus.NO_PERMISSION),
    ("==WARNING== No kernels were profiled.", col.CollectStatus.NO_KERNEL),
    ("==ERROR== Unknown option '--bogus'", col.CollectStatus.NCU_FAILED),
])
def test_classify_log(log, status):
    assert col.classify_log(log, False, col.CollectStatus.OK, "", "k")[0] is status
