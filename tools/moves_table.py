"""The table of tools/gpu_moves_check.sh: for every kernel it ran, baseline -> best, the speedup,
the best's share of the attainable roofline, the moves that won, the moves tried (with what
became of the others) and why the run stopped, read from each run's trace; then the median
speedup of the calibration set (the issue's acceptance asks >= 1.5x).

    python3 tools/moves_table.py OUT [OUT2 ...]   # the table (Markdown) from OUT/traces/*.json
                                                  # (a later OUT's kernels replace an earlier's)
    python3 tools/moves_table.py --docs OUT ...   # the same, for docs/tune.md (no walls)
    python3 tools/moves_table.py --list [NAME ...]  # the kernels the script runs: set path
                                                    # shape (only those NAMEd, or the whole
                                                    # of each set NAMEd, when given)
    python3 tools/moves_table.py --structural OUT   # the structural sets beside their
                                                    # hand-written versions (bench's times)
    python3 tools/moves_table.py --traces STORE STEM   # write STEM.{md,html,json} of its run

A run killed by its time limit still has the rounds it finished; a kernel with no trace is a
row saying why (its exit status, or skipped).
"""

from __future__ import annotations

import json
import statistics
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from pragma_ncu.loop.results import moves_won  # noqa: E402
from pragma_ncu.measure.records import RoundRecord  # noqa: E402

SETS = (("calibration", "examples/moves"), ("heldout", "examples/moves/heldout"),
        ("extra", "examples/moves/structural/extra"),  # naive kernels of the later moves
        ("blind", "examples/moves/blind"), ("example", "examples"),
        ("structural", "examples/moves/structural"),
        ("heldaside", "examples/moves/structural/heldaside"),
        ("heldaside2", "examples/moves/structural/heldaside2"))
STRUCTURAL = ("structural", "heldaside", "heldaside2")  # each beside a hand-written one in fast/
HEADERS = ("kernel", "set", "baseline → best µs", "speedup", "% of roofline", "moves that won",
           "moves tried", "stop reason", "wall s")


def kernels() -> list[tuple[str, str, str]]:
    """(set, kernel path, first shape) of every kernel the script runs, calibration first (the
    bundled examples' templates, .cu.j2 under examples/templated/, are not plain kernels)."""
    out = []
    for name, folder in SETS:
        for source in sorted((ROOT / folder).glob("*.cu")):
            spec = tomllib.loads(source.with_suffix(".toml").read_text())
            out.append((name, str(source.relative_to(ROOT)), spec["shapes"][0]["name"]))
    return out


def write_traces(store: Path, stem: Path) -> None:
    from pragma_ncu.infra.store import Store
    from pragma_ncu.measure.traces import load_trace
    from pragma_ncu.report.trace import render_html, render_markdown, trace_json
    if not store.is_file():
        return
    with Store.open(store) as db:
        trace = load_trace(db, "latest")
    stem.with_suffix(".md").write_text(render_markdown(trace))
    stem.with_suffix(".html").write_text(render_html(trace))
    stem.with_suffix(".json").write_text(json.dumps(trace_json(trace), indent=1, default=str))


def row(set_name: str, name: str, trace: dict[str, Any] | None, wall: str) -> tuple[str, ...]:
    if trace is None or not trace.get("rounds"):
        return (name, set_name, "—", "—", "—", "—", "—", f"no trace ({wall})", wall)
    records = [RoundRecord.from_json(r) for r in trace["rounds"]]
    base = records[0].best_after
    best = next((r.best_after for r in reversed(records) if r.best_after), None)
    if base is None or best is None or not base.objective_us or not best.objective_us:
        return (name, set_name, "—", "—", "—", "—", "—", "no verified baseline", wall)
    frac = best.ceiling_fraction
    tried = {}
    for r in records:
        for t in r.moves:
            tried[t.move] = t.move if t.status == "searched" else f"{t.move} ({t.status})"
    stop = (trace.get("run", {}).get("summary") or {}).get("stop_reason") or next(
        (r.decision.reason for r in reversed(records) if r.decision.action == "stop"),
        "stopped by the time limit")
    return (name, set_name, f"{base.objective_us:,.2f} → {best.objective_us:,.2f}",
            f"{base.objective_us / best.objective_us:.2f}×",
            "—" if frac is None else f"{100 * frac:.0f}%",
            ", ".join(moves_won(records, best.round)) or "none",
            ", ".join(tried.values()) or "none", stop, wall)


def table(outs: Path | list[Path], docs: bool = False) -> str:
    outs = [outs] if isinstance(outs, Path) else outs
    walls: dict[tuple[str, str], str] = {}
    traces: dict[tuple[str, str], Path] = {}
    for out in outs:  # a later OUT (a rerun of some kernels) replaces what it ran
        if (out / "walls.txt").is_file():
            for line in (out / "walls.txt").read_text().splitlines():
                parts = line.split()
                if len(parts) >= 4:
                    walls[(parts[0], parts[1])] = parts[3] if parts[2] != "skipped" \
                        else "skipped"
        for file in sorted((out / "traces").glob("*.json")):
            set_name, _, name = file.stem.partition("-")
            traces[(set_name, name)] = file
    rows, speedups = [], []
    for set_name, path, _ in kernels():
        name = Path(path).name.split(".")[0]
        file = traces.get((set_name, name))
        trace = json.loads(file.read_text()) if file is not None else None
        r = row(set_name, name, trace, walls.get((set_name, name), "not run"))
        rows.append(r[:-1] if docs else r)
        if set_name == "calibration":
            speedups.append(float(r[3].rstrip("×")) if r[3] != "—" else 1.0)
    headers = HEADERS[:-1] if docs else HEADERS
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    if speedups:
        lines += ["", f"Median speedup of the calibration set ({len(speedups)} kernels, a "
                  f"kernel without a result counting 1.00×): "
                  f"{statistics.median(speedups):.2f}× (the issue asks for 1.5× or more)."]
    return "\n".join(lines)


def structural(outs: list[Path]) -> str:
    """Each structural kernel: naive (tune's baseline) -> tuned, the hand-written version's
    time (bench at the same shape, OUT/results/<set>-<name>.fast.json), tuned / hand-written,
    the moves that won; the geometric mean of tuned / hand-written per set."""
    traces: dict[tuple[str, str], Path] = {}
    fast: dict[tuple[str, str], Path] = {}
    for out in outs:
        for file in sorted((out / "traces").glob("*.json")):
            set_name, _, name = file.stem.partition("-")
            traces[(set_name, name)] = file
        for file in sorted((out / "results").glob("*.fast.json")):
            set_name, _, name = file.name.removesuffix(".fast.json").partition("-")
            fast[(set_name, name)] = file
    lines = ["| kernel | set | naive µs | tuned µs | hand-written µs | naive / hand | tuned / "
             "hand | moves that won |", "|" + "---|" * 8]
    ratios: dict[str, list[float]] = {}
    for set_name, path, _ in kernels():
        if set_name not in STRUCTURAL:
            continue
        name = Path(path).name.split(".")[0]
        file, hand = traces.get((set_name, name)), fast.get((set_name, name))
        records = [RoundRecord.from_json(r) for r in json.loads(file.read_text())["rounds"]] \
            if file is not None else []
        base = records[0].best_after if records else None
        best = next((r.best_after for r in reversed(records) if r.best_after), None)
        hand_us = _bench_us(hand) if hand is not None else None
        cells = [name, set_name, _us(base.objective_us if base else None),
                 _us(best.objective_us if best else None), _us(hand_us)]
        if base and best and hand_us:
            ratio = best.objective_us / hand_us
            ratios.setdefault(set_name, []).append(ratio)
            cells += [f"{base.objective_us / hand_us:.2f}×", f"{ratio:.2f}×",
                      ", ".join(moves_won(records, best.round)) or "none"]
        else:
            cells += ["—", "—", "no result" if not records else "no hand-written time"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for set_name, values in ratios.items():
        lines.append(f"Geometric mean of tuned / hand-written, {set_name}: "
                     f"{statistics.geometric_mean(values):.2f}× over {len(values)} kernels.")
    return "\n".join(lines)


def _bench_us(path: Path) -> float | None:
    """The median time of the first timed shape of a `bench --format json` report."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    rows = data.get("rows") or data.get("shapes") or []
    for r in rows:
        value = r.get("median_us") or r.get("time_us")
        if value:
            return float(value)
    return None


def _us(value: float | None) -> str:
    return f"{value:,.2f}" if value else "—"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--list"]:
        names = set(argv[1:])
        print("\n".join(" ".join(k) for k in kernels() if not names or k[0] in names
                        or Path(k[1]).name.split(".")[0] in names))
        return 0
    if argv[:1] == ["--structural"] and len(argv) >= 2:
        print(structural([Path(a) for a in argv[1:]]))
        return 0
    if argv[:1] == ["--traces"] and len(argv) == 3:
        write_traces(Path(argv[1]), Path(argv[2]))
        return 0
    docs = argv[:1] == ["--docs"]
    args = argv[1:] if docs else argv
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    print(table([Path(a) for a in args], docs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
