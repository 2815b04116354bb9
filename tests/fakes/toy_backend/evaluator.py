"""The toy's evaluator: "build" checks the kernel's Python, "measure" runs it on seeded inputs,
checks it against the kernel at its defaults, and reports the cost model's time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pragma_ncu.build.compile import BuildResult, failed_build
from pragma_ncu.measure.measurement import CheckRound, Measurement, OutputCheck, Status
from pragma_ncu.measure.stats import summarize
from pragma_ncu.search.evaluator import CHECK, RETEST
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import ResolvedTask, Shape, TaskSpec

SPREAD = 0.001  # the toy's timing noise, a fraction of the time


def run(source: str, task: ResolvedTask, seed: int) -> dict[str, Any]:
    """The kernel's lines executed on inputs drawn from `seed`: every name they set."""
    rng = np.random.default_rng(seed)
    names: dict[str, Any] = {"np": np, **task.params, **task.dims}
    for a in task.args:
        if a.role == "scalar":
            names[a.name] = a.value
        elif a.role in ("input", "inout"):
            names[a.name] = rng.standard_normal(a.shape).astype(np.dtype(_numpy(a.dtype)))
    exec(compile(source, "toy kernel", "exec"), names)  # the toy's kernels are trusted tests
    return names


def _numpy(dtype: str) -> str:
    return {"fp32": "float32", "fp64": "float64", "int32": "int32"}[dtype]


@dataclass
class ToyEvaluator:
    spec: TaskSpec
    reference: TaskSpec  # its kernel at its defaults is what every variant must compute
    limits: Limits = Limits.host()

    def build(self, point: Point) -> BuildResult:
        source = self.spec.source_path.read_text()
        try:
            compile(source, str(self.spec.source_path), "exec")
        except SyntaxError as exc:
            return failed_build(self.spec.kernel_name, "toy", f"{exc}")
        return BuildResult(status="ok", kernel_name=self.spec.kernel_name,
                           symbol=self.spec.kernel_name, cubin_path=str(self.spec.source_path),
                           resources=None, log="", arch="toy", command=(), key=str(point))

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        task = self.spec.resolve(shape, point)
        seed = 3 if phase == RETEST else 1
        got = run(self.spec.source_path.read_text(), task, seed)
        want = run(self.reference.source_path.read_text(), self.reference.resolve(shape, {}),
                   seed)
        checks = tuple(_check(a.name, got[a.name], want[a.name])
                       for a in task.args if a.role in ("output", "inout"))
        bad = any(c.bad for c in checks)
        status = Status.WRONG_ANSWER if bad else Status.OK
        timing = None
        if phase != CHECK and not bad:
            cost = float(got["cost_us"])
            timing = summarize([cost * (1 + SPREAD * ((i % 3) - 1)) for i in range(30)],
                               mode="model")
        return Measurement(status, shape.name, "wrong answer" if bad else "",
                           (CheckRound("verify", seed, status, checks),), timing,
                           task.bytes_moved)


def _check(name: str, got: np.ndarray, want: np.ndarray) -> OutputCheck:
    wrong = ~np.isclose(got, want, rtol=1e-5, atol=1e-6)
    return OutputCheck(name, int(got.size), int(wrong.sum()), 0, 0,
                       float(np.abs(got - want).max(initial=0.0)), 0.0)
