"""How many GPUs the parallel search can keep busy, measured without GPUs.

The pool and the search run for real (worker processes, requests, scheduling, the strategy's
asks, the re-test on one GPU); only the GPU is simulated: each fake worker (tests/fakes) takes
`--point-s` seconds per point, by default the 71.6 ms a point of examples/multi/sgemm_space.cu
took on one H200 (574 points in 41.1 s, docs/tuner.md). With N workers the ideal is N times the
points per second of one; what falls short is the parent's own cost (scheduling, IPC, the
sampler), which is what this measures, on whatever host runs it.

    python benchmarks/pool_scaling.py --gpus 1 2 4 8 --strategy exhaustive tpe --out results.json

The space is the synthetic one of the tests (72 points) times a neutral knob of `--copies`
values (576 points by default), so every worker count measures a long search.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pragma_ncu.search.autotune import SearchOptions, tune_parameters  # noqa: E402
from pragma_ncu.search.parallel import PooledEvaluator  # noqa: E402
from pragma_ncu.search.results import Budget  # noqa: E402
from pragma_ncu.search.serial import Problem  # noqa: E402
from pragma_ncu.search.space import Space  # noqa: E402
from tests.fakes.pool import FakeGpu, FakeGpuEvaluator, fake_pool  # noqa: E402
from tests.fakes.tuner import SPEC_TOML, synthetic_spec  # noqa: E402


def problem(tmp: Path, copies: int) -> Problem:
    params = {**SPEC_TOML["params"],  # type: ignore[dict-item]
              "COPY": {"default": 0, "values": list(range(copies))}}
    spec = synthetic_spec(tmp, params=params)
    return Problem(spec, tuple(spec.shapes[:1]), Space.from_spec(spec))


def run(tmp: Path, gpus: int, strategy: str, point_s: float, copies: int, budget: int,
        seed: int) -> dict[str, object]:
    fakes = [FakeGpu(f"GPU-{strategy}-{gpus}-{i}", delay_s=point_s) for i in range(gpus)]
    start = time.perf_counter()
    with fake_pool(tmp, fakes, timeout_s=60.0).start() as pool:
        evaluator = PooledEvaluator(pool, lambda lane: FakeGpuEvaluator(lane.runner))
        result = tune_parameters(problem(tmp, copies), evaluator, SearchOptions(
            strategy=strategy, budget=Budget(evaluations=budget), jobs=2, seed=seed))
    stats = result.stats
    return {"gpus": gpus, "strategy": strategy, "evaluated": stats.evaluated,
            "search_s": round(stats.search_s, 3), "points_per_s": result.points_per_s,
            "wall_s": round(time.perf_counter() - start, 3),
            "winner": result.general.winner.key if result.general.winner else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--strategy", nargs="+", default=["exhaustive", "tpe"])
    parser.add_argument("--point-s", type=float, default=41.1 / 574)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--budget", type=int, default=576)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for strategy in args.strategy:
            one = None
            for gpus in args.gpus:
                row = run(Path(tmp), gpus, strategy, args.point_s, args.copies, args.budget,
                          args.seed)
                rate = row["points_per_s"]
                if gpus == 1:
                    one = rate
                row["speedup"] = round(rate / one, 2) if one and rate else None  # type: ignore[operator]
                row["ideal_points_per_s"] = round(gpus / args.point_s, 2)
                row["efficiency"] = (round(rate * args.point_s / gpus, 3)  # type: ignore[operator]
                                     if rate else None)
                print(json.dumps(row), flush=True)
                rows.append(row)
    report = {"machine": platform.machine(), "cpus": os.cpu_count(),
              "python": platform.python_version(), "point_s": args.point_s,
              "space": 72 * args.copies, "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
