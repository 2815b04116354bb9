"""Run on the GPU machine: every example at every spec shape, the planted faults, timing
repeatability and per-candidate overhead. Prints a short table; writes Markdown and JSON.

    python tools/gpu_check.py --out DIR [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import traceback
from dataclasses import asdict
from datetime import date
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pragma_ncu.backends.cuda import build as cuda_build  # noqa: E402
from pragma_ncu.backends.cuda.bench import run_bench  # noqa: E402
from pragma_ncu.backends.cuda.worker import worker_command  # noqa: E402
from pragma_ncu.build import task as tasks  # noqa: E402
from pragma_ncu.infra.settings import load_settings  # noqa: E402
from pragma_ncu.pool.runner import Runner  # noqa: E402
from pragma_ncu.report import bench as render  # noqa: E402
from pragma_ncu.spec.file import load_spec  # noqa: E402
from pragma_ncu.worker.protocol import TimingConfig  # noqa: E402

EXAMPLES = ["silu_and_mul", "fused_add_rmsnorm", "merge_attn_states_lse", "softmax", "layernorm",
            "max_reduce", "transpose", "sgemm"]
FAULTS = {"scale": "ok", "skip_last": "unwritten_output", "oob_write": "out_of_bounds_write",
          "hang": "timeout", "mutate_input": "input_mutated", "wrong_answer": "wrong_answer"}


def bench_examples(runner: Runner, settings, log: list) -> list[dict]:  # type: ignore[no-untyped-def]
    rows = []
    for name in EXAMPLES:
        spec = load_spec(ROOT / "examples" / f"{name}.toml")
        try:
            report = run_bench(spec, spec.shapes, settings, runner)
        except Exception:
            print(f"{name}: FAILED\n{traceback.format_exc()}", flush=True)
            rows.append({"example": name, "shape": "-", "status": "harness error"})
            continue
        log.append(render.bench_json(report))
        for r in render.bench_rows(report):
            rows.append({"example": name, **r})
        print(f"{name}: " + ", ".join(f"{r['shape']}={r['status']}"
                                      for r in render.bench_rows(report)), flush=True)
    return rows


def run_faults(runner: Runner, settings, log: list) -> list[dict]:  # type: ignore[no-untyped-def]
    rows = []
    for name, expected in FAULTS.items():
        spec = load_spec(ROOT / "examples" / "faults" / f"{name}.toml")
        start = time.perf_counter()
        runner.timeout_s = 15.0
        report = run_bench(spec, spec.shapes, settings, runner)
        runner.timeout_s = 60.0
        for row in report.rows:
            m = row.measurement
            rows.append({"fault": name, "shape": row.shape.name, "expected": expected,
                         "status": m.status.value, "caught": m.status.value == expected,
                         "message": m.message[:110]})
        log.append(render.bench_json(report))
        print(f"fault {name}: {[r.measurement.status.value for r in report.rows]} "
              f"({time.perf_counter() - start:.1f} s)", flush=True)
    return rows


def repeatability(runner: Runner, settings, runs: int = 5) -> list[dict]:  # type: ignore[no-untyped-def]
    out = []
    for name, shape in (("silu_and_mul", "llama-7b"), ("fused_add_rmsnorm", None),
                        ("transpose", None)):
        spec = load_spec(ROOT / "examples" / f"{name}.toml")
        chosen = spec.shape_named(shape) if shape else spec.shapes[0]
        medians = []
        for _ in range(runs):
            report = run_bench(spec, [chosen], settings, runner)
            t = report.rows[0].measurement.timing
            medians.append(t.median_us if t else float("nan"))
        spread = 100 * (max(medians) - min(medians)) / statistics.median(medians)
        out.append({"kernel": name, "shape": chosen.name, "medians_us": medians,
                    "max_minus_min_pct": spread})
        print(f"repeat {name} {chosen.name}: {[round(m, 2) for m in medians]} "
              f"spread {spread:.2f}%", flush=True)
    return out


def overhead(runner: Runner, settings) -> dict:  # type: ignore[no-untyped-def]
    """Wall time of runner.evaluate for an already-built silu_and_mul at T=4096, d=11008."""
    spec = load_spec(ROOT / "examples" / "silu_and_mul.toml")
    shape = spec.shape_named("llama-7b")
    device = runner.hello()
    from pragma_ncu.infra.toolchain import find_nvcc
    built, harness = cuda_build.build_with_harness(spec, device.arch, find_nvcc(settings), settings)
    task = spec.resolve(shape)
    walls = []
    for _i in range(6):
        req = tasks.eval_request(spec, task, built, harness, timing=TimingConfig())
        t0 = time.perf_counter()
        m = runner.evaluate(req)
        walls.append({"wall_s": time.perf_counter() - t0, "worker_s": m.seconds,
                      "reference_s": m.reference_seconds, "status": m.status.value,
                      "reps": m.timing.reps if m.timing else None})
    print("overhead:", [round(w["wall_s"], 3) for w in walls], flush=True)
    return {"runs": walls, "first_includes_reference": True}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("gpu-check-out"))
    parser.add_argument("--only", choices=["examples", "faults", "repeat", "overhead"])
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    settings = load_settings()
    log: list = []
    result: dict = {"date": str(date.today())}
    with Runner(worker_command(settings), timeout_s=60.0) as runner:
        device = runner.hello()
        result["device"] = asdict(device)
        print(f"device: {device.name} driver {device.driver}", flush=True)
        if args.only in (None, "examples"):
            result["examples"] = bench_examples(runner, settings, log)
        if args.only in (None, "faults"):
            result["faults"] = run_faults(runner, settings, log)
        if args.only in (None, "overhead"):
            result["overhead"] = overhead(runner, settings)
        if args.only in (None, "repeat"):
            result["repeatability"] = repeatability(runner, settings)
        result["worker_restarts"] = runner.restarts
    (args.out / "gpu_check.json").write_text(json.dumps(result, indent=1, default=str))
    (args.out / "bench_log.json").write_text(json.dumps(log, indent=1, default=str))
    if "examples" in result:
        cols = ["example", "shape", "dims", "median_us", "spread_pct", "gbps", "pct_of_ceiling",
                "pct_of_same_size_copy", "registers", "occupancy_pct", "timing_mode", "status"]
        table = tabulate([[r.get(c) for c in cols] for r in result["examples"]], headers=cols,
                         floatfmt=".1f", tablefmt="github")
        (args.out / "examples.md").write_text(table + "\n")
        print(table)
    if "faults" in result:
        print(tabulate(result["faults"], headers="keys", tablefmt="github"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
