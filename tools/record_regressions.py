"""Run on the GPU machine: profile and time both sides of every planted regression pair
(examples/regressions/expected.toml), run `triage` on the recordings, and save CI fixtures.

    python tools/record_regressions.py --out DIR [--only PAIR ...] [--repeats 3]   (GPU machine)
    python tools/record_regressions.py --import-from DIR --repo-root PATH --gpu-out DIR  (here)

DIR/<pair>/base/ and DIR/<pair>/new/ get ncu's CSV pages (gzipped, as record_profiles.py exports
them), profile.json.gz (read through ncu_report), timing.json (the profiled run's timing plus
--repeats bench runs, BASE and NEW alternating so that clock drift hits both) and the .ncu-rep;
DIR/<pair>/triage.json and triage.txt are triage's output on those two folders. DIR/summary.json
and a printed table compare the top cause and the verdict with expected.toml.
--import-from copies everything but the reports into tests/fixtures/regressions/ with machine
paths made relative.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
import tomllib
import traceback
from pathlib import Path
from typing import Any

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pragma_ncu.backends.cuda import collect as col  # noqa: E402
from pragma_ncu.backends.cuda.bench import run_bench  # noqa: E402
from pragma_ncu.backends.cuda.profiling import ProfileRun, run_profile  # noqa: E402
from pragma_ncu.backends.cuda.worker import worker_command  # noqa: E402
from pragma_ncu.infra.settings import Settings, load_settings  # noqa: E402
from pragma_ncu.infra.toolchain import find_ncu  # noqa: E402
from pragma_ncu.knowledge.compendium import Compendium  # noqa: E402
from pragma_ncu.measure.measurement import Status  # noqa: E402
from pragma_ncu.measure.stats import TimingStats  # noqa: E402
from pragma_ncu.pool.runner import Runner  # noqa: E402
from pragma_ncu.report.triage import report_text  # noqa: E402
from pragma_ncu.spec.file import load_spec  # noqa: E402
from pragma_ncu.spec.model import TaskSpec  # noqa: E402
from pragma_ncu.triage.engine import triage  # noqa: E402
from pragma_ncu.triage.load import read_side, write_timings  # noqa: E402
from pragma_ncu.triage.report import Timing  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from record_profiles import (  # noqa: E402
    copy_scrubbed,
    export_pages,
    recorder_args,
    scrub_prefixes,
)

PAIRS_DIR = ROOT / "examples" / "regressions"
SIDES = ("base", "new")
SIDE_FILES = ("raw.csv.gz", "details.csv.gz", "source.csv.gz", "profile.json.gz", "timing.json")
PAIR_FILES = ("triage.json", "triage.txt")


def pairs(only: list[str]) -> dict[str, dict[str, Any]]:
    expected = tomllib.loads((PAIRS_DIR / "expected.toml").read_text())
    return {name: e for name, e in expected.items() if not only or name in only}


def spec_of(entry: dict[str, str]) -> TaskSpec:
    return load_spec(PAIRS_DIR / entry["spec"], PAIRS_DIR / entry["kernel"])


def profile_side(spec: TaskSpec, dest: Path, settings: Settings, ncu_path: str) -> ProfileRun:
    """Verify, time and profile one side (source counters on); export its CSV pages."""
    worker = worker_command(settings)
    with Runner(worker, timeout_s=180) as runner:
        run = run_profile(spec, spec.shapes[0], settings, runner, worker, out_dir=dest,
                          request=col.CollectRequest(source=True))
    if run.profile is None or run.collection is None or run.collection.report is None:
        raise RuntimeError(f"{spec.source_path.name}: {run.problem}")
    export_pages(run.collection.report, ncu_path, dest)
    (dest / "profile.json.gz").write_bytes(gzip.compress(
        json.dumps(run.profile.to_json()).encode(), mtime=0))
    return run


def time_sides(specs: dict[str, TaskSpec], first: dict[str, TimingStats], repeats: int,
               settings: Settings) -> dict[str, list[TimingStats]]:
    """The profiled run's timing plus `repeats` bench runs per side, BASE and NEW alternating."""
    runs = {side: [first[side]] for side in specs}
    with Runner(worker_command(settings), timeout_s=180) as runner:
        for _ in range(repeats):
            for side, spec in specs.items():
                report = run_bench(spec, [spec.shapes[0]], settings, runner)
                m = report.rows[0].measurement if report.rows else None
                if m is None or m.status is not Status.OK or m.timing is None:
                    raise RuntimeError(f"{side}: timing failed: {m.message if m else '-'}")
                runs[side].append(m.timing)
    return runs


def record(name: str, entry: dict[str, Any], out: Path, repeats: int, settings: Settings,
           ncu_path: str, knowledge: Compendium) -> dict[str, Any]:
    dest = out / name
    specs = {side: spec_of(entry[side]) for side in SIDES}
    first, info = {}, {}
    for side, spec in specs.items():
        run = profile_side(spec, dest / side, settings, ncu_path)
        assert run.measurement is not None and run.measurement.timing is not None
        first[side] = run.measurement.timing
        res = run.build.resources
        info[side] = {"device": run.device.name if run.device else None, "params": run.params,
                      "registers": res.registers if res else None,
                      "spill_stores": res.spill_stores if res else None}
    runs = time_sides(specs, first, repeats, settings)
    for side, spec in specs.items():
        write_timings(dest / side / "timing.json", (Timing(spec.kernel_name, tuple(runs[side])),),
                      shape=spec.shapes[0].name, **info[side])
    # Drilled into the pair's one kernel, so that its full detail is kept whatever the verdict.
    report = triage(read_side(str(dest / "base"), "BASE", settings),
                    read_side(str(dest / "new"), "NEW", settings), knowledge,
                    kernel=specs["new"].kernel_name)
    (dest / "triage.json").write_text(json.dumps(report.to_json(), indent=1) + "\n")
    (dest / "triage.txt").write_text(report_text(report) + "\n")
    group = report.kernels[0]
    assert group.detail is not None
    k = group.detail
    top = k.causes[0].bottleneck if k.causes and k.causes[0].score > 0 else ""
    ok = (k.duration.verdict == "regression" and top == entry["cause"]) if entry["regression"] \
        else k.duration.verdict != "regression"
    return {"pair": name, "expected": entry["cause"], "top_cause": top, "ok": ok,
            "verdict": k.duration.verdict, "delta_pct": round(k.duration.delta_pct, 1),
            "noise_pct": k.duration.noise_pct, "base_us": k.duration.base_us,
            "new_us": k.duration.new_us, "causes": [(c.bottleneck, c.score) for c in k.causes],
            "exit_code": report.exit_code, "sides": info}


def import_fixtures(src: Path, dest: Path, repo_root: str, gpu_out: str) -> None:
    """Copy a recording into the test fixtures (no .ncu-rep), machine paths made relative."""
    prefixes = scrub_prefixes(src, repo_root, gpu_out)
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        for sub, names in [(s, SIDE_FILES) for s in SIDES] + [("", PAIR_FILES)]:
            target = dest / folder.name / sub
            target.mkdir(parents=True, exist_ok=True)
            for name in names:
                copy_scrubbed(folder / sub / name, target / name, prefixes)
    copy_scrubbed(src / "summary.json", dest / "summary.json", prefixes)


def main() -> None:
    args = recorder_args("tests/fixtures/regressions", lambda parser: parser.add_argument(
        "--repeats", type=int, default=3, help="bench runs per side"))
    if args.import_from:
        import_fixtures(args.import_from, args.fixtures, args.repo_root, args.gpu_out)
        return
    settings = load_settings()
    ncu_path = find_ncu(settings).path
    knowledge = Compendium.load()
    rows = []
    for name, entry in pairs(args.only).items():
        t0 = time.perf_counter()
        try:
            rows.append(record(name, entry, args.out, args.repeats, settings, ncu_path,
                               knowledge))
        except Exception:
            rows.append({"pair": name, "expected": entry["cause"], "ok": False,
                         "problem": traceback.format_exc()})
        print(f"{name}: {json.dumps(rows[-1], default=str)[:600]} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    summary = args.out / "summary.json"  # merged, so that --only runs add up
    done = {r["pair"] for r in rows}
    kept = json.loads(summary.read_text()) if summary.is_file() else []
    rows = sorted([r for r in kept if r["pair"] not in done] + rows, key=lambda r: r["pair"])
    summary.write_text(json.dumps(rows, indent=1, default=str))
    table = [[r["pair"], r.get("expected") or "-", r.get("top_cause", "-") or "-",
              {True: "yes", False: "NO"}[bool(r.get("ok"))], r.get("verdict", "-"),
              r.get("delta_pct"), r.get("noise_pct") and round(r["noise_pct"], 1),
              r.get("exit_code")] for r in rows]
    print(tabulate(table, ["pair", "planted", "triage says", "match", "verdict", "delta %",
                           "noise %", "exit"]))


if __name__ == "__main__":
    main()
