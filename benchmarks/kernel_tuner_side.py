"""Kernel Tuner's side of the silu_and_mul comparison: what a Kernel Tuner user would run.

Tunes ``examples/templated/silu_and_mul.cu`` (knobs BLOCK, VEC, ROWS, each an ``#ifndef``-guarded
macro) with Kernel Tuner's ``tune_kernel``: cupy backend, brute force over all 72 configurations,
output checked against a numpy reference through ``answer=``/``atol=``. It measures

- ``wall_s``: wall time of the whole ``tune_kernel`` call (compiles, verification, timing,
  Kernel Tuner's own overhead),
- ``best_us``: the best configuration's time as Kernel Tuner reports it (mean of ``iterations``
  CUDA-event-timed launches),
- ``timeline``: ``[elapsed_s, time_us]`` per valid configuration in evaluation order, elapsed
  since the call began. Kernel Tuner 1.5's sequential runner stamps every result with
  ``timestamp`` (UTC, taken after the configuration was compiled, verified and timed); that is
  used when present (``timeline_source == "timestamp"``). Otherwise elapsed time is the running
  sum of the per-configuration ``compile_time + verification_time + benchmark_time`` (plus
  ``framework_time``/``strategy_time`` where given, amortized by Kernel Tuner), all in ms.

Run on the GPU machine (after ``tools/install_wheels.sh``)::

    python3 benchmarks/kernel_tuner_side.py --T 4096 --d 11008 --out kt.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

import numpy as np

KERNEL_NAME = "silu_and_mul"
TUNE_PARAMS: dict[str, list[int]] = {
    "BLOCK": [32, 64, 128, 256, 512, 1024],
    "VEC": [1, 2, 4, 8],
    "ROWS": [1, 2, 4],
}
SEED = 1234
_PHASES = ("compile_time", "verification_time", "benchmark_time", "framework_time",
           "strategy_time")


def make_inputs(T: int, d: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """x ~ N(0, 1) as fp16 [T, 2d] (fixed seed) and out = zeros fp16 [T, d]."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, 2 * d), dtype=np.float32).astype(np.float16)
    return x, np.zeros((T, d), dtype=np.float16)


def reference(x: np.ndarray, d: int) -> np.ndarray:
    """silu(x[:, :d]) * x[:, d:] with fp32 math, cast to fp16."""
    a = x[:, :d].astype(np.float32)
    b = x[:, d:].astype(np.float32)
    return (a / (np.float32(1.0) + np.exp(-a)) * b).astype(np.float16)


def _is_valid(r: dict[str, Any]) -> bool:
    return "__error__" not in r and isinstance(r.get("time"), float)


def _timeline(results: list[dict[str, Any]], t0: datetime) -> tuple[list[list[float]], str]:
    """[[elapsed_s, time_us], ...] for valid results, in evaluation order."""
    if results and all("timestamp" in r for r in results):
        points = [
            [(datetime.fromisoformat(str(r["timestamp"])) - t0).total_seconds(),
             float(r["time"]) * 1e3]
            for r in results if _is_valid(r)
        ]
        return points, "timestamp"
    keys = [k for k in _PHASES if results and all(k in r for r in results)]
    points, elapsed_ms = [], 0.0
    for r in results:
        elapsed_ms += sum(float(r[k]) for k in keys)
        if _is_valid(r):
            points.append([elapsed_ms / 1e3, float(r["time"]) * 1e3])
    if keys:
        return points, "cumulative sum of " + " + ".join(keys)
    return points, "none (no timestamp or per-phase times in results; elapsed is 0)"


def tune_with_kernel_tuner(
    kernel_file: str,
    T: int,
    d: int,
    iterations: int = 7,
    verify: bool = True,
    atol: float = 1e-2,
    compiler_options: list[str] | None = None,
) -> dict[str, Any]:
    """Brute-force BLOCK x VEC x ROWS with Kernel Tuner's cupy backend; see the module doc."""
    import kernel_tuner

    x, out = make_inputs(T, d)
    answer = [reference(x, d), None, None, None] if verify else None

    t0 = datetime.now(UTC)
    start = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        KERNEL_NAME,
        kernel_file,
        T,
        [out, x, np.int32(d), np.int32(T)],
        TUNE_PARAMS,
        grid_div_x=["ROWS"],
        block_size_names=["BLOCK"],
        answer=answer,
        atol=atol,
        lang="cupy",
        iterations=iterations,
        strategy="brute_force",
        compiler_options=compiler_options,
        quiet=True,
    )
    wall_s = time.perf_counter() - start

    results = [r for r in results if r]
    valid = [r for r in results if _is_valid(r)]
    timeline, source = _timeline(results, t0)
    best = min(valid, key=lambda r: float(r["time"])) if valid else None
    try:
        version = str(kernel_tuner.__version__)
    except AttributeError:
        version = metadata.version("kernel_tuner")
    return {
        "tool": "kernel_tuner",
        "version": version,
        "evaluations": len(valid),
        "invalid": len(results) - len(valid),
        "wall_s": wall_s,
        "best_params": {k: int(best[k]) for k in TUNE_PARAMS} if best else None,
        "best_us": float(best["time"]) * 1e3 if best else None,
        "timeline": timeline,
        "timeline_source": source,
        "phase_totals_s": {
            k.removeprefix("total_").removesuffix("_time"): float(v) / 1e3
            for k, v in env.items() if k.startswith("total_") and k.endswith("_time")
        },
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--kernel", default="examples/templated/silu_and_mul.cu")
    p.add_argument("--T", type=int, default=4096)
    p.add_argument("--d", type=int, default=11008)
    p.add_argument("--iterations", type=int, default=7)
    p.add_argument("--no-verify", action="store_true")
    p.add_argument("--out", help="write the result as JSON here")
    a = p.parse_args(argv)
    res = tune_with_kernel_tuner(a.kernel, a.T, a.d, a.iterations, verify=not a.no_verify)
    print(f"kernel_tuner {res['version']}: {res['evaluations']} configs "
          f"({res['invalid']} invalid) in {res['wall_s']:.1f} s; best {res['best_params']} "
          f"at {res['best_us']:.2f} us; timeline from {res['timeline_source']}")
    if res["phase_totals_s"]:
        phases = res["phase_totals_s"].items()
        print("  phases (s): " + ", ".join(f"{k} {v:.2f}" for k, v in phases))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
