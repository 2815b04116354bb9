"""Record the applications of examples/apps/ under ncu on the GPU machine, the way users do
(`ncu -o app ./app`), for triage at application scale (issue 16).

    python tools/record_apps.py --out DIR [--phase pipeline|many|probe|all]  (GPU machine)
    python tools/record_apps.py --import-from DIR --repo-root PATH --gpu-out DIR   (here)

- pipeline: examples/apps/pipeline.cu built as BASE and NEW, each profiled whole under ncu's
  default set (22 kernel groups x 10 launches); DIR/pipeline/<side>/ gets report.ncu-rep and
  its CSV pages (raw in base and display units, details), gzipped.
- many: examples/apps/many.cu (100 kernels x 50 launches = 5,000 launches a side). A probe of
  100 launches times ncu's cost per launch under two collections first, and the richer one
  that profiles 5,000 launches within --many-budget seconds is used for both sides (the
  default set costs about 0.3 s a launch: 25 minutes a side, more than a lease allows).
DIR/meta.json holds the device, driver, ncu version, date, the collections' command lines and
their wall times. Clocks are left alone (`--clock-control none`), as everywhere here.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

APPS = ROOT / "examples" / "apps"
PAGES = {  # file stem -> ncu --import options
    "raw": ["--page", "raw", "--print-units", "base", "--print-kernel-base", "mangled"],
    "raw_display": ["--page", "raw", "--print-kernel-base", "mangled"],
    "details": ["--page", "details", "--print-units", "base"],
}
# The collections tried for the 5,000-launch application, richest first.
MANY_COLLECTIONS = {
    "sol": ["--section", "SpeedOfLight", "--section", "LaunchStats", "--section", "Occupancy"],
    "duration": ["--metrics", "gpu__time_duration.sum", "--section", "LaunchStats",
                 "--section", "Occupancy"],
}


def build(app: str, side: str, dest: Path, arch: str) -> Path:
    exe = dest / f"{app}_{side}"
    cmd = ["nvcc", "-O3", f"-arch={arch}", "-lineinfo", "-std=c++17", "-o", str(exe),
           str(APPS / f"{app}.cu"), *(["-DNEW"] if side == "new" else [])]
    subprocess.run(cmd, check=True, timeout=300)
    return exe


def profile(ncu: str, exe: Path, report: Path, options: list[str], args: list[str]
            ) -> dict[str, Any]:
    """ncu over the whole application, as a user runs it; the report is report.ncu-rep."""
    cmd = [ncu, "--clock-control", "none", *options, "-f", "-o", str(report), str(exe), *args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=590)
    wall = time.perf_counter() - t0
    report.parent.joinpath(f"{report.name}.log").write_text(proc.stdout[-20000:] + proc.stderr)
    shown = ["ncu", *cmd[1:cmd.index(str(exe))], f"./{exe.name}", *args]
    return {"command": " ".join(shown), "rc": proc.returncode, "wall_s": round(wall, 1)}


def export(ncu: str, report: Path, dest: Path, stems: tuple[str, ...]) -> dict[str, float]:
    """The CSV pages of a report, gzipped; the seconds each export took."""
    took = {}
    for stem in stems:
        t0 = time.perf_counter()
        proc = subprocess.run([ncu, "--import", str(report), "--csv", *PAGES[stem]],
                              capture_output=True, text=True, timeout=590)
        took[stem] = round(time.perf_counter() - t0, 1)
        text = proc.stdout if proc.returncode == 0 else ""
        (dest / f"{stem}.csv.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    return took


def record_pipeline(ncu: str, bins: Path, out: Path, arch: str) -> dict[str, Any]:
    result = {}
    for side in ("base", "new"):
        exe = build("pipeline", side, bins, arch)
        dest = out / "pipeline" / side
        dest.mkdir(parents=True, exist_ok=True)
        plain = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
        row = profile(ncu, exe, dest / "report", [], ["10"])
        row["plain_run"] = plain.stdout.strip() or plain.stderr.strip()
        row["export_s"] = export(ncu, dest / "report.ncu-rep", dest, tuple(PAGES))
        result[side] = row
        print(f"pipeline {side}: {row}", flush=True)
    return result


def probe_many(ncu: str, exe: Path, out: Path, budget_s: float, launches: int
               ) -> tuple[str, dict[str, Any]]:
    """ncu's cost per launch under each collection (one launch of each of the 100 kernels), and
    the richest collection that profiles 100 x `launches` launches within `budget_s`."""
    probe_dir = out / "many" / "probe"
    probe_dir.mkdir(parents=True, exist_ok=True)
    probes, chosen = {}, "duration"
    for label, options in MANY_COLLECTIONS.items():
        row = profile(ncu, exe, probe_dir / label, options, ["1"])
        row["s_per_launch"] = round(row["wall_s"] / 100, 4)
        probes[label] = row
        print(f"many probe {label}: {row}", flush=True)
        if row["rc"] == 0 and row["s_per_launch"] * 100 * launches <= budget_s:
            chosen = label
            break
    shutil.rmtree(probe_dir, ignore_errors=True)
    return chosen, probes


def record_many(ncu: str, bins: Path, out: Path, arch: str, budget_s: float,
                launches: int, probe_only: bool = False, collection: str = "auto"
                ) -> dict[str, Any]:
    exes = {side: build("many", side, bins, arch) for side in ("base", "new")}
    if collection == "auto":
        chosen, probes = probe_many(ncu, exes["base"], out, budget_s, launches)
    else:
        chosen, probes = collection, {}
    result: dict[str, Any] = {"probes": probes, "collection": chosen, "launches": launches}
    if probe_only:
        return result
    for side, exe in exes.items():
        dest = out / "many" / side
        dest.mkdir(parents=True, exist_ok=True)
        row = profile(ncu, exe, dest / "report", MANY_COLLECTIONS[chosen], [str(launches)])
        row["export_s"] = export(ncu, dest / "report.ncu-rep", dest, ("raw",))
        result[side] = row
        print(f"many {side}: {row}", flush=True)
    return result


def record(args: argparse.Namespace) -> None:
    from record_corpus import meta

    from pragma_ncu.infra.settings import load_settings
    from pragma_ncu.infra.toolchain import find_ncu

    ncu = find_ncu(load_settings())
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    bins = out / "bin"
    bins.mkdir(exist_ok=True)
    summary: dict[str, Any] = {"meta": meta(ncu, out)}
    arch = summary["meta"].get("arch") or "sm_90"
    if args.phase in ("pipeline", "all"):
        summary["pipeline"] = record_pipeline(ncu.path, bins, out, arch)
    if args.phase in ("many", "probe", "all"):
        summary["many"] = record_many(ncu.path, bins, out, arch, args.many_budget,
                                      args.many_launches, probe_only=args.phase == "probe",
                                      collection=args.many_collection)
    shutil.rmtree(bins, ignore_errors=True)
    (out / "meta.json").write_text(json.dumps(summary, indent=1, default=str))


def import_fixtures(src: Path, dest: Path, repo_root: str, gpu_out: str) -> None:
    """The pipeline's pages (not its reports) and the many application's raw pages into the
    fixtures, machine paths made relative."""
    from record_profiles import copy_scrubbed, scrub_prefixes

    prefixes = scrub_prefixes(src, repo_root, gpu_out)
    for app, stems in (("pipeline", tuple(PAGES)), ("many", ("raw",))):
        for side in ("base", "new"):
            if not (src / app / side).is_dir():
                continue  # that application was not recorded this time
            target = dest / app / side
            target.mkdir(parents=True, exist_ok=True)
            for stem in stems:
                copy_scrubbed(src / app / side / f"{stem}.csv.gz", target / f"{stem}.csv.gz",
                              prefixes)
    dest.mkdir(parents=True, exist_ok=True)
    for app in ("pipeline", "many"):  # one per application: they are recorded in separate calls
        if (src / app).is_dir():
            copy_scrubbed(src / "meta.json", dest / f"meta.{app}.json", prefixes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--phase", choices=("pipeline", "many", "probe", "all"), default="all")
    parser.add_argument("--many-budget", type=float, default=150.0,
                        help="seconds one side of the 5,000-launch application may take")
    parser.add_argument("--many-launches", type=int, default=50)
    parser.add_argument("--many-collection", choices=("auto", *MANY_COLLECTIONS), default="auto",
                        help="skip the probe and use this collection")
    parser.add_argument("--import-from", type=Path)
    parser.add_argument("--fixtures", type=Path, default=ROOT / "tests" / "fixtures" / "apps")
    parser.add_argument("--repo-root", default=str(ROOT))
    parser.add_argument("--gpu-out", default="/")
    args = parser.parse_args()
    if args.import_from:
        import_fixtures(args.import_from, args.fixtures, args.repo_root, args.gpu_out)
        return 0
    if args.out is None:
        parser.error("--out is required for a recording")
    record(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
