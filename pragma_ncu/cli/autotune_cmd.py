"""`pragma-ncu autotune`: search a kernel's declared parameters on the GPU."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.api import bounds, strategies
from pragma_ncu.cli.common import (
    bounded,
    emit_json,
    kernel_name_option,
    load_task,
    parse_params,
    user_errors,
)
from pragma_ncu.cli.display import progress_display
from pragma_ncu.cli.pool_options import pool_options
from pragma_ncu.cli.table_options import engine_table_options
from pragma_ncu.infra.errors import ExitStatus, NoGPUError
from pragma_ncu.report import autotune as tables


@click.command()
@click.option("--kernel", "kernel", required=True, type=click.Path(path_type=Path),
              help="The .cu or .cu.j2 file (its spec is the .toml beside it unless --spec).")
@click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec.")
@kernel_name_option
@click.option("--shape", "shapes", multiple=True,
              help="Shapes to tune for (repeatable; default: all of the spec's). The spec's "
                   "other shapes are still verified for every point, not timed.")
@click.option("--strategy", type=click.Choice(strategies.choices()),
              default="auto", show_default=True,
              help="auto: exhaustive when the feasible space fits the budget, else TPE.")
@click.option("--budget", type=bounded(bounds.COUNT), default=200, show_default=True,
              help="Points to compile and measure at most.")
@click.option("--time-budget", type=bounded(bounds.SECONDS),
              help="Seconds the search may take at most.")
@click.option("--top-k", type=bounded(bounds.COUNT), default=5, show_default=True,
              help="Candidates re-timed with more repetitions before a winner is declared.")
@click.option("--rounds", type=bounded(bounds.COUNT), default=2, show_default=True,
              help="Interleaved re-test rounds; up to 4x as many while the re-test cannot "
              "tell the winner from the incumbent (too noisy to decide).")
@click.option("--seed", type=bounded(bounds.SEED), default=0, show_default=True,
              help="The sampler's seed.")
@click.option("--incumbent", "incumbent", multiple=True,
              help="The configuration to beat, NAME=VALUE (default: the spec's defaults).")
@click.option("--arch", help="Compile for this arch (default: the GPU's).")
@click.option("--timeout", type=bounded(bounds.SECONDS), default=60.0, show_default=True,
              help="Seconds one measurement may take before its worker is killed.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Where to write results (default: pragma-ncu-autotune/<kernel>).")
@click.option("--per-shape", is_flag=True,
              help="Tune each shape on its own (a configuration per shape); with several "
                   "workers, the shapes are spread over them.")
@click.option("--configs", "configs", type=click.Path(path_type=Path),
              help="The folder of per-shape config tables to add the winners to "
                   "(<kernel>/<device>.json; default: OUT/configs).")
@click.option("--config-format", "config_format", type=click.Choice(api.TABLE_LAYOUTS),
              default="pragma", show_default=True,
              help="The config table's layout: pragma (<kernel>/<device>.json, keyed by "
                   "shape, with the re-test's figures), vllm or sglang (the files the engine "
                   "loads: E=128,N=384,device_name=NVIDIA_H200.json, keyed by the batch size, "
                   "bare parameters; vLLM's directly under --configs, SGLang's under "
                   "--configs/configs/triton_X_Y_Z).")
@engine_table_options
@click.option("--cache", "cache", type=click.Path(path_type=Path, dir_okay=False),
              default=Path(api.DEFAULT_STORE), show_default=True,
              help="The measurement cache (a table of the run store): every point measured "
                   "is kept, keyed by its build, shape, spec, reference, device, driver and "
                   "toolchain; a rerun measures nothing it already measured, and an "
                   "interrupted autotune resumes from it.")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Measure every point afresh and keep nothing.")
@pool_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def autotune(kernel: Path, spec: Path | None, spec_kernel: str | None,
             shapes: tuple[str, ...], strategy: str,
             budget: int, time_budget: float | None, top_k: int, rounds: int, seed: int,
             incumbent: tuple[str, ...], arch: str | None, timeout: float,
             out_dir: Path | None, per_shape: bool, configs: Path | None,
             config_format: str, batch_dim: str | None, config_dtype: str | None,
             block_shape: tuple[int, int] | None, dim_map: tuple[tuple[str, str], ...],
             triton_version: str | None, cache: Path, no_cache: bool,
             gpus: api.GpuSelection | None,
             workers: int | None, ray: str | None, fmt: str) -> None:
    """Search the parameters a kernel's spec declares, inside the GPU's limits.

    Every point is checked against the device's limits before it is compiled, compiled on all
    cores ahead of the GPU, verified and timed at every shape; the top candidates are re-timed
    before a winner is declared, and the winner replaces the incumbent only when it is faster
    beyond the measured noise. Writes the instantiated best kernel, results.json,
    evaluations.jsonl and the per-shape winners' config table. With --gpus (or --workers for a
    C/C++ kernel) every GPU measures points at once and the re-test runs on the first; --ray
    runs the same workers across a Ray cluster. Exit status: 0 done, 1 nothing verified, 2 bad
    input, 3 no GPU.
    """
    try:
        table_format = api.TableFormat(config_format, batch_dim, config_dtype, block_shape,
                                       dim_map, triton_version)
    except api.TableNamingError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.option) from None
    task = load_task(kernel, spec, spec_kernel)
    try:
        with user_errors(ValueError, keep=(NoGPUError,)), \
                progress_display(fmt == "table" or sys.stderr.isatty()) as show:
            options = api.AutotuneOptions(
                shapes=shapes, strategy=strategy, budget=budget, time_budget=time_budget,
                top_k=top_k, rounds=rounds, seed=seed, incumbent=parse_params(incumbent),
                arch=arch, timeout=timeout, out=out_dir or api.default_out(task),
                configs=configs, config_format=table_format,
                cache=None if no_cache else cache,
                pool=api.PoolRequest(gpus, workers, ray))
            if per_shape:
                shaped = api.autotune_shapes(task, options, progress=show)
            else:
                result = api.autotune(task, options, progress=show)
    except api.AutotuneInterrupted as exc:
        click.echo(f"\ninterrupted: the {exc.measured} measurements made are in the cache "
                   f"{exc.cache}; the same command resumes from them", err=True)
        sys.exit(ExitStatus.INTERRUPTED)
    except NoGPUError as exc:
        click.echo(f"no GPU: {exc.reason}\nautotune measures on a CUDA GPU; run "
                   "`pragma-ncu doctor` for what is missing.", err=True)
        sys.exit(ExitStatus.ENVIRONMENT)
    if per_shape:
        _shapes_out(task, shaped, fmt)
        sys.exit(ExitStatus.OK if all(r.general.winner is not None for r in shaped.results)
                 else ExitStatus.VERDICT)
    if fmt == "json":
        emit_json({**result.to_json(), "files": dict(result.files)})
    else:
        _print(result)
    sys.exit(ExitStatus.OK if result.general.winner is not None else ExitStatus.VERDICT)


def _shapes_out(task: api.TaskSpec, shaped: api.ShapesResult, fmt: str) -> None:
    """Each shape's results (in its own folder), and the one config table of all winners."""
    files = {r.shapes[0]: dict(r.files) for r in shaped.results}
    if fmt == "json":
        emit_json({"kernel": task.kernel_name,
                   "table": str(shaped.table) if shaped.table else None,
                   "tables": [str(t) for t in shaped.tables],
                   "shapes": {r.shapes[0]: {**r.to_json(), "files": files[r.shapes[0]]}
                              for r in shaped.results}})
        return
    click.echo(tables.shapes_table(list(shaped.results)))
    click.echo("")
    for path in shaped.tables:
        click.echo(f"table: {path}")
    for shape, written in files.items():
        click.echo(f"{shape}: {Path(written['results']).parent}")


def _print(result: api.SearchResult) -> None:
    click.echo(os.linesep.join(tables.stats_lines(result)))
    click.echo("")
    click.echo(tables.winners_table(result))
    for line in tables.undecided_lines(result):
        click.echo(line)
    click.echo("")
    click.echo(tables.retest_table(result))
    click.echo("")
    for role, path in result.files:
        click.echo(f"{role}: {path}")
