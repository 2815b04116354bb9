"""`pragma-ncu config convert TABLE --to vllm|sglang`: an autotune config table in a serving
engine's layout."""

from __future__ import annotations

from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.cli.common import emit_json, user_errors
from pragma_ncu.cli.table_options import engine_table_options


@click.group("config")
def config_group() -> None:
    """Config tables written by autotune: convert them to the layouts other tools read."""


@config_group.command("convert")
@click.argument("table", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--to", "to", type=click.Choice(list(api.ENGINE_LAYOUTS)), required=True,
              help="vllm or sglang: the files the engine loads (E=128,N=384,"
                   "device_name=NVIDIA_H200.json; SGLang's under configs/triton_X_Y_Z/), "
                   "keyed by the batch size, bare parameters.")
@engine_table_options
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False),
              help="The folder to write to (default: the table's own). Files already there "
                   "keep the batch sizes the table does not give.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def convert(table: Path, to: str, batch_dim: str | None, config_dtype: str | None,
            block_shape: tuple[int, int] | None, dim_map: tuple[tuple[str, str], ...],
            triton_version: str | None, out: Path | None, fmt: str) -> None:
    """Write TABLE (autotune's <kernel>/<device>.json) in a serving engine's layout."""
    with user_errors(ValueError):
        written = api.convert_table(table, to=to, batch_dim=batch_dim, out=out,
                                    dtype=config_dtype, block_shape=block_shape,
                                    dim_map=dim_map, triton_version=triton_version)
    if fmt == "json":
        emit_json({role: str(path) for role, path in written.items()})
        return
    for path in written.values():
        click.echo(str(path))
