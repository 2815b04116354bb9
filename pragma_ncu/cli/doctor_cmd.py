"""`pragma-ncu doctor`: what this machine has for building, running and profiling kernels."""

from __future__ import annotations

import click
from tabulate import tabulate

from pragma_ncu.cli.common import emit_json
from pragma_ncu.doctor import run_checks
from pragma_ncu.settings import load_settings


@click.command()
@click.option("--no-profile-check", is_flag=True,
              help="Skip the short ncu run that tests counter permission.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def doctor(no_profile_check: bool, fmt: str) -> None:
    """Report GPU, driver, nvcc, ncu, counter permission and ncu_report, with fixes."""
    checks = run_checks(load_settings(), profile_check=not no_profile_check)
    if fmt == "json":
        emit_json([c.__dict__ for c in checks])
        return
    rows = [[c.name, "ok" if c.ok else "MISSING", c.detail] for c in checks]
    click.echo(tabulate(rows, headers=["check", "", "detail"], disable_numparse=True))
    fixes = [f"- {c.name}: {c.fix}" for c in checks if not c.ok and c.fix]
    if fixes:
        click.echo("\nTo fix:\n" + "\n".join(fixes))
