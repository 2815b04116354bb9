#!/usr/bin/env python3
"""Run on the GPU machine, from the repo root (it puts the repo on sys.path itself):

    python3 tools/gpu_reference_check.py OUT

Issue 21, acceptance 3: PyTorch and CuPy references verify the same kernels as the NumPy ones,
and the time to compute a reference at the largest bundled shape on the host (NumPy) and on the
GPU (torch, CuPy). Also the docs' own-kernel example (examples/init) benched with its NumPy
reference and autotuned over BLOCK, as docs/own-kernel.md shows. Prints tables; writes
OUT/reference_check.json. Needs torch and cupy; not optuna or openai (autotune's space here is
small enough to search exhaustively). About a minute on an H200.

The timed kernel is the GEMM at 4096^3 (examples/roofline/sgemm_tiled.cu, the largest bundled
GEMM shape), the most expensive reference bundled: 2 * 4096^3 = 137 GFLOP in float64 on the
host. silu_and_mul and fused_add_rmsnorm at their largest shapes show the elementwise end.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from tabulate import tabulate  # noqa: E402

from pragma_ncu.backends.cuda.bench import run_bench  # noqa: E402
from pragma_ncu.backends.cuda.worker import worker_command  # noqa: E402
from pragma_ncu.infra.errors import NoGPUError  # noqa: E402
from pragma_ncu.infra.settings import load_settings  # noqa: E402
from pragma_ncu.pool.runner import Runner  # noqa: E402
from pragma_ncu.spec import dtypes  # noqa: E402
from pragma_ncu.spec.file import parse_spec  # noqa: E402
from pragma_ncu.spec.model import TaskSpec  # noqa: E402
from pragma_ncu.worker.protocol import TimingConfig  # noqa: E402
from pragma_ncu.worker.reference import load_function  # noqa: E402

EX = ROOT / "examples"
FILES = {"numpy": "reference.py", "torch": "reference_torch.py", "cupy": "reference_cupy.py"}
# (kernel, its spec, shapes verified, the largest shape, reference function, tolerance override)
CASES = [
    ("sgemm_tiled", EX / "roofline" / "sgemm_tiled.toml", ("4096", "small"), "4096", "sgemm",
     {"fp32": {"atol": 1e-2, "rtol": 1e-3}}),  # examples/sgemm.toml's, against float64
    ("silu_and_mul", EX / "silu_and_mul.toml", ("llama-13b", "odd"), "llama-13b",
     "silu_and_mul", None),
    ("fused_add_rmsnorm", EX / "fused_add_rmsnorm.toml", ("llama-70b", "odd"), "llama-70b",
     "fused_add_rmsnorm", None),
]


def spec_with(toml: Path, library: str, function: str, tolerance: dict | None) -> TaskSpec:
    """The bundled spec with this library's reference, through the spec validator."""
    data = tomllib.loads(toml.read_text())
    rel = os.path.relpath(EX / FILES[library], toml.parent)
    data["reference"] = {"function": f"{rel}:{function}", "library": library}
    if tolerance:
        data["tolerance"] = {**data.get("tolerance", {}), **tolerance}
    return parse_spec(data, toml)


def verify(runner: Runner, settings: Any) -> list[dict[str, Any]]:
    rows = []
    for kernel, toml, shapes, _, function, tolerance in CASES:
        for library in FILES:
            spec = spec_with(toml, library, function, tolerance)
            chosen = [spec.shape_named(s) for s in shapes]
            report = run_bench(spec, chosen, settings, runner,
                               timing=TimingConfig(budget_ms=20.0, copy_reference=False))
            if not report.rows:  # no build or no GPU: say so rather than show nothing
                rows.append({"kernel": kernel, "shape": "-", "library": library,
                             "status": "no_gpu" if report.device is None else "build_failed",
                             "message": report.no_device_reason or report.build.log[-500:]})
            for row in report.rows:
                m = row.measurement
                worst = [(o.name, o.max_abs, o.max_rel) for c in m.checks for o in c.outputs]
                rows.append({
                    "kernel": kernel, "shape": row.shape.name, "library": library,
                    "status": m.status.value, "message": m.message,
                    "kernel_us": m.timing.median_us if m.timing else None,
                    "reference_s_per_check": m.reference_seconds / max(len(m.checks), 1),
                    "max_abs": max((w[1] for w in worst), default=None),
                    "max_rel": max((w[2] for w in worst), default=None),
                })
    return rows


def inputs(spec: TaskSpec, shape_name: str, seed: int = 1) -> dict[str, Any]:
    """Host inputs as a reference receives them (reference dtypes), and the scalars."""
    task = spec.resolve(spec.shape_named(shape_name))
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for a in task.args:
        if a.role == "scalar":
            out[a.name] = a.value
        elif a.role in ("input", "inout"):
            ref = dtypes.lookup(a.dtype).reference_dtype  # type: ignore[union-attr]
            out[a.name] = rng.uniform(-1, 1, size=a.shape).astype(ref)
    return out


def timed(fn: Any, kwargs: dict[str, Any], sync: Any, reps: int) -> tuple[float, float]:
    """(first call, median of `reps` more), seconds, synchronized."""
    sync()
    t0 = time.perf_counter()
    fn(**kwargs)
    sync()
    first = time.perf_counter() - t0
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(**kwargs)
        sync()
        samples.append(time.perf_counter() - t0)
    return first, statistics.median(samples)


def reference_times() -> list[dict[str, Any]]:
    import cupy
    import torch

    rows = []
    for kernel, toml, _, largest, function, _ in CASES:
        spec = spec_with(toml, "numpy", function, None)
        host = inputs(spec, largest)
        on_torch = {k: torch.as_tensor(v, device="cuda") if isinstance(v, np.ndarray) else v
                    for k, v in host.items()}
        on_cupy = {k: cupy.asarray(v) if isinstance(v, np.ndarray) else v
                   for k, v in host.items()}
        runs = [("numpy", "host", host, lambda: None, 3),
                ("torch", "GPU", on_torch, torch.cuda.synchronize, 10),
                ("cupy", "GPU", on_cupy, cupy.cuda.runtime.deviceSynchronize, 10)]
        base = None
        for library, where, kwargs, sync, reps in runs:
            fn = load_function(f"{FILES[library]}:{function}", str(EX))
            first, median = timed(fn, kwargs, sync, reps)
            base = base or median
            rows.append({"kernel": kernel, "shape": largest,
                         "dims": spec.shape_named(largest).label(), "library": library,
                         "where": where, "first_s": first, "median_s": median, "reps": reps,
                         "speedup_vs_numpy": base / median})
    return rows


def own_kernel(out: Path) -> dict[str, Any]:
    """docs/own-kernel.md's last steps: bench with the NumPy reference, autotune BLOCK."""
    spec = EX / "init" / "masked_bias_scale.toml"
    tuned = out / "masked_bias_scale_tune.toml"
    text = spec.read_text().replace("BLOCK = { default = 256 }",
                                    "BLOCK = { default = 256, values = [128, 256, 512, 1024] }")
    text = text.replace('source = "masked_bias_scale.cu"', f'source = "{EX / "init"}/'
                        'masked_bias_scale.cu"')
    text = text.replace('function = "masked_bias_scale_reference.py',
                        f'function = "{EX / "init"}/masked_bias_scale_reference.py')
    tuned.write_text(text)
    py = [sys.executable, "-m", "pragma_ncu"]
    kernel = str(EX / "init" / "masked_bias_scale.cu")
    steps = {"bench": py + ["bench", "--kernel", kernel],
             "autotune": py + ["autotune", "--kernel", kernel, "--spec", str(tuned),
                               "--out", str(out / "autotune")]}
    done = {}
    for name, cmd in steps.items():
        run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        done[name] = {"command": " ".join(cmd), "rc": run.returncode, "stdout": run.stdout,
                      "stderr": run.stderr[-4000:]}
        print(f"\n== {name}: {' '.join(cmd[2:])} (exit {run.returncode})\n{run.stdout}"
              f"{run.stderr[-2000:] if run.returncode else ''}")
    return done


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    settings = load_settings()
    started = datetime.datetime.now(datetime.UTC)
    with Runner(worker_command(settings), timeout_s=600) as runner:
        try:
            device = runner.hello()
        except NoGPUError as exc:
            print(f"this check runs on the GPU machine: {exc}", file=sys.stderr)
            return 2
        print(f"device: {device.name} ({device.arch}), {started:%Y-%m-%d %H:%M} UTC")
        checks = verify(runner, settings)
    print("\n== the same kernels verified by NumPy, PyTorch and CuPy references")
    print(tabulate([[r["kernel"], r["shape"], r["library"], r["status"], r.get("max_abs"),
                     r.get("max_rel"), r.get("kernel_us"), r.get("reference_s_per_check")]
                    for r in checks],
                   headers=["kernel", "shape", "reference", "status", "max |err|", "max rel",
                            "kernel µs", "reference s/check (worker)"], floatfmt=".4g"))
    times = reference_times()
    print("\n== time to compute the reference at the largest bundled shape")
    print(tabulate([[r["kernel"], r["dims"], r["library"], r["where"], r["first_s"],
                     r["median_s"], r["speedup_vs_numpy"]] for r in times],
                   headers=["kernel", "shape", "reference", "where", "first call s",
                            "median s", "× NumPy"], floatfmt=".4g"))
    example = own_kernel(out)
    import cupy
    import torch

    result = {"date_utc": started.isoformat(timespec="seconds"), "device": asdict(device),
              "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                           "torch": torch.__version__, "cupy": cupy.__version__},
              "verification": checks, "reference_times": times, "own_kernel": example}
    (out / "reference_check.json").write_text(json.dumps(result, indent=2, default=str))
    failed = [r for r in checks if r["status"] != "ok"]
    bad_example = [k for k, v in example.items() if v["rc"] != 0]
    print(f"\n{len(checks) - len(failed)} of {len(checks)} verifications passed; own-kernel "
          f"steps failed: {bad_example or 'none'}; wrote {out / 'reference_check.json'}")
    return 1 if failed or bad_example else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 tools/gpu_reference_check.py OUT")
    sys.exit(main(Path(sys.argv[1])))
