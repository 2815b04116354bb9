"""The options that name a config table's files as a serving engine loads them (`--batch-dim`,
`--config-dtype`, `--block-shape`, `--dim-map`, `--triton-version`), shared by `autotune
--config-format vllm|sglang` and `config convert --to vllm|sglang`; each passed to the command
as its own argument, `--block-shape` and `--dim-map` already parsed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from pragma_ncu import api

F = Callable[..., Any]


def _parsed(parse: Callable[[str | None], Any]) -> Callable[..., Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx, param) from None
    return callback


def engine_table_options(command: F) -> F:
    """The engine layout's options, passed on as `batch_dim`, `config_dtype`, `block_shape`,
    `dim_map` and `triton_version`."""
    command = click.option(
        "--triton-version", "triton_version", metavar="X.Y.Z",
        help="sglang: the Triton version the server runs; the files go to "
             "configs/triton_X_Y_Z/, the folder SGLang reads under SGLANG_MOE_CONFIG_DIR.",
    )(command)
    command = click.option(
        "--dim-map", "dim_map", callback=_parsed(api.parse_dim_map),
        metavar="E=DIM,N=DIM",
        help="The engine's name of each fixed dim, in the file's order (default: the "
             "spec's E and N, written E first).")(command)
    command = click.option(
        "--block-shape", "block_shape", callback=_parsed(api.parse_block_shape),
        metavar="N,K",
        help="The block-quantization shape the engine asks for (block_shape=[128,128] in "
             "the file name).")(command)
    command = click.option(
        "--config-dtype", "config_dtype", metavar="NAME",
        help="The dtype selector the engine asks for (dtype=fp8_w8a8 in the file name: "
             "fp8_w8a8, int8_w8a16, int4_w4a16, float32, ...); none for bf16 and fp16.",
    )(command)
    command = click.option(
        "--batch-dim", "batch_dim",
        help="The dim that keys the files (default: the one the shapes vary in); the other "
             "dims name them, one file per combination of their values.")(command)
    return command
