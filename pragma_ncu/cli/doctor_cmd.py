"""`pragma-ncu doctor`: what this machine has for building, running and profiling kernels."""

from __future__ import annotations

from dataclasses import asdict

import click

from pragma_ncu import api
from pragma_ncu.cli.common import emit_json, user_errors
from pragma_ncu.cli.display import output_width
from pragma_ncu.report.doctor import doctor_lines


@click.command()
@click.option("--no-profile-check", is_flag=True,
              help="Skip the short ncu and perf runs that test whether the GPU's and the CPU's "
              "counters can be read.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def doctor(no_profile_check: bool, fmt: str) -> None:
    """Report what each target needs, with fixes: the GPU, driver, nvcc, ncu, counter
    permission and ncu_report; the C and C++ compilers, perf (and whether it reads the CPU's
    counters) and valgrind, whose cachegrind profiles C/C++ kernels where perf cannot."""
    with user_errors():
        found = api.doctor(profile_check=not no_profile_check)
    if fmt == "json":
        emit_json([asdict(c) for c in found.checks])
        return
    click.echo("\n".join(doctor_lines(found.checks, output_width())))
