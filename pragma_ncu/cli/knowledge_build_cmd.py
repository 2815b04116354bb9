"""`pragma-ncu knowledge build`: the profilers' documentation → the generated compendium."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.api import bounds
from pragma_ncu.cli.common import bounded, emit_json, user_errors
from pragma_ncu.cli.display import progress_display
from pragma_ncu.infra.errors import ExitStatus
from pragma_ncu.report.knowledge import build_lines


@click.command("build")
@click.option("--chip", default="gh100", show_default=True,
              help="Chip whose metrics `ncu --query-metrics --chip` lists (needs no GPU).")
@click.option("--online", is_flag=True,
              help="Also fetch web pages (docs.nvidia.com, the perf wiki); off by default.")
@click.option("--no-llm", is_flag=True,
              help="Summarize with the deterministic rules even when an LLM is configured.")
@click.option("--source", "source_names", multiple=True, type=click.Choice(api.adapter_names()),
              help="Crawl only this source (repeatable); the compendium then holds only these.")
@click.option("--ncu-docs", type=click.Path(path_type=Path, file_okay=False),
              help="Nsight Compute's docs/ folder, when not beside the ncu found.")
@click.option("--sections", type=click.Path(path_type=Path, file_okay=False),
              help="Nsight Compute's sections/ folder (.section files and rule scripts).")
@click.option("--jobs", type=bounded(bounds.JOBS), default=4, show_default=True,
              help="LLM requests in flight at once.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def build(chip: str, online: bool, no_llm: bool, source_names: tuple[str, ...],
          ncu_docs: Path | None, sections: Path | None, jobs: int, fmt: str) -> None:
    """Build the metric compendium from the profilers' own documentation.

    Reads Nsight Compute's manuals, `ncu --query-metrics`, its section files and rule scripts,
    and `perf list` and perf's man pages where present (web pages only with --online);
    summarizes every piece with the configured LLM (PRAGMA_NCU_LLM_MODEL, ..._BASE_URL,
    ..._API_KEY) or with deterministic rules; and writes compendium.json and Markdown metric
    documents under the data folder. Work is cached: a rerun redoes only what changed.
    Progress goes to stderr. Exit status 3 when no source could be read (no ncu install, no
    perf, nothing online).
    """
    with user_errors(), progress_display(True) as display:
        built = api.knowledge_build(chip=chip, online=online, llm=not no_llm,
                                    sources=source_names, ncu_docs=ncu_docs,
                                    sections=sections, jobs=jobs, progress=display)
    if fmt == "json":
        emit_json(built.summary.to_json())
    else:
        click.echo("\n".join(build_lines(built.summary, built.summarized_by)))
    sys.exit(ExitStatus.OK if built.summary.compendium is not None else ExitStatus.ENVIRONMENT)
