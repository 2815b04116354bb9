"""The parent side of the worker protocol, against a fake worker process (no GPU needed)."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.infra.errors import NoGPUError, WorkerProtocolError
from pragma_ncu.measure.measurement import Status
from pragma_ncu.pool.runner import Runner, WorkerProcess
from pragma_ncu.worker import serve
from tests.fakes.requests import fake_request as request

ROOT = Path(__file__).resolve().parents[2]
FAKE = [sys.executable, str(ROOT / "tests" / "fakes" / "fake_worker.py")]


def test_ok_measurement_round_trips() -> None:
    with Runner(FAKE, timeout_s=10) as runner:
        assert runner.hello().name == "Fake GPU"
        m = runner.evaluate(request("ok"))
    assert m.status is Status.OK
    assert m.timing is not None and m.timing.median_us == 10.0
    assert m.shape == "odd"
    assert m.bytes_moved == request("ok").task.bytes_moved


def test_hang_is_killed_and_next_candidate_gets_a_fresh_worker() -> None:
    with Runner(FAKE, timeout_s=10) as runner:
        first_pid = runner.hello() and runner.worker.proc.pid  # type: ignore[union-attr]
        start = time.perf_counter()
        hung = runner.evaluate(request("hang"), timeout_s=1.0)
        assert time.perf_counter() - start < 8
        assert hung.status is Status.TIMEOUT
        assert "1 s" in hung.message
        after = runner.evaluate(request("ok"))
        assert after.status is Status.OK
        assert runner.restarts == 1
        assert runner.worker is not None and runner.worker.proc.pid != first_pid


def test_crash_reports_exit_code_and_stderr_then_recovers() -> None:
    with Runner(FAKE, timeout_s=10) as runner:
        crashed = runner.evaluate(request("crash"))
        assert crashed.status is Status.WORKER_CRASH
        assert "code 7" in crashed.message
        assert "Segmentation fault in fake kernel" in crashed.message
        assert runner.evaluate(request("ok")).status is Status.OK


def test_a_crash_message_waits_for_the_workers_last_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded host the stderr reader can lag the process's exit: the message read the
    tail before the last lines arrived ("worker exited with code 7", nothing else; a CI run
    under a busy loop). A slow reader stands for the lag here."""
    slow = WorkerProcess._pump_err

    def lagging(self, stream):  # type: ignore[no-untyped-def]
        time.sleep(0.5)
        slow(self, stream)

    monkeypatch.setattr(WorkerProcess, "_pump_err", lagging)
    with Runner(FAKE, timeout_s=10) as runner:
        crashed = runner.evaluate(request("crash"))
        assert "Segmentation fault in fake kernel" in crashed.message


def test_fatal_cuda_error_is_runtime_error_and_worker_is_replaced() -> None:
    with Runner(FAKE, timeout_s=10) as runner:
        m = runner.evaluate(request("fatal"))
        assert m.status is Status.RUNTIME_ERROR
        assert "ILLEGAL_ADDRESS" in m.message
        assert runner.worker is None
        assert runner.evaluate(request("ok")).status is Status.OK
        assert runner.restarts == 1


def test_output_on_fd1_does_not_corrupt_the_channel() -> None:
    with Runner(FAKE, timeout_s=10) as runner:
        assert runner.evaluate(request("print")).status is Status.OK


def test_garbage_answer_is_a_protocol_error() -> None:
    with Runner(FAKE, timeout_s=10) as runner, pytest.raises(WorkerProtocolError):
        runner.evaluate(request("garbage"))


def test_no_gpu_hello_raises_with_the_reason() -> None:
    with Runner([*FAKE, "--no-gpu"], timeout_s=10) as runner, pytest.raises(NoGPUError) as err:
        runner.hello()
    assert "CUDA_ERROR_NO_DEVICE" in str(err.value)


def test_worker_that_cannot_start_is_no_gpu() -> None:
    command = [sys.executable, "-c", "import sys; sys.exit(5)"]
    with Runner(command, timeout_s=5) as runner, pytest.raises(NoGPUError) as err:
        runner.hello()
    assert "code 5" in str(err.value)


def test_real_worker_without_a_device_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real worker module, started as the CLI starts it, with every GPU hidden."""
    import os

    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    command = serve.command(sys.executable, "pragma_ncu.backends.cuda.worker")
    with Runner(command, timeout_s=60, env=env) as runner, pytest.raises(NoGPUError):
        runner.hello()


def test_timeout_measurement_keeps_shape_and_bytes() -> None:
    req = request("hang")
    with Runner(FAKE, timeout_s=0.5) as runner:
        m = runner.evaluate(replace(req))
    assert m.status is Status.TIMEOUT
    assert m.bytes_moved == req.task.bytes_moved and m.shape == "odd"
