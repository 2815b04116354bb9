"""A pool of isolated workers, one per device.

Each worker is the same `python -m pragma_ncu.worker` process as on one GPU (a `Runner`, or a
Ray actor that runs one), pinned to its device through its environment. The pool starts them
together, checks that every worker opened the device it was given and that all devices are of
one model (times from two models are not comparable), lets a dead worker be replaced on its
own device (its runner starts a fresh one at the next request), and drops a device whose
workers keep failing, with a message.

Lanes are mutated by one thread only: the scheduler that hands them work.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from pragma_ncu.infra.errors import NoGPUError, PragmaError, ToolchainError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.measure.measurement import Measurement
from pragma_ncu.pool.calibration import Calibration
from pragma_ncu.worker.protocol import EvalRequest

MAX_FAILURES = 3  # device failures in a row before the device is dropped
log = logging.getLogger(__name__)


class PoolError(ToolchainError):
    """The pool cannot run: devices of two models, a worker on the wrong device, or no device
    left."""


@dataclass(frozen=True)
class WorkerDevice:
    """The device that measured a point: recorded with every evaluation."""

    label: str  # the slot: gpu0, gpu2, cpu1 (what progress and results call it)
    name: str  # the model: "NVIDIA H200", or the host CPU's name
    uuid: str = ""  # a GPU's UUID; "" for CPU workers
    host: str = ""  # the node, for workers on other hosts (Ray)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any] | None) -> WorkerDevice | None:
        if not data:
            return None
        return WorkerDevice(**{k: data[k] for k in WorkerDevice.__dataclass_fields__
                               if k in data})


@dataclass(frozen=True)
class Slot:
    """Where one worker is to run, before it starts."""

    label: str
    env: tuple[tuple[str, str], ...] = ()  # set in the worker's environment: the pin
    uuid: str = ""  # the GPU its worker must report opening ("" = not checked)


class WorkerRunner(Protocol):
    """What the pool needs of a runner: `runner.Runner`, or `ray_workers.RayRunner`."""

    device: Any

    @property
    def restarts(self) -> int: ...

    def hello(self) -> Any: ...

    def evaluate(self, req: EvalRequest, timeout_s: float | None = None) -> Measurement: ...

    def call(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        ...

    def close(self, wait_s: float = 5.0) -> None: ...


@dataclass(eq=False)
class Lane:
    """One worker slot: its runner, its device once started, and what it has done."""

    slot: Slot
    runner: WorkerRunner
    device: WorkerDevice | None = None
    failures: int = 0  # device failures in a row
    deaths: int = 0  # workers that died on it (any cause)
    done: int = 0  # points it measured
    current: str = ""  # what it is measuring now ("" when idle)
    dropped: str = ""  # why it was dropped; "" while it serves

    @property
    def label(self) -> str:
        return self.slot.label


@dataclass(frozen=True)
class LaneActivity:
    """A snapshot of one lane, for progress lines and JSON."""

    label: str
    name: str
    current: str
    done: int
    deaths: int
    restarts: int
    dropped: str


def same_uuid(first: str, second: str) -> bool:
    """Two spellings of one UUID ("GPU-8932f937-d72c-..." and "8932f937d72c..."), compared by
    their hex digits."""
    def digits(u: str) -> str:
        return re.sub(r"[^0-9a-f]", "", u.lower().removeprefix("gpu-").removeprefix("mig-"))
    return bool(digits(first)) and digits(first) == digits(second)


class WorkerPool:
    """Workers for `slots`, made by `make_runner`; `start()` before use, `close()` after."""

    def __init__(self, slots: Sequence[Slot], make_runner: Callable[[Slot], WorkerRunner], *,
                 max_failures: int = MAX_FAILURES, notice: Notice = lambda _: None) -> None:
        labels = [s.label for s in slots]
        if not slots or len(set(labels)) != len(labels):
            raise PoolError(f"a pool needs distinct worker slots, got {labels}")
        self.lanes = [Lane(s, make_runner(s)) for s in slots]
        self.max_failures = max_failures
        self.notice = notice
        self.calibration: Calibration | None = None  # set before the first search

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> WorkerPool:
        """Start every worker at once. A worker that cannot start drops its device; none
        starting is a NoGPUError; a worker on the wrong device or two models is a PoolError."""
        with ThreadPoolExecutor(len(self.lanes)) as ex:
            errors = list(ex.map(self._hello, self.lanes))
        if all(errors):
            self.close()
            raise NoGPUError("; ".join(f"{lane.label}: {e}" for lane, e in
                                       zip(self.lanes, errors, strict=True)))
        problems = [f"{lane.label}: {e}" for lane, e in zip(self.lanes, errors, strict=True)
                    if e.startswith("pin:")]
        if problems:
            self.close()
            raise PoolError("a worker did not open the device it was pinned to ("
                            + "; ".join(problems) + ")")
        for lane, error in zip(self.lanes, errors, strict=True):
            if error:
                self.drop(lane, f"its worker did not start: {error}")
        self._check_one_model()
        return self

    def _hello(self, lane: Lane) -> str:
        """'' when the lane's worker started on the right device, else why not."""
        try:
            device = lane.runner.hello()
        except PragmaError as exc:
            return str(exc)
        uuid = str(getattr(device, "uuid", "") or "")
        lane.device = WorkerDevice(lane.label, str(device.name), uuid,
                                   str(getattr(lane.runner, "host", "") or ""))
        if lane.slot.uuid and not same_uuid(lane.slot.uuid, uuid):
            return f"pin: it opened {uuid or 'an unnamed device'}, not {lane.slot.uuid}"
        return ""

    def _check_one_model(self) -> None:
        groups: dict[str, list[str]] = {}
        for lane in self.live:
            assert lane.device is not None
            groups.setdefault(lane.device.name, []).append(lane.label)
        if len(groups) > 1:
            self.close()
            listing = "; ".join(f"{name}: {', '.join(labels)}" for name, labels in
                                groups.items())
            raise PoolError(f"the workers run on different models ({listing}). Times from two "
                            "models are not comparable: tune on one model at a time (pick one "
                            "group's devices), or once per model.")

    @property
    def live(self) -> list[Lane]:
        return [lane for lane in self.lanes if not lane.dropped]

    @property
    def primary(self) -> Lane:
        """The first live lane: re-tests and side-by-side comparisons run on it alone."""
        live = self.live
        if not live:
            reasons = "; ".join(f"{lane.label}: {lane.dropped}" for lane in self.lanes)
            raise PoolError(f"no worker is left ({reasons})")
        return live[0]

    def note_death(self, lane: Lane, message: str) -> None:
        """The lane's worker died (crash, hang, or killed); its runner starts a new one."""
        lane.deaths += 1
        first = message.strip().splitlines()[0] if message.strip() else "no message"
        self.notice(f"{lane.label}: its worker died ({first}); a new one starts on "
                    f"{lane.device.name if lane.device else 'it'}")

    def charge(self, lane: Lane, why: str) -> bool:
        """A failure of the device rather than of a candidate; True when that was one too
        many in a row and the device is dropped."""
        lane.failures += 1
        log.info("%s: device failure %d in a row: %s", lane.label, lane.failures, why)
        if lane.failures >= self.max_failures:
            self.drop(lane, f"{lane.failures} failures in a row; the last: {why}")
            return True
        return False

    def cleared(self, lane: Lane) -> None:
        """The lane's worker answered: its failures in a row start again from zero."""
        lane.failures = 0

    def drop(self, lane: Lane, why: str) -> None:
        """Take the lane out of service; its worker stops now, or, when it is measuring a
        point, once that point is done (`release`)."""
        if lane.dropped:
            return
        lane.dropped = why
        if not lane.current:
            lane.runner.close(wait_s=1.0)
        self.notice(f"{lane.label} dropped: {why}; {len(self.live)} worker(s) left")

    def release(self, lane: Lane) -> None:
        """The lane finished its work in hand; a dropped lane's worker stops now."""
        lane.current = ""
        if lane.dropped:
            lane.runner.close(wait_s=1.0)

    def activity(self) -> tuple[LaneActivity, ...]:
        return tuple(LaneActivity(lane.label, lane.device.name if lane.device else "",
                                  lane.current, lane.done, lane.deaths, lane.runner.restarts,
                                  lane.dropped) for lane in self.lanes)

    def close(self) -> None:
        """Stop every worker (at once: each may take a few seconds to exit)."""
        with ThreadPoolExecutor(len(self.lanes)) as ex:
            list(ex.map(lambda lane: lane.runner.close(), self.lanes))
