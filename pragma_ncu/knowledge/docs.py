"""Render the curated compendium as one Markdown document per metric group.

The documents live in the repository's metric_docs/ folder and are committed; a unit test checks
that they equal a fresh rendering, so they never drift from knowledge/. Re-render them with

    python -m pragma_ncu.knowledge.docs            # write metric_docs/<group>.md
    python -m pragma_ncu.knowledge.docs --check    # exit 1 if any document is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import jinja2

from pragma_ncu.infra.resources import data_path
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.knowledge.schema import BOTTLENECKS, MetricEntry, Strategy

TEMPLATE = "metric_doc.md.j2"

# Title and introduction of each group's document, in the order the groups are presented.
GROUPS: dict[str, tuple[str, str]] = {
    "speed_of_light": (
        "Speed of light",
        "How close the kernel runs to the peak of its busiest compute and memory units. Start "
        "here: the larger of SM and memory throughput says which side limits; both low means "
        "latency, occupancy or grid size limit the kernel."),
    "memory": (
        "Memory: DRAM, L2, L1, shared and local memory",
        "Traffic and efficiency at each level of the memory hierarchy. A sector is 32 bytes, a "
        "cache line 128 bytes, and a shared-memory wavefront moves up to 128 bytes (32 banks of "
        "4 bytes). Compare counts with what the algorithm needs: excess sectors mean poor "
        "coalescing, excess wavefronts mean bank conflicts, local traffic means spills."),
    "occupancy_launch": (
        "Launch configuration and occupancy",
        "How many warps can be resident per SM (theoretical occupancy), which resource limits "
        "it, how many actually were (achieved occupancy), and how the grid divides into waves."),
    "warp_stalls": (
        "Warp stall reasons",
        "Why warps were not issuing. Each reason is reported per issued instruction (its share "
        "of the cycles between two instructions of a warp) and as PC samples per source line. "
        "Act on the largest shares."),
    "scheduler_instructions": (
        "Schedulers, pipes and instructions",
        "Issue activity, IPC, eligible warps, per-pipe utilization, divergence and instruction "
        "mix. Each SM has four schedulers that can each issue one warp instruction per cycle."),
    "tensor_core": (
        "Tensor cores",
        "Utilization of the matrix-multiply pipes: HMMA (warp-level mma.sync), GMMA (Hopper "
        "warpgroup wgmma), IMMA (integer) and DMMA (FP64)."),
    "perf_topdown": (
        "CPU side: Linux perf events and top-down analysis",
        "Generic hardware and software events from `perf list` and Intel's top-down "
        "microarchitecture analysis: level 1 splits pipeline slots into retiring, bad "
        "speculation, front-end bound and back-end bound; level 2 splits each in two."),
}


def _environment() -> jinja2.Environment:
    loader = jinja2.FileSystemLoader(str(data_path("templates")))
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["codes"] = _codes
    env.filters["links"] = lambda urls: ", ".join(f"<{u}>" for u in urls)
    return env


def _codes(items: Sequence[str], sep: str = ", ") -> str:
    return sep.join(f"`{item}`" for item in items)


def _tidy(text: str) -> str:
    """Strip trailing spaces and collapse runs of blank lines, so the template can stay readable."""
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _strategies_for_group(comp: Compendium, entries: Sequence[MetricEntry]) -> list[Strategy]:
    wanted = {b for e in entries for b in e.indicates}
    return [s for s in comp.strategies if s.bottleneck in wanted]


def render_group(comp: Compendium, group: str) -> str:
    """The Markdown document of one group: its curated entries and the matching strategies."""
    entries = [e for e in comp.entries if e.group == group and e.origin == "curated"]
    title, intro = GROUPS.get(group, (group.replace("_", " ").capitalize(), ""))
    template = _environment().get_template(TEMPLATE)
    text = template.render(title=title, intro=intro, group=group, entries=entries,
                           strategies=_strategies_for_group(comp, entries),
                           bottlenecks=BOTTLENECKS)
    return _tidy(text)


def render_entry(entry: MetricEntry, strategies: Sequence[Strategy] = ()) -> str:
    """The Markdown section of one entry (with the given strategies), as `knowledge show` prints."""
    module = _environment().get_template(TEMPLATE).make_module(
        {"entries": [], "strategies": [], "bottlenecks": BOTTLENECKS})
    macro = getattr(module, "entry")  # noqa: B009 (a template macro: mypy cannot see it)
    return _tidy(str(macro(entry, list(strategies), BOTTLENECKS, level="#")))


def render_all(comp: Compendium) -> dict[str, str]:
    """File name (`<group>.md`) -> document, for every group that has curated entries."""
    groups = list(GROUPS) + sorted({e.group for e in comp.entries} - set(GROUPS))
    present = {e.group for e in comp.entries if e.origin == "curated"}
    return {f"{g}.md": render_group(comp, g) for g in groups if g in present}


def stale_docs(comp: Compendium, out_dir: Path) -> list[str]:
    """Names of the documents in `out_dir` that are missing or differ from a fresh rendering."""
    stale = []
    for name, text in render_all(comp).items():
        path = out_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale


def write_docs(comp: Compendium, out_dir: Path) -> list[Path]:
    """Write every group's document into `out_dir`; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_all(comp).items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m pragma_ncu.knowledge.docs`."""
    parser = argparse.ArgumentParser(prog="python -m pragma_ncu.knowledge.docs",
                                     description="Render metric_docs/ from knowledge/.")
    parser.add_argument("--check", action="store_true",
                        help="report stale documents and exit 1 instead of writing")
    parser.add_argument("--out", type=Path, default=data_path("metric_docs"),
                        help="output folder (default: the shipped metric_docs/)")
    args = parser.parse_args(argv)
    comp = Compendium.load()
    if args.check:
        stale = stale_docs(comp, args.out)
        for name in stale:
            print(f"stale: {args.out / name}", file=sys.stderr)
        return 1 if stale else 0
    for path in write_docs(comp, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
