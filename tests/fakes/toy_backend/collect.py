"""The toy's collector, "toycount": one call of the kernel, a few of its numbers, saved as a
profile.json that records its collector like every profile."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.profile.profiles import KernelProfile, Metric, Profile
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import Shape, TaskSpec
from tests.fakes.toy_backend.evaluator import run
from tests.fakes.toy_backend.target import COLLECTOR


def collect(spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profile:
    task = spec.resolve(shape, point)
    names = run(spec.source_path.read_text(), task, seed=1)
    elements = sum(a.numel for a in task.args if a.role != "scalar")
    metrics = {"toy_cost_us": Metric("toy_cost_us", float(names["cost_us"]), "us"),
               "toy_elements": Metric("toy_elements", float(elements), ""),
               **{f"toy_param_{k}": Metric(f"toy_param_{k}", float(v), "")
                  for k, v in task.params.items() if isinstance(v, int | float)}}
    kernel = KernelProfile(spec.kernel_name, spec.kernel_name, 0, metrics)
    profile = Profile((kernel,), reader="toy", collection={"shape": shape.name,
                                                            "params": dict(point)},
                      collector=COLLECTOR)
    out_dir.mkdir(parents=True, exist_ok=True)
    profile.save(out_dir / "profile.json")
    return profile
