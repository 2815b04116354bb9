"""pragma-ncu against Kernel Tuner on the same template, space, shape and GPU.

Each side runs in its own process invocation (Kernel Tuner's takes minutes), then `--table`
joins them:

    python3 benchmarks/compare_kernel_tuner.py --side pragma --out pragma.json
    python3 benchmarks/compare_kernel_tuner.py --side kernel_tuner --out kt.json
    python3 benchmarks/compare_kernel_tuner.py --table pragma.json kt.json

Both tune `examples/templated/silu_and_mul.cu` over BLOCK x VEC x ROWS (72 points) at one shape,
each verifying every configuration against a reference. Each side's winner is then measured
again with pragma-ncu's own timing (CUDA events, L2 flushed, median of many launches), so the
"final" column compares the configurations, not the two tools' stopwatches. "To 2%" is when the
tool's running best first came within 2% of its own final best, by its own measurements.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tabulate import tabulate  # noqa: E402

from pragma_ncu import api  # noqa: E402
from pragma_ncu.backends.cuda.bench import run_bench  # noqa: E402
from pragma_ncu.backends.cuda.worker import worker_command  # noqa: E402
from pragma_ncu.infra.settings import load_settings  # noqa: E402
from pragma_ncu.pool.runner import Runner  # noqa: E402
from pragma_ncu.spec.file import load_spec  # noqa: E402
from pragma_ncu.spec.model import Shape  # noqa: E402

KERNEL = ROOT / "examples" / "templated" / "silu_and_mul.cu"


def _final(params: dict[str, Any], shape: Shape, runner: Runner) -> dict[str, Any]:
    """The configuration measured with pragma-ncu's bench, like every other figure we report."""
    spec = load_spec(KERNEL.with_suffix(".toml"))
    report = run_bench(spec, [shape], load_settings(), runner, params=params)
    m = report.rows[0].measurement
    assert m.timing is not None, m.message
    ceiling = report.ceiling.gbps if report.ceiling else None
    fraction = m.fraction_of(ceiling)
    return {"final_us": m.timing.median_us, "final_spread_pct": m.timing.spread_pct,
            "pct_ceiling": 100 * fraction if fraction is not None else None,
            "ceiling_gbps": ceiling, "device": report.device.name if report.device else ""}


def pragma_side(shape: Shape) -> dict[str, Any]:
    spec = load_spec(KERNEL.with_suffix(".toml"))
    with tempfile.TemporaryDirectory() as cold:  # no compile cache: every nvcc run is paid for
        settings = load_settings().with_(cache_dir=Path(cold))
        t0 = time.perf_counter()
        result = api.autotune(spec, api.AutotuneOptions(shapes=[shape], strategy="exhaustive",
                                                        budget=100), settings=settings)
        wall = time.perf_counter() - t0
    best = result.best_point or {}
    with Runner(worker_command(load_settings())) as runner:
        final = _final(best, shape, runner)
    return {"tool": "pragma-ncu", "evaluations": result.stats.evaluated, "wall_s": wall,
            "to_2pct_s": result.stats.time_to_within_2pct_s, "best_params": best,
            "verified": result.stats.verified, "search": result.to_json()["stats"], **final}


def kernel_tuner_side(shape: Shape) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from kernel_tuner_side import tune_with_kernel_tuner

    dims = shape.as_dict()
    kt = tune_with_kernel_tuner(str(KERNEL), dims["T"], dims["d"])
    best_us = min(t for _, t in kt["timeline"]) if kt["timeline"] else None
    to_2pct = next((e for e, t in _running_min(kt["timeline"])
                    if best_us and t <= 1.02 * best_us), None)
    with Runner(worker_command(load_settings())) as runner:
        final = _final(kt["best_params"], shape, runner)
    return {**kt, "tool": f"Kernel Tuner {kt['version']}", "to_2pct_s": to_2pct, **final}


def _running_min(timeline: list[list[float]]) -> list[tuple[float, float]]:
    out, best = [], float("inf")
    for elapsed, t in sorted(timeline):
        best = min(best, t)
        out.append((elapsed, best))
    return out


def _label(side: dict[str, Any]) -> str:
    if side["tool"] == "kernel_tuner":  # files written before the label carried the version
        return f"Kernel Tuner {side.get('version', '')}".strip()
    return str(side["tool"])


def table(sides: list[dict[str, Any]]) -> str:
    rows = [[_label(s), s["evaluations"], s["wall_s"], s.get("to_2pct_s"),
             " ".join(f"{k}={v}" for k, v in sorted(s["best_params"].items())),
             s["final_us"], s["pct_ceiling"]] for s in sides]
    head = ["tool", "evaluations", "wall s", "to 2% s", "best config", "final µs",
            "% ceiling"]
    return tabulate(rows, headers=head, floatfmt=".1f")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", choices=["pragma", "kernel_tuner"])
    ap.add_argument("--T", type=int, default=4096)
    ap.add_argument("--d", type=int, default=11008)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--table", nargs="+", type=Path, help="side JSON files to join")
    args = ap.parse_args(argv)
    if args.table:
        sides = [json.loads(p.read_text()) for p in args.table]
        print(f"device: {sides[0].get('device')}; copy ceiling "
              f"{sides[0].get('ceiling_gbps') or 0:.0f} GB/s")
        print(table(sides))
        return 0
    if not args.side:
        ap.error("--side or --table is required")
    shape = Shape(f"T={args.T},d={args.d}", (("T", args.T), ("d", args.d)))
    data = pragma_side(shape) if args.side == "pragma" else kernel_tuner_side(shape)
    data["date"] = time.strftime("%Y-%m-%d")
    text = json.dumps(data, indent=1, default=str)
    if args.out:
        args.out.write_text(text)
    print(table([data]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
