"""The parent side of the worker: spawn it, send requests, enforce timeouts, survive crashes.

A worker is a fresh Python process (`python -m pragma_ncu.worker --side MODULE`, never a
fork) in its own process group; on a timeout the whole group is killed. After a crash, a hang
or a sticky CUDA error, the next request starts a new worker.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import IO, Any, Protocol

from pragma_ncu.infra.errors import NoGPUError, WorkerProtocolError
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.worker.protocol import EvalRequest, encode

HELLO_TIMEOUT_S = 120.0
log = logging.getLogger(__name__)


class Device(Protocol):
    """The device a target's worker opened, as every command reports it: a GPU's
    DeviceInfo, a host's HostInfo, a registered target's own."""

    @property
    def name(self) -> str: ...

    @property
    def cache_key(self) -> str:
        """Identifies the device (and what its measured facts depend on) in caches."""
        ...

    def summary(self) -> str:
        """What it is, in one line ("NVIDIA H200 (sm_90, 132 SMs, ...)")."""
        ...

    def to_json(self) -> dict[str, Any]:
        """Its facts, as the JSON outputs give them."""
        ...


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    uuid: str
    compute_capability: str
    arch: str
    sm_count: int
    l2_bytes: int
    memory_bytes: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_registers_per_sm: int
    max_registers_per_block: int
    max_shared_per_block: int
    max_shared_per_block_optin: int
    max_shared_per_sm: int
    clock_khz: int
    memory_clock_khz: int
    memory_bus_bits: int
    driver_version: int

    @staticmethod
    def from_json(data: dict[str, Any]) -> DeviceInfo:
        return DeviceInfo(**{k: data[k] for k in DeviceInfo.__dataclass_fields__})

    @property
    def driver(self) -> str:
        return f"{self.driver_version // 1000}.{self.driver_version % 1000 // 10}"

    @property
    def cache_key(self) -> str:
        """Identifies this GPU and driver in caches of measured facts (the copy ceiling)."""
        return f"{self.uuid}:{self.driver_version}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        return (f"{self.name} (sm_{self.compute_capability.replace('.', '')}, {self.sm_count} "
                f"SMs, L2 {self.l2_bytes >> 20} MiB, driver {self.driver})")


@dataclass(frozen=True)
class HostInfo:
    """The host a CPU worker (the CPU target's worker side) runs on."""

    name: str
    cores: int  # CPUs the worker may run on (its affinity)
    llc_bytes: int  # the largest cache
    l1d_bytes: int
    memory_bytes: int
    machine: str  # e.g. x86_64
    kernel: str  # the OS kernel release

    @staticmethod
    def from_json(data: dict[str, Any]) -> HostInfo:
        return HostInfo(**{k: data[k] for k in HostInfo.__dataclass_fields__})

    @property
    def cache_key(self) -> str:
        """Identifies this host in caches of measured facts (the copy ceiling)."""
        return f"{self.name}:{self.cores}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        return f"{self.name} ({self.cores} cores, {self.machine}, LLC {self.llc_bytes >> 20} MiB)"


class WorkerDied(Exception):
    """The worker exited or was killed before answering; `status` says which."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


class WorkerProcess:
    """One live worker process and its pipes."""

    def __init__(self, command: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, env=env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=40)
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        self._err_pump = threading.Thread(target=self._pump_err, args=(self.proc.stderr,),
                                          daemon=True)
        self._err_pump.start()

    def _pump(self, stream: IO[bytes]) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def _pump_err(self, stream: IO[bytes]) -> None:
        for line in stream:
            self.stderr_tail.append(line.decode(errors="replace").rstrip())

    def request(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(encode(message))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerDied(Status.WORKER_CRASH, self._died_message()) from None
        try:
            line = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            self.kill()
            raise WorkerDied(Status.TIMEOUT, f"no answer within {timeout_s:.0f} s: killed "
                             "(a kernel that hangs, or a timeout set too short)") from None
        if line is None:
            self.proc.wait(timeout=10)
            raise WorkerDied(Status.WORKER_CRASH, self._died_message())
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise WorkerProtocolError(f"worker sent a non-protocol line: {line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise WorkerProtocolError(f"worker sent {answer!r}, expected an object")
        return answer

    def _died_message(self) -> str:
        code = self.proc.poll()
        if code is not None:  # its last words may still be in the pipe: read them first
            self._err_pump.join(timeout=5.0)
        tail = "\n".join(list(self.stderr_tail)[-8:])
        return f"worker exited with code {code}" + (f":\n{tail}" if tail else "")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)

    def close(self, wait_s: float = 5.0) -> None:
        if self.alive():
            assert self.proc.stdin is not None
            with contextlib.suppress(BrokenPipeError, OSError):  # "exit" has no answer
                self.proc.stdin.write(encode({"op": "exit"}))
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                self.kill()


class Runner:
    """Evaluates candidates in a worker; a candidate's crash or hang is a status, not an error."""

    def __init__(self, command: Sequence[str], timeout_s: float = 60.0,
                 env: dict[str, str] | None = None,
                 describe: Callable[[dict[str, Any]], Any] = DeviceInfo.from_json) -> None:
        """`describe` turns the worker's hello into its device noun: DeviceInfo.from_json for the
        GPU worker, HostInfo.from_json for the CPU worker (each target's `describe`)."""
        self.command = list(command)
        self.timeout_s = timeout_s
        self.env = env
        self.describe = describe
        self.worker: WorkerProcess | None = None
        self.device: Any = None  # what `describe` made of the last hello
        self.starts = 0

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, wait_s: float = 5.0) -> None:
        """Ask the worker to exit; kill its process group if it is not gone within `wait_s`."""
        if self.worker is not None:
            self.worker.close(wait_s)
            self.worker = None

    def _ensure(self) -> WorkerProcess:
        if self.worker is not None and self.worker.alive():
            return self.worker
        if self.starts:
            log.info("restarting the worker (restart %d): %s", self.starts,
                     shlex.join(self.command))
        else:
            log.info("starting the worker: %s", shlex.join(self.command))
        self.worker = WorkerProcess(self.command, self.env)
        self.starts += 1
        try:
            answer = self.worker.request({"op": "hello"}, HELLO_TIMEOUT_S)
        except WorkerDied as exc:
            self.worker.kill()
            self.worker = None
            raise NoGPUError(f"the worker did not start: {exc}") from None
        if not answer.get("ok"):
            self.worker.close()
            self.worker = None
            raise NoGPUError(str(answer.get("error", answer)))
        self.device = self.describe(answer["device"])
        return self.worker

    @property
    def restarts(self) -> int:
        """Workers started after the first (each one after a crash, hang or sticky error)."""
        return max(0, self.starts - 1)

    def hello(self) -> Any:
        """Start a worker (if none is running) and return the device it opened: a DeviceInfo,
        or whatever `describe` makes (a HostInfo for the CPU worker)."""
        self._ensure()
        assert self.device is not None
        return self.device

    def call(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """Send one request; kills and forgets the worker after a fatal answer."""
        worker = self._ensure()
        answer = worker.request(message, timeout_s or self.timeout_s)
        if answer.get("fatal"):
            log.info("the worker is replaced after a fatal error: %s",
                     _first_line(str(answer.get("error"))))
            worker.kill()
            self.worker = None
        return answer

    def evaluate(self, req: EvalRequest, timeout_s: float | None = None) -> Measurement:
        """Verify and time one candidate at one shape; never raises for the candidate's faults."""
        start = time.perf_counter()
        base = Measurement(status=Status.OK, shape=req.task.shape_name,
                           bytes_moved=req.task.bytes_moved, flops=req.task.flops)
        try:
            answer = self.call(req.to_message(), timeout_s)
        except WorkerDied as exc:
            log.info("the worker died (%s) at %s: %s", exc.status.value, req.task.shape_name,
                     _first_line(str(exc)))
            self.worker = None
            return replace(base, status=exc.status, message=str(exc),
                           seconds=time.perf_counter() - start)
        if answer.get("ok"):
            return Measurement.from_json(answer["measurement"])
        status = Status.RUNTIME_ERROR if answer.get("fatal") else Status.LAUNCH_ERROR
        if answer.get("kind") == "internal":
            status = Status.WORKER_CRASH
        return replace(base, status=status, message=str(answer.get("error")),
                       extra={k: v for k, v in answer.items() if k == "trace"},
                       seconds=time.perf_counter() - start)


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")[:300]
