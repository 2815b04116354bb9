"""`pragma-ncu moves`: what tune's source moves would do to a kernel, before any run."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.cli.common import emit_json, user_errors
from pragma_ncu.cli.display import progress_display
from pragma_ncu.report import moves as render


@click.command("moves")
@click.option("--kernel", "kernel", required=True, type=click.Path(path_type=Path),
              help="The .cu (.cu.j2) file; its spec is the .toml beside it unless --spec.")
@click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec.")
@click.option("--diff", is_flag=True,
              help="Show each fitting move's rewrite at its boldest point (every knob at its "
              "last value) as a unified diff, and compile it with nvcc.")
@click.option("--arch", help="Compile the rewrites for this arch (default: sm_90 without a "
              "GPU).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def moves(kernel: Path, spec: Path | None, diff: bool, arch: str | None, fmt: str) -> None:
    """List every source move tune may apply to a kernel, without a GPU.

    For each move: whether it fits this source (or why not), the diagnosis classes that call
    for it, its knobs (values, the source as written first), where it edits and the launch
    grid/block it would search. With --diff, each fitting move's rewrite at its boldest point
    as a unified diff against the source, and whether it compiles (the first nvcc error if
    not). No profile is known offline: no hot lines and no registers (the report says what
    that changes). Exit status: 0 done, 2 bad input.
    """
    with user_errors(), progress_display(fmt == "table" and sys.stderr.isatty()) as show:
        report = api.moves(kernel, spec_path=spec, diff=diff, arch=arch, progress=show)
    if fmt == "json":
        emit_json(render.review_json(report))
        return
    for line in render.review_lines(report, diff):
        click.echo(line)
