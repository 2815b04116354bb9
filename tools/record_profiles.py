"""Run on the GPU machine: profile and explain every example and every planted-bottleneck kernel,
time default-section collection, check both report readers agree, and save CI fixtures.

    python tools/record_profiles.py --out DIR [--only NAME ...]      (on the GPU machine)
    python tools/record_profiles.py --import-from DIR --fixtures DEST (here, after copying DIR)

DIR/<name>/ gets the .ncu-rep, CSV pages (gzipped), profile.json.gz, explain.txt; DIR/summary.json
and a printed table give the verdicts, the planted cause, ncu wall times and reader parity.
--import-from copies them into the test fixtures with machine paths made relative.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import sys
import time
import tomllib
import traceback
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pragma_ncu.backends import diagnose  # noqa: E402
from pragma_ncu.backends.cuda import collect as col  # noqa: E402
from pragma_ncu.backends.cuda.profiling import run_profile  # noqa: E402
from pragma_ncu.backends.cuda.worker import worker_command  # noqa: E402
from pragma_ncu.infra.settings import load_settings  # noqa: E402
from pragma_ncu.infra.toolchain import find_ncu  # noqa: E402
from pragma_ncu.knowledge.compendium import Compendium  # noqa: E402
from pragma_ncu.pool.runner import Runner  # noqa: E402
from pragma_ncu.profile import csv_reader, normalize  # noqa: E402
from pragma_ncu.profile.read import dump_with_ncu_report  # noqa: E402
from pragma_ncu.report.diagnosis import explain_text  # noqa: E402
from pragma_ncu.spec.file import load_spec  # noqa: E402

EXAMPLES = ["silu_and_mul", "fused_add_rmsnorm", "merge_attn_states_lse", "softmax", "layernorm",
            "max_reduce", "transpose", "sgemm"]


def kernels(only: list[str]) -> list[tuple[str, Path, str | None]]:
    planted = tomllib.loads((ROOT / "examples/planted/expected.toml").read_text())
    out: list[tuple[str, Path, str | None]] = [
        (n, ROOT / "examples" / f"{n}.toml", None) for n in EXAMPLES]
    out += [(n, ROOT / "examples/planted" / f"{n}.toml", v["cause"]) for n, v in planted.items()]
    return [k for k in out if not only or k[0] in only]


def parity(report: Path, ncu, settings) -> dict:  # type: ignore[no-untyped-def]
    api, why = dump_with_ncu_report(report, ncu.python_dir, settings.python)
    via_csv = csv_reader.dump(str(report), ncu.path)
    if api is None:
        return {"error": why}
    a = normalize.from_raw(api).kernels[0].metrics
    c = normalize.from_raw(via_csv).kernels[0].metrics
    mismatched = [n for n, m in a.items() if n in c and not _close(m.value, c[n].value)]
    return {"api": len(a), "csv": len(c), "common": len(set(a) & set(c)),
            "only_api": sorted(set(a) - set(c))[:10], "only_csv": sorted(set(c) - set(a))[:10],
            "mismatched": mismatched[:10], "n_mismatched": len(mismatched)}


def _close(x, y) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(x, float) and isinstance(y, float):
        return abs(x - y) <= max(0.0051, 1e-4 * abs(x))
    return x == y


def export_pages(report: Path, ncu: str, dest: Path) -> None:
    for name in ("raw", "details", "source"):
        text = csv_reader.run_ncu(csv_reader.page_command(ncu, str(report), name))
        (dest / f"{name}.csv.gz").write_bytes(gzip.compress(text.encode(), mtime=0))


def record(name: str, spec_path: Path, expected: str | None, out: Path, settings, ncu,
           knowledge) -> dict:  # type: ignore[no-untyped-def]
    spec = load_spec(spec_path)
    shape = spec.shapes[0]
    dest = out / name
    worker = worker_command(settings)
    with Runner(worker, timeout_s=120) as runner:  # default sections: the timed acceptance run
        timed = run_profile(spec, shape, settings, runner, worker, out_dir=dest / "default",
                            request=col.CollectRequest())
    row = {"kernel": name, "expected": expected, "problem": timed.problem,
           "median_us": timed.measurement.timing.median_us
           if timed.measurement and timed.measurement.timing else None,
           "ncu_default_s": round(timed.collection.wall_s, 2) if timed.collection else None}
    with Runner(worker, timeout_s=120) as runner:
        run = run_profile(spec, shape, settings, runner, worker, out_dir=dest,
                          request=col.CollectRequest(source=True))
    if run.profile is None or run.collection is None or run.collection.report is None:
        return {**row, "problem": run.problem}
    row["ncu_source_s"] = round(run.collection.wall_s, 2)
    export_pages(run.collection.report, ncu.path, dest)
    (dest / "profile.json.gz").write_bytes(gzip.compress(
        json.dumps(run.profile.to_json()).encode(), mtime=0))
    k = run.profile.kernels[0]
    d = diagnose(k, knowledge, run.ceiling.gbps if run.ceiling else None,
                 str(spec.source_path.resolve()), collector=run.profile.collector)
    (dest / "explain.txt").write_text(explain_text(d, k) + "\n")
    shutil.rmtree(dest / "default", ignore_errors=True)
    top = [f"{f.bottleneck} {f.score:.2f}" for f in d.findings[:3]]
    ncu_top = d.guidance[0].rule if d.guidance else "-"
    return {**row, "verdict": d.classification, "top3": top, "ncu_top_rule": ncu_top,
            "ok": (d.classification == expected) if expected else None,
            "parity": parity(run.collection.report, ncu, settings),
            "uncited": list(d.uncited)}


FIXTURE_FILES = ("raw.csv.gz", "details.csv.gz", "source.csv.gz", "profile.json.gz",
                 "explain.txt")


def scrub(data: bytes, prefixes: tuple[str, ...]) -> bytes:
    """Make machine paths relative (the repo root, the output folder)."""
    for prefix in prefixes:
        data = data.replace(prefix.encode(), b"")
    return data


def scrub_prefixes(src: Path, repo_root: str, gpu_out: str) -> tuple[str, ...]:
    return (repo_root.rstrip("/") + "/", gpu_out.rstrip("/") + "/", str(src) + "/")


def copy_scrubbed(src: Path, dest: Path, prefixes: tuple[str, ...]) -> None:
    """Copy one recorded file with machine paths made relative (inside .gz files too)."""
    data = src.read_bytes()
    if src.name.endswith(".gz"):
        data = gzip.compress(scrub(gzip.decompress(data), prefixes), mtime=0)
    dest.write_bytes(scrub(data, prefixes))


def import_fixtures(src: Path, dest: Path, repo_root: str, gpu_out: str) -> None:
    """Copy a recording into the test fixtures; reports only for the bundled examples."""
    prefixes = scrub_prefixes(src, repo_root, gpu_out)
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        target = dest / folder.name
        target.mkdir(parents=True, exist_ok=True)
        for name in FIXTURE_FILES:
            copy_scrubbed(folder / name, target / name, prefixes)
        reports = list(folder.glob("*.ncu-rep"))
        if folder.name in EXAMPLES and reports:
            shutil.copy(reports[0], target / "report.ncu-rep")
    copy_scrubbed(src / "summary.json", dest / "summary.json", prefixes)


def recorder_args(fixtures: str, extra: Callable[[argparse.ArgumentParser], None] = lambda _: None
                  ) -> argparse.Namespace:
    """The command line shared by the recorders: record with --out on the GPU machine, or
    --import-from a copied recording into `fixtures` (relative to the repo)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", nargs="*", default=[])
    extra(parser)
    parser.add_argument("--import-from", type=Path, help="a recording copied from the GPU machine")
    parser.add_argument("--fixtures", type=Path, default=ROOT / fixtures)
    parser.add_argument("--repo-root", default=str(ROOT), help="the repo path on the GPU machine")
    parser.add_argument("--gpu-out", default="/", help="--out as given on the GPU machine")
    args = parser.parse_args()
    if args.out is None and args.import_from is None:
        parser.error("--out is required for a recording")
    return args


def main() -> None:
    args = recorder_args("tests/fixtures/profiles")
    if args.import_from:
        import_fixtures(args.import_from, args.fixtures, args.repo_root, args.gpu_out)
        return
    settings = load_settings()
    ncu = find_ncu(settings)
    knowledge = Compendium.load()
    rows = []
    for name, spec_path, expected in kernels(args.only):
        t0 = time.perf_counter()
        try:
            rows.append(record(name, spec_path, expected, args.out, settings, ncu, knowledge))
        except Exception:
            rows.append({"kernel": name, "expected": expected, "problem": traceback.format_exc()})
        print(f"{name}: {json.dumps(rows[-1], default=str)[:400]} ({time.perf_counter() - t0:.0f}"
              " s)", flush=True)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1, default=str))
    table = [[r["kernel"], r.get("expected") or "", r.get("verdict", "-"),
              {True: "yes", False: "NO", None: ""}[r.get("ok")], ", ".join(r.get("top3", [])),
              r.get("ncu_top_rule", ""), r.get("ncu_default_s"),
              (r.get("parity") or {}).get("n_mismatched")] for r in rows]
    print(tabulate(table, ["kernel", "planted", "explain says", "match", "top 3", "ncu's top",
                           "ncu s", "parity diffs"]))
    walls = [r["ncu_default_s"] for r in rows if r.get("ncu_default_s")]
    if walls:
        print(f"default-section collection wall time: median {statistics.median(walls):.2f} s, "
              f"max {max(walls):.2f} s over {len(walls)} kernels")


if __name__ == "__main__":
    main()
