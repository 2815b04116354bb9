"""`pragma-ncu profile`: verify, time and profile one kernel at one shape under ncu."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from pragma_ncu import api
from pragma_ncu.api import bounds
from pragma_ncu.cli.common import (
    bounded,
    emit_json,
    kernel_name_option,
    load_task,
    parse_params,
    user_errors,
)
from pragma_ncu.cli.display import progress_display
from pragma_ncu.report import profile as render


def _csv(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(v.strip() for item in values for v in item.split(",") if v.strip())


def profile_options(command: Any) -> Any:
    """The options `profile` and `explain foo.cu` share."""
    for option in reversed((
        click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec."),
        kernel_name_option,
        click.option("--shape", help="A shape name from the spec, or dims as T=4096,d=11008 "
                     "(default: the spec's first shape)."),
        click.option("--param", "params", multiple=True, help="Override a parameter: NAME=VALUE."),
        click.option("--arch", help="Compile for this arch (default: the GPU's)."),
        click.option("--metrics", multiple=True, help="Extra ncu metrics (comma-separated)."),
        click.option("--sections", multiple=True, help="ncu sections to collect instead of the "
                     "default set (docs/profiler.md lists it)."),
        click.option("--source/--no-source", default=False, show_default=True,
                     help="Also collect source counters (hot lines; slower)."),
        click.option("--out", type=click.Path(path_type=Path),
                     help="Folder for the report, log and profile.json "
                     "(default: pragma-ncu-profiles/<kernel>-<shape>)."),
        click.option("--timeout", type=bounded(bounds.SECONDS), default=180.0, show_default=True,
                     help="Seconds the ncu run may take before it is killed."),
    )):
        command = option(command)
    return command


def profile_request(params: tuple[str, ...], arch: str | None, metrics: tuple[str, ...],
                    sections: tuple[str, ...], source: bool, out: Path | None,
                    timeout: float) -> api.ProfileOptions:
    """The options `profile` and `explain foo.cu` share, as the API takes them."""
    return api.ProfileOptions(params=parse_params(params), arch=arch, metrics=_csv(metrics),
                              sections=_csv(sections), source=source, out_dir=out,
                              timeout_s=timeout)


@click.command()
@click.option("--kernel", "kernel", required=True, type=click.Path(path_type=Path),
              help="The .cu file, or a .c/.cpp one for the CPU (its spec is the .toml beside "
              "it unless --spec is given).")
@profile_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def profile(kernel: Path, spec: Path | None, spec_kernel: str | None, shape: str | None,
            params: tuple[str, ...],
            arch: str | None, metrics: tuple[str, ...], sections: tuple[str, ...], source: bool,
            out: Path | None, timeout: float, fmt: str) -> None:
    """Verify, time and profile a kernel at one shape under Nsight Compute.

    Keeps the .ncu-rep, ncu's log and a normalized profile.json; prints the key metrics and
    the verdict (run `pragma-ncu explain` on the profile.json for the full diagnosis). Exit
    status: 0 profiled, 1 the kernel fails (build, verification, a crash under ncu), 2 bad
    input, 3 the environment (no GPU, no ncu, or timing only: no permission to read GPU
    counters).
    A C/C++ kernel (.c, .cpp) runs on the CPU and is profiled with Linux perf, or with
    valgrind's cachegrind (simulated counts) where the CPU's counters cannot be read.
    """
    show = fmt == "table" and sys.stderr.isatty()
    task = load_task(kernel, spec, spec_kernel)
    options = profile_request(params, arch, metrics, sections, source, out, timeout)
    with user_errors():
        with progress_display(show) as progress:
            run = api.profile(task, shape=shape, options=options, progress=progress)
        if fmt == "json":
            emit_json(render.as_json(run))
        else:
            click.echo("\n".join(render.lines(run, api.compendium())))
    sys.exit(render.exit_code(run))
