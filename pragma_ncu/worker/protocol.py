"""The parent <-> worker protocol: one JSON object per line, one answer per request.

Requests: {"op": "hello"}, {"op": "ceiling", ...}, {"op": "evaluate", ...},
{"op": "launch", "request": {...}, "warmup": N, "seed": S} (for ncu), {"op": "exit"}.
Answers: {"ok": true, ...} or {"ok": false, "kind": ..., "error": ...}; an answer with
"fatal": true means the worker's CUDA context is broken and it exits after answering.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from pragma_ncu.spec.model import ResolvedArg, ResolvedLaunch, ResolvedTask


@dataclass(frozen=True)
class KernelRef:
    """A compiled kernel and how to launch it."""

    cubin: str
    symbol: str
    launch: ResolvedLaunch


@dataclass(frozen=True)
class ReferenceSpec:
    """kind "numpy", "torch" or "cupy": `function` ("file.py:func" or "module:func", resolved
    against `base_dir`) written with that library (see `worker.reference`); kind "kernel":
    `kernel` is launched on the same inputs and its outputs are the reference."""

    kind: str
    function: str | None = None
    base_dir: str | None = None
    kernel: KernelRef | None = None


@dataclass(frozen=True)
class TimingConfig:
    warmup_ms: float = 10.0
    min_reps: int = 20
    max_reps: int = 2000
    budget_ms: float = 100.0  # time spent in timed repetitions (flushes excluded)
    flush_l2: bool = True
    graph_below_us: float = 10.0  # kernels faster than this are timed as graph replays
    copy_reference: bool = True  # also time a device copy of the same bytes
    keep_samples: bool = False  # answer with every sample, not only their summary
    # A long launch: min_reps may take at most `long_ms` of timed repetitions; beyond, fewer
    # (down to `floor_reps`), so that a 276 ms launch is not timed 50 times in every re-test
    # round (None: min_reps always)
    long_ms: float | None = 1000.0
    floor_reps: int = 5


@dataclass(frozen=True)
class CheckConfig:
    seeds: tuple[int, ...] = (1, 2)  # first: verify before timing; second: re-verify after
    tolerances: tuple[tuple[str, float, float], ...] = ()  # (arg name, atol, rtol)
    max_bad_fraction: float = 0.0


@dataclass(frozen=True)
class EvalRequest:
    harness: str  # cubin of harness.cu for this GPU
    candidate: KernelRef
    task: ResolvedTask
    reference: ReferenceSpec
    check: CheckConfig = field(default_factory=CheckConfig)
    timing: TimingConfig | None = field(default_factory=TimingConfig)

    def to_message(self) -> dict[str, Any]:
        return {"op": "evaluate", **asdict(self)}


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def _launch(d: dict[str, Any]) -> ResolvedLaunch:
    return ResolvedLaunch(tuple(d["grid"]), tuple(d["block"]), int(d["shared_mem"]))


def _kernel(d: dict[str, Any] | None) -> KernelRef | None:
    return None if d is None else KernelRef(d["cubin"], d["symbol"], _launch(d["launch"]))


def task_from_dict(data: dict[str, Any]) -> ResolvedTask:
    args = tuple(
        ResolvedArg(a["name"], a["dtype"], a["role"], tuple(a["shape"]), a["itemsize"],
                    a.get("value"), tuple(a["init"]) if a.get("init") else None)
        for a in data["args"]
    )
    return ResolvedTask(data["kernel_name"], data["shape_name"], data["dims"], data["params"],
                        _launch(data["launch"]), args, data["bytes_moved"], data.get("flops"))


def eval_request_from_dict(data: dict[str, Any]) -> EvalRequest:
    ref = data["reference"]
    timing = data.get("timing")
    check = data.get("check") or {}
    return EvalRequest(
        harness=data["harness"],
        candidate=_kernel(data["candidate"]),  # type: ignore[arg-type]
        task=task_from_dict(data["task"]),
        reference=ReferenceSpec(ref["kind"], ref.get("function"), ref.get("base_dir"),
                                _kernel(ref.get("kernel"))),
        check=CheckConfig(tuple(check.get("seeds", (1, 2))),
                          tuple(tuple(t) for t in check.get("tolerances", ())),
                          float(check.get("max_bad_fraction", 0.0))),
        timing=TimingConfig(**timing) if timing is not None else None,
    )
