"""`pragma-ncu init`: draft a kernel's spec (and a reference stub) from its source."""

from __future__ import annotations

import tomllib
from pathlib import Path

import click
from tabulate import tabulate

from pragma_ncu import api
from pragma_ncu.cli.common import user_errors
from pragma_ncu.draft import Draft
from pragma_ncu.specfile import placeholders, spec_path_for


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
    for line in summary(done.draft, done.written, kernel_file):
        click.echo(line)


def summary(draft: Draft, written: tuple[Path, ...], kernel_file: Path) -> list[str]:
    """What init wrote and concluded, and what is left to the user."""
    d = draft.kernel
    rows = [(a.name, a.dtype or "<fill>", a.role,
             a.value_note if a.role == "scalar" else a.role_note) for a in d.args]
    lines = [f"wrote {', '.join(str(p) for p in written)}: {d.kernel} "
             f"({d.source.name}, line {d.line}, {d.device})", "",
             tabulate(rows, headers=["argument", "dtype", "role", "why"]), ""]
    if d.params:
        lines.append("parameters: " + ", ".join(
            f"{p.name}={'<fill>' if p.default is None else p.default}" for p in d.params))
    left = placeholders(tomllib.loads(draft.spec_text))
    lines.append(f"to fill ({len(left)}): {', '.join(left)}")
    if draft.reference_path is not None:
        lines.append(f"then write the reference's body in {draft.reference_path}")
    lines.append(f"then: pragma-ncu bench --kernel {kernel_file}"
                 + (f" --spec {draft.spec_path}" if _custom(draft, kernel_file) else ""))
    return lines


def _custom(draft: Draft, kernel_file: Path) -> bool:
    return draft.spec_path.resolve() != spec_path_for(kernel_file).resolve()
