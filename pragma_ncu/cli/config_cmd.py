"""`pragma-ncu config convert TABLE --to vllm`: an autotune config table in another tool's
layout."""

from __future__ import annotations

from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.cli.common import emit_json, user_errors


@click.group("config")
def config_group() -> None:
    """Config tables written by autotune: convert them to the layouts other tools read."""


@config_group.command("convert")
@click.argument("table", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--to", "to", type=click.Choice(["vllm"]), required=True,
              help="vllm: the files vLLM and SGLang load (E=128,N=384,"
                   "device_name=NVIDIA_H200.json), keyed by the batch size, bare parameters.")
@click.option("--batch-dim", "batch_dim",
              help="The dim that keys the files (default: the one the table's shapes vary "
                   "in); the other dims name them, one file per combination of their values.")
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False),
              help="The folder to write to (default: the table's own). Files already there "
                   "keep the batch sizes the table does not give.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def convert(table: Path, to: str, batch_dim: str | None, out: Path | None, fmt: str) -> None:
    """Write TABLE (autotune's <kernel>/<device>.json) in another tool's layout."""
    with user_errors(ValueError):
        written = api.convert_table(table, to=to, batch_dim=batch_dim, out=out)
    if fmt == "json":
        emit_json({role: str(path) for role, path in written.items()})
        return
    for path in written.values():
        click.echo(str(path))
