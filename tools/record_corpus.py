"""Record the diagnosis calibration corpus (examples/corpus/expected.toml) three ways on the GPU
machine, the way users collect reports, and save what CI needs to judge the diagnosis offline.

    python tools/record_corpus.py --out DIR [--only NAME ...] [--phase app|ours|all]  (GPU machine)
    python tools/record_corpus.py --app [--only NAME ...]   (the application ncu profiles)
    python tools/record_corpus.py --import-from DIR --repo-root PATH --gpu-out DIR    (here)

The three collections:
- default: `ncu --clock-control none -o DIR/default python tools/record_corpus.py --app`, i.e.
  ncu's default section set over an application that launches every corpus kernel once (a
  kernel-name filter keeps the harness's input generators out of the report);
- full: the same with `--set full --import-source yes`;
- ours: `pragma-ncu profile`'s collection (run_profile, with source counters) of each kernel.
Clocks are left alone (`--clock-control none`) in all three, as everywhere in this project.

DIR/default and DIR/full get the report and its CSV pages: raw in base units and in ncu's
display units (`raw_display`), details likewise, and source; DIR/ours/<name>/ the pages of each
kernel; DIR/meta/ the device, driver and ncu facts, `--list-sets`, `--list-sections` and the
wall time of every collection. --import-from copies the pages (not the reports) into
tests/fixtures/corpus/ with machine paths made relative.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import time
import tomllib
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "examples" / "corpus"
PAGES = {  # file stem -> (page, extra ncu --import options)
    "raw": ("raw", ["--print-units", "base", "--print-kernel-base", "mangled"]),
    "raw_display": ("raw", ["--print-kernel-base", "mangled"]),
    "details": ("details", ["--print-units", "base"]),
    "details_display": ("details", []),
    "source": ("source", ["--print-units", "base", "--print-source", "cuda,sass"]),
}
FIXTURE_PAGES = ("raw", "raw_display", "details", "details_display", "source")


def entries(only: list[str]) -> dict[str, dict[str, Any]]:
    table = tomllib.loads((CORPUS / "expected.toml").read_text())
    return {n: e for n, e in table.items() if not only or n in only}


def spec_path(entry: dict[str, Any]) -> Path:
    return (CORPUS / entry["spec"]).resolve()


PAIRS = ROOT / "examples" / "regressions"


def pair_specs(side: str) -> dict[str, Any]:
    """(pair name -> TaskSpec) of one side of every planted regression pair (not 'identical')."""
    from pragma_ncu.spec.file import load_spec

    table = tomllib.loads((PAIRS / "expected.toml").read_text())
    return {name: load_spec(PAIRS / e[side]["spec"], PAIRS / e[side]["kernel"])
            for name, e in table.items() if name != "identical"}


def app_specs(only: list[str], pairs: str | None) -> dict[str, Any]:
    from pragma_ncu.spec.file import load_spec

    if pairs:
        return pair_specs(pairs)
    return {name: load_spec(spec_path(e)) for name, e in entries(only).items()}


def run_app(only: list[str], pairs: str | None = None) -> int:
    """The profiled application: build every kernel (cached), then launch each once on seeded
    random inputs, in this one process."""
    from pragma_ncu.backends.cuda import build as cuda_build
    from pragma_ncu.backends.cuda.worker.evaluate import Session, launch_for_profile
    from pragma_ncu.backends.cuda.worker.gpu import Gpu
    from pragma_ncu.build import task as tasks
    from pragma_ncu.infra.settings import load_settings
    from pragma_ncu.infra.toolchain import find_nvcc

    settings = load_settings()
    nvcc = find_nvcc(settings)
    gpu = Gpu()
    session = Session(gpu)
    arch = gpu.info()["arch"]
    for name, spec in app_specs(only, pairs).items():
        built, harness = cuda_build.build_with_harness(spec, arch, nvcc, settings)
        if not built.ok:
            print(f"app: {name} did not compile:\n{built.log}", file=sys.stderr)
            return 1
        task = spec.resolve(spec.shapes[0], spec.default_params())
        req = tasks.eval_request(spec, task, built, harness)
        done = launch_for_profile(session, req, warmup=0, seed=1)
        print(f"app: {name} launched ({done['seconds'] * 1e3:.1f} ms)", flush=True)
    return 0


def ncu_app(ncu: str, out: Path, names: list[str], extra: list[str],
            app_args: list[str]) -> dict[str, Any]:
    """Profile the application under ncu with `extra` options; the report is out.ncu-rep."""
    pattern = "regex:^(" + "|".join(names) + ")$"
    cmd = [ncu, "--clock-control", "none", "--kernel-name", pattern, *extra, "-f", "-o",
           str(out), sys.executable, str(Path(__file__).resolve()), "--app", *app_args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=560)
    wall = time.perf_counter() - t0
    (out.parent / f"{out.name}.log").write_text(proc.stdout + proc.stderr)
    return {"command": " ".join(cmd[:cmd.index("--app") + 1]), "rc": proc.returncode,
            "wall_s": round(wall, 1), "kernels": len(names)}


COLLECTIONS = (("default", []), ("full", ["--set", "full", "--import-source", "yes"]))


def record_pairs(ncu: str, out: Path) -> dict[str, Any]:
    """Both sides of every regression pair as applications under the default and the full
    set (triage of user reports): out/pairs/<collection>/<side>/ pages."""
    results: dict[str, Any] = {}
    for side in ("base", "new"):
        names = sorted({spec.kernel_name for spec in pair_specs(side).values()})
        for label, extra in COLLECTIONS:
            dest = out / "pairs" / label / side
            dest.mkdir(parents=True, exist_ok=True)
            results[f"{label}/{side}"] = ncu_app(ncu, dest / "report", names, extra,
                                                 ["--pairs", side])
            if (dest / "report.ncu-rep").is_file():
                export(ncu, dest / "report.ncu-rep", dest, ("raw", "details", "source"))
            print(f"pairs {label}/{side}: {results[f'{label}/{side}']}", flush=True)
    return results


def export(ncu: str, report: Path, dest: Path, pages: tuple[str, ...] = FIXTURE_PAGES) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for stem in pages:
        page, options = PAGES[stem]
        proc = subprocess.run([ncu, "--import", str(report), "--csv", "--page", page, *options],
                              capture_output=True, text=True, timeout=300)
        text = proc.stdout if proc.returncode == 0 else ""
        (dest / f"{stem}.csv.gz").write_bytes(gzip.compress(text.encode(), mtime=0))


def record_ours(name: str, entry: dict[str, Any], out: Path, settings: Any, ncu: Any
                ) -> dict[str, Any]:
    """pragma-ncu profile's collection of one kernel, its pages and the ncu wall time."""
    from pragma_ncu.backends.cuda.collect import CollectRequest
    from pragma_ncu.backends.cuda.profiling import run_profile
    from pragma_ncu.backends.cuda.worker import worker_command
    from pragma_ncu.pool.runner import Runner
    from pragma_ncu.spec.file import load_spec

    spec = load_spec(spec_path(entry))
    worker = worker_command(settings)
    dest = out / "ours" / name
    with Runner(worker, timeout_s=180) as runner:
        run = run_profile(spec, spec.shapes[0], settings, runner, worker, out_dir=dest / "rep",
                          request=CollectRequest(source=True))
    row: dict[str, Any] = {"kernel": name, "problem": run.problem,
                           "median_us": run.measurement.timing.median_us
                           if run.measurement and run.measurement.timing else None,
                           "ceiling_gbps": run.ceiling.gbps if run.ceiling else None}
    if run.collection is None or run.collection.report is None:
        return row
    row["ncu_s"] = round(run.collection.wall_s, 2)
    export(ncu.path, run.collection.report, dest, ("raw", "details", "source"))
    if run.profile is not None:  # what pragma-ncu profile records beside ncu's metrics
        (dest / "collection.json").write_text(json.dumps(run.profile.collection, indent=1))
    shutil.rmtree(dest / "rep", ignore_errors=True)
    return row


def prebuild(chosen: dict[str, dict[str, Any]], settings: Any, arch: str) -> float:
    """Compile every kernel once, on all cores, so that the profiled runs hit the cache."""
    from pragma_ncu.backends.cuda.build import build_many, harness_request
    from pragma_ncu.build import task as tasks
    from pragma_ncu.build.compile import BuildCache
    from pragma_ncu.infra.toolchain import find_nvcc
    from pragma_ncu.spec.file import load_spec

    t0 = time.perf_counter()
    requests = [tasks.build_request(load_spec(spec_path(e)), arch,
                                    render_dir=settings.cache_dir / "rendered")
                for e in chosen.values()]
    requests.append(harness_request(arch))
    results = build_many(requests, find_nvcc(settings), BuildCache(settings.cache_dir / "build"),
                         settings.jobs)
    failed = [r.kernel_name for r in results if not r.ok]
    if failed:
        raise SystemExit(f"did not compile: {failed}")
    return round(time.perf_counter() - t0, 1)


def device_info() -> dict[str, Any]:
    """The GPU's facts, read in a child process so this one holds no CUDA context."""
    code = ("import json; from pragma_ncu.backends.cuda.worker.gpu import Gpu; "
            "print(json.dumps(Gpu().info()))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    try:
        return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (IndexError, ValueError):
        return {"name": "?", "driver_version": None, "sm_count": None, "arch": "sm_90",
                "error": proc.stderr[-500:]}


def meta(ncu: Any, out: Path) -> dict[str, Any]:
    dest = out / "meta"
    dest.mkdir(parents=True, exist_ok=True)
    for name, args in (("list_sets", ["--list-sets"]), ("list_sections", ["--list-sections"])):
        proc = subprocess.run([ncu.path, *args], capture_output=True, text=True, timeout=120)
        (dest / f"{name}.txt").write_text(proc.stdout + proc.stderr)
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,"
                              "clocks.mem", "--format=csv,noheader"], capture_output=True,
                             text=True).stdout.strip()
    except OSError as exc:
        smi = str(exc)
    info = device_info()
    return {"device": info["name"], "driver_version": info["driver_version"],
            "nvidia_smi": smi, "ncu_version": ncu.version,
            "date": time.strftime("%Y-%m-%d"), "sm_count": info["sm_count"],
            "arch": info["arch"]}


def record(args: argparse.Namespace) -> None:
    from pragma_ncu.infra.settings import load_settings
    from pragma_ncu.infra.toolchain import find_ncu

    settings = load_settings()
    ncu = find_ncu(settings)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    chosen = entries(args.only)
    names = sorted({tomllib.loads(spec_path(e).read_text())["kernel"]["name"]
                    for e in chosen.values()})
    summary: dict[str, Any] = {"meta": meta(ncu, out), "collections": {}, "ours": []}
    summary["meta"]["prebuild_s"] = prebuild(chosen, settings, summary["meta"]["arch"])
    if args.phase in ("app", "all"):
        for label, extra in COLLECTIONS:
            (out / label).mkdir(exist_ok=True)
            result = ncu_app(ncu.path, out / label / "report", names, extra,
                             ["--only", *chosen])
            summary["collections"][label] = result
            print(f"{label}: {result}", flush=True)
            if (out / label / "report.ncu-rep").is_file():
                export(ncu.path, out / label / "report.ncu-rep", out / label)
                _save_profile(out / label / "report.ncu-rep", settings)
    if args.phase in ("pairs", "all"):
        summary["pairs"] = record_pairs(ncu.path, out)
    if args.phase in ("ours", "all"):
        for name, entry in chosen.items():
            t0 = time.perf_counter()
            try:
                row = record_ours(name, entry, out, settings, ncu)
            except Exception:
                row = {"kernel": name, "problem": traceback.format_exc()[-800:]}
            row["wall_s"] = round(time.perf_counter() - t0, 1)
            summary["ours"].append(row)
            print(f"ours {name}: {json.dumps(row)[:300]}", flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))


def _save_profile(report: Path, settings: Any) -> None:
    """The report as ncu_report reads it (the other reader), for reader parity offline."""
    from pragma_ncu.profile.read import read_report

    try:
        profile = read_report(report, settings, reader="ncu_report")
    except Exception as exc:  # recorded, not fatal: the CSV pages are what CI reads
        (report.parent / "ncu_report_error.txt").write_text(repr(exc))
        return
    data = json.dumps(profile.to_json()).encode()
    (report.parent / "profile.json.gz").write_bytes(gzip.compress(data, mtime=0))


def import_fixtures(src: Path, dest: Path, repo_root: str, gpu_out: str, batch: str) -> None:
    """Copy one recording's pages into the fixtures, machine paths made relative: the default
    and full applications into <collection>/<batch>/, each kernel's own collection into
    ours/<kernel>/, the regression pairs into pairs/<collection>/<side>/."""
    sys.path.insert(0, str(ROOT / "tools"))
    from record_profiles import copy_scrubbed, scrub_prefixes

    prefixes = scrub_prefixes(src, repo_root, gpu_out)
    moves = [(src / c, dest / c / batch, FIXTURE_PAGES) for c in ("default", "full")]
    moves += [(f, dest / "ours" / f.name, ("raw", "details", "source"))
              for f in sorted((src / "ours").glob("*"))]
    moves += [(src / "pairs" / c / side, dest / "pairs" / c / side, ("raw", "details", "source"))
              for c in ("default", "full") for side in ("base", "new")]
    for folder, target, stems in moves:
        if not folder.is_dir():
            continue
        target.mkdir(parents=True, exist_ok=True)
        names = [f"{stem}.csv.gz" for stem in stems] + ["collection.json"]
        for name in names:
            if (folder / name).is_file() and not (name == "source.csv.gz"
                                                  and folder.name == "default"):
                copy_scrubbed(folder / name, target / name, prefixes)
    for page in sorted((src / "meta").glob("*.txt")):
        if page.name != "query_metrics.txt":  # 1 MB of ncu's own listing: not needed in CI
            (dest / "meta").mkdir(parents=True, exist_ok=True)
            copy_scrubbed(page, dest / "meta" / page.name, prefixes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--phase", choices=["app", "ours", "pairs", "all"], default="all")
    parser.add_argument("--app", action="store_true", help="run as the profiled application")
    parser.add_argument("--pairs", choices=["base", "new"],
                        help="with --app: launch one side of every regression pair")
    parser.add_argument("--import-from", type=Path)
    parser.add_argument("--fixtures", type=Path, default=ROOT / "tests" / "fixtures" / "corpus")
    parser.add_argument("--repo-root", default=str(ROOT))
    parser.add_argument("--gpu-out", default="/")
    parser.add_argument("--batch", default="first",
                        help="with --import-from: the folder name of this recording's "
                        "default and full pages")
    args = parser.parse_args()
    if args.app:
        return run_app(args.only, args.pairs)
    if args.import_from:
        import_fixtures(args.import_from, args.fixtures, args.repo_root, args.gpu_out,
                        args.batch)
        return 0
    if args.out is None:
        parser.error("--out is required for a recording")
    record(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
