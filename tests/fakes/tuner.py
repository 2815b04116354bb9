"""A synthetic GPU for tuner tests: recorded-style evaluations made from a cost model.

`synthetic_recording` builds the evaluations a GPU run would have recorded (times from
`cost(point, shape)`, statuses from `fails(point)`), so the search can be replayed through
`ReplayEvaluator` exactly as real recordings are.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.measure.stats import summarize
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.results import Evaluation
from pragma_ncu.search.space import Point, Space
from pragma_ncu.spec.file import parse_spec
from pragma_ncu.spec.model import TaskSpec

H200_LIMITS = Limits(max_threads_per_block=1024, max_threads_per_sm=2048, max_blocks_per_sm=32,
                     max_registers_per_block=65536, max_registers_per_sm=65536,
                     max_shared_per_block_optin=232448, max_shared_per_sm=233472)

SPEC_TOML = {
    "kernel": {"name": "k", "flags": ["-O3"]},
    "params": {
        "BLOCK": {"default": 256, "values": [32, 64, 128, 256, 512, 1024, 2048]},
        "VEC": {"default": 1, "values": [1, 2, 4, 8]},
        "ROWS": {"default": 1, "values": [1, 2, 4]},
    },
    "launch": {"grid": ["ceil_div(T, ROWS)"], "block": ["BLOCK"]},
    "args": [{"name": "out", "dtype": "fp16", "shape": ["T", "d"], "role": "output"},
             {"name": "x", "dtype": "fp16", "shape": ["T", "2 * d"], "role": "input"},
             {"name": "d", "dtype": "int32", "role": "scalar", "value": "d"}],
    "shapes": [{"name": "big", "T": 4096, "d": 11008}, {"name": "small", "T": 64, "d": 4096}],
}


def synthetic_spec(tmp: Path, **overrides: object) -> TaskSpec:
    data = {**SPEC_TOML, **overrides}
    (tmp / "k.cu").write_text("extern \"C\" __global__ void k(void* o, const void* x, int d) {}\n")
    return parse_spec(data, tmp / "k.toml")


def silu_like_cost(point: Point, shape: str) -> float:
    """A smooth landscape with one best point (BLOCK=256, VEC=8, ROWS=1) and a 10% spread
    between neighbours, like the measured silu_and_mul surface."""
    base = 64.0 if shape == "big" else 2.0
    penalty = (abs({32: -3, 64: -2, 128: -1, 256: 0, 512: 1, 1024: 2}[int(point["BLOCK"])])
               * 0.08 + {1: 0.9, 2: 0.45, 4: 0.15, 8: 0.0}[int(point["VEC"])]
               + {1: 0.0, 2: 0.04, 4: 0.12}[int(point["ROWS"])])
    return base * (1.0 + penalty)


def measurement(shape: str, median_us: float, status: Status = Status.OK,
                spread: float = 0.005, seconds: float = 0.1) -> Measurement:
    if status is not Status.OK:
        return Measurement(status, shape, message=f"planted {status.value}", seconds=seconds)
    samples = [median_us * (1 + spread * (i - 10) / 10) for i in range(21)]
    return Measurement(Status.OK, shape, timing=summarize(samples), bytes_moved=10**8,
                       seconds=seconds)


def synthetic_recording(space: Space, shapes: tuple[str, ...],
                        cost: Callable[[Point, str], float] = silu_like_cost,
                        fails: Callable[[Point], str | None] = lambda p: None,
                        registers: Callable[[Point], int] = lambda p: 32) -> list[Evaluation]:
    out = []
    for i, point in enumerate(space.points()):
        if int(point["BLOCK"]) > 1024:
            continue  # pruned before compiling; never recorded
        failure = fails(point)
        if failure in ("compile_error", "kernel_not_found"):
            out.append(Evaluation(i, point, failure, "error: planted", compile_s=1.0))
            continue
        status = Status(failure) if failure else Status.OK
        ms = tuple(measurement(s, cost(point, s), status) for s in shapes)
        out.append(Evaluation(i, point, status.value, registers=registers(point),
                              measurements=ms, compile_s=1.0))
    return out
