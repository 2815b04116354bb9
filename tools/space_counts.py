"""A kernel's search space on sm_90 without a GPU: the points pruned before compiling (by
reason), every other point compiled (which fills the build cache for a later run), the points
pruned after compiling by ptxas's registers and shared memory, and what is left to measure.

    python tools/space_counts.py --kernel examples/multi/sgemm_space.cu [--jobs 32] [--json]

The limits are those of the H100 and H200 (sm_90); PRAGMA_NCU_CACHE picks the build cache.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from pragma_ncu.backends.cuda.build import build_many
from pragma_ncu.build import task as tasks
from pragma_ncu.build.compile import BuildCache
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.toolchain import find_nvcc
from pragma_ncu.search import feasibility
from pragma_ncu.search.space import Space
from pragma_ncu.spec.file import load_spec, spec_path_for

SM90 = feasibility.Limits(max_threads_per_block=1024, max_threads_per_sm=2048,
                          max_blocks_per_sm=32, max_registers_per_block=65536,
                          max_registers_per_sm=65536, max_shared_per_block_optin=232448,
                          max_shared_per_sm=233472)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=None, help="parallel compiles (default: cores)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settings = load_settings()
    spec = load_spec(spec_path_for(args.kernel), args.kernel)
    space = Space.from_spec(spec)
    before: Counter[str] = Counter()
    feasible = []
    for point in space.points():
        bad = feasibility.check_point(spec, point, spec.shapes, SM90)
        if bad is None:
            feasible.append(point)
        else:
            before[bad.code] += 1
    start = time.perf_counter()
    requests = [tasks.build_request(spec, "sm_90", p, render_dir=settings.cache_dir / "rendered")
                for p in feasible]
    builds = build_many(requests, find_nvcc(settings), BuildCache(settings.cache_dir / "build"),
                        args.jobs or settings.jobs)
    seconds = time.perf_counter() - start
    after: Counter[str] = Counter()
    for point, built in zip(feasible, builds, strict=True):
        if not built.ok or built.resources is None:
            after[built.status] += 1
            continue
        for shape in spec.shapes:
            bad = feasibility.check_build(built.resources, spec.resolve(shape, point).launch, SM90)
            if bad is not None:
                after[bad.code] += 1
                break
    counts = {"space": space.size, "pruned_before_compile": dict(before),
              "compiled": len(feasible), "compile_s": round(seconds, 1),
              "cached": sum(b.cache_hit for b in builds),
              "pruned_after_compile": dict(after),
              "to_measure": len(feasible) - sum(after.values())}
    if args.json:
        json.dump(counts, sys.stdout, indent=1)
        print()
    else:
        for key, value in counts.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
