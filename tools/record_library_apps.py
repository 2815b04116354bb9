"""Record the library-heavy applications of examples/apps/cupy_steps.py under ncu on the GPU
machine, the way users do (`ncu -o app python3 app.py`), for triage across library kernel swaps
(issue 38).

    python tools/record_library_apps.py --out DIR [--apps mlp reduce ...]   (GPU machine)
    python tools/record_library_apps.py --import-from DIR                   (here)

Each application runs once plain (its answer and wall time), then under ncu's default set with
`--profile-from-start off` (only the timed iterations); DIR/<app>_<side>/ gets report.ncu-rep and
its raw (base units, mangled names) and details CSV pages, gzipped, and DIR/meta.json the device,
driver, ncu version, date, command lines, wall times and each side's kernel names, so a reader
sees at once which calls the library answered with other kernels. Clocks are left alone
(`--clock-control none`), as everywhere here.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

APP = ROOT / "examples" / "apps" / "cupy_steps.py"
APPS = ("mlp", "reduce", "precision", "fft")
STEMS = ("raw", "details")
FIXTURES = ROOT / "tests" / "fixtures" / "apps" / "library"


def kernel_names(raw_gz: Path) -> dict[str, int]:
    """Launches per kernel name on a raw page (its first row holds the units)."""
    text = gzip.decompress(raw_gz.read_bytes()).decode(errors="replace")
    rows = list(csv.DictReader(io.StringIO(text)))[1:]
    return dict(Counter(r.get("Kernel Name", "?") for r in rows))


def record_side(ncu: str, app: str, side: str, out: Path) -> dict[str, Any]:
    from record_apps import export

    dest = out / f"{app}_{side}"  # one level: the device tool brings back two at most
    dest.mkdir(parents=True, exist_ok=True)
    args = [str(APP), "--app", app, "--variant", side]
    t0 = time.perf_counter()
    plain = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300)
    row: dict[str, Any] = {"plain": (plain.stdout.strip() or plain.stderr.strip()[-2000:]),
                           "plain_rc": plain.returncode,
                           "plain_wall_s": round(time.perf_counter() - t0, 1)}
    options = ["--clock-control", "none", "--profile-from-start", "off"]
    cmd = [ncu, *options, "-f", "-o", str(dest / "report"), sys.executable, *args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=560)
    row.update(command=" ".join(["ncu", *options, "-o", f"{app}_{side}/report", "python3",
                                 "cupy_steps.py", *args[1:]]),
               rc=proc.returncode, wall_s=round(time.perf_counter() - t0, 1))
    (dest / "ncu.log").write_text(proc.stdout[-20000:] + proc.stderr[-20000:])
    if proc.returncode == 0:
        row["export_s"] = export(ncu, dest / "report.ncu-rep", dest, STEMS)
        row["kernels"] = kernel_names(dest / "raw.csv.gz")
    print(f"{app} {side}: rc {row['rc']}, {row['wall_s']} s, "
          f"{sum(row.get('kernels', {}).values())} launches", flush=True)
    return row


def record(out: Path, apps: list[str]) -> None:
    from record_corpus import meta

    from pragma_ncu.infra.settings import load_settings
    from pragma_ncu.infra.toolchain import find_ncu

    ncu = find_ncu(load_settings())
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"meta": meta(ncu, out)}
    for app in apps:
        summary[app] = {side: record_side(ncu.path, app, side, out) for side in ("base", "new")}
        b, n = (set(summary[app][s].get("kernels", {})) for s in ("base", "new"))
        summary[app]["only_base"], summary[app]["only_new"] = sorted(b - n), sorted(n - b)
        print(f"{app}: only on BASE {sorted(b - n)}; only on NEW {sorted(n - b)}", flush=True)
        (out / "meta.json").write_text(json.dumps(summary, indent=1, default=str))


def import_fixtures(src: Path, dest: Path, repo_root: str, gpu_out: str) -> None:
    """The recorded pages (not the reports) into the fixtures, machine paths made relative."""
    from record_profiles import copy_scrubbed, scrub_prefixes

    prefixes = scrub_prefixes(src, repo_root, gpu_out)
    for app in APPS:
        for side in ("base", "new"):
            recorded = src / f"{app}_{side}"
            if not (recorded / "raw.csv.gz").is_file():
                continue
            target = dest / app / side
            target.mkdir(parents=True, exist_ok=True)
            for stem in STEMS:
                copy_scrubbed(recorded / f"{stem}.csv.gz", target / f"{stem}.csv.gz", prefixes)
    dest.mkdir(parents=True, exist_ok=True)
    copy_scrubbed(src / "meta.json", dest / "meta.json", prefixes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--apps", nargs="+", choices=APPS, default=list(APPS))
    parser.add_argument("--import-from", type=Path)
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--repo-root", default=str(ROOT))
    parser.add_argument("--gpu-out", default="/")
    args = parser.parse_args()
    if args.import_from:
        import_fixtures(args.import_from, args.fixtures, args.repo_root, args.gpu_out)
        return 0
    if args.out is None:
        parser.error("--out is required for a recording")
    record(args.out, args.apps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
