"""`pragma-ncu init`: draft a kernel's spec (and a reference stub) from its source."""

from __future__ import annotations

from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.cli.common import user_errors
from pragma_ncu.report.draft import init_lines


@click.command("init")
@click.argument("kernel_file", type=click.Path(path_type=Path))
@click.option("--kernel", "name", help="The kernel to describe when the file defines several.")
@click.option("--spec", "spec_path", type=click.Path(path_type=Path),
              help="Where to write the spec (default: the .toml beside the kernel).")
@click.option("--reference", type=click.Choice(["numpy", "torch", "cupy", "none"]),
              default="numpy", show_default=True,
              help="The library of the reference stub; none: the kernel itself is the reference.")
@click.option("--force", is_flag=True, help="Replace an existing spec and reference stub.")
def init(kernel_file: Path, name: str | None, spec_path: Path | None, reference: str,
         force: bool) -> None:
    """Draft KERNEL_FILE's spec from its source: arguments, roles, knobs, template parameters.

    Writes foo.toml beside foo.cu (or foo.cpp / foo.c for the CPU) and a reference stub
    foo_reference.py. What the source cannot say (sizes, float scalars, the launch's element
    count) is a "<fill>" placeholder; every guess is marked GUESS. Existing files are never
    replaced without --force.
    """
    with user_errors():
        done = api.init(kernel_file, name=name, spec_path=spec_path,
                        reference=None if reference == "none" else reference, force=force)
    for line in init_lines(done.draft, done.written, kernel_file):
        click.echo(line)
