"""The toy's commands of one kernel: `bench` (built once, each shape verified and timed) and
`profile` (verified and timed, then one call counted by its collector), each the report every
target returns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from pragma_ncu.backends.results import BenchReport, BenchRow, ProfileRun
from pragma_ncu.infra.errors import KernelFailure
from pragma_ncu.pool.runner import Device
from pragma_ncu.search.evaluator import RETEST
from pragma_ncu.spec.model import ParamValue, Shape, TaskSpec
from tests.fakes.toy_backend.collect import collect
from tests.fakes.toy_backend.evaluator import ToyEvaluator
from tests.fakes.toy_backend.target import COLLECTOR

Notice = Callable[[str], None]
SHOWN = (("cost", "toy_cost_us"), ("elements", "toy_elements"))


def bench(spec: TaskSpec, shapes: Sequence[Shape], device: Device,
          params: dict[str, ParamValue], progress: Notice) -> BenchReport:
    point = {**spec.default_params(), **params}
    evaluator = ToyEvaluator(spec, spec)
    built = evaluator.build(point)
    rows = []
    for shape in shapes:
        progress(f"shape {shape.name} ({shape.label()})")
        rows.append(BenchRow(shape, spec.resolve(shape, point),
                             evaluator.measure(point, built, shape, RETEST)))
    return BenchReport(spec, point, built, device, None, None, tuple(rows))


def profile(spec: TaskSpec, shape: Shape, device: Device, params: dict[str, ParamValue],
            out_dir: Path, repeats: int, progress: Notice) -> ProfileRun:
    point = {**spec.default_params(), **params}
    evaluator = ToyEvaluator(spec, spec)
    built = evaluator.build(point)
    progress(f"verifying and timing at {shape.name}")
    measured = tuple(evaluator.measure(point, built, shape, RETEST) for _ in range(1 + repeats))
    run = ProfileRun(spec, shape, point, COLLECTOR, build=built, device=device,
                     measurements=measured, key_metrics=SHOWN)
    if not measured[0].status.is_verified:  # a wrong kernel is not profiled
        return replace(run, problem=f"not profiled: {measured[0].message}",
                       failure=KernelFailure)
    profile = collect(spec, point, shape, out_dir)
    return replace(run, profile=profile, profile_path=out_dir / "profile.json")
