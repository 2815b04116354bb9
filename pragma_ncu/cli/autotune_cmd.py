"""`pragma-ncu autotune`: search a kernel's declared parameters on the GPU."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import cast

import click

from pragma_ncu.backends.cpu.profiling import cpu_runner
from pragma_ncu.bench import worker_command
from pragma_ncu.cli.common import emit_json, load_task, parse_params, pick_shapes, progress_printer
from pragma_ncu.cli.pool_options import PoolRequest, open_pool, pool_options, pool_progress
from pragma_ncu.errors import NoGPUError, PragmaError
from pragma_ncu.pool.devices import GpuSelection
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.report import autotune as tables
from pragma_ncu.runner import Runner
from pragma_ncu.search.autotune import SearchOptions, autotune_shapes
from pragma_ncu.search.autotune import autotune as run_autotune
from pragma_ncu.search.output import write_results, write_table
from pragma_ncu.search.results import Budget, Evaluation, SearchResult
from pragma_ncu.search.serial import Progress
from pragma_ncu.search.space import point_key
from pragma_ncu.search.strategies import STRATEGIES
from pragma_ncu.settings import Settings, load_settings
from pragma_ncu.spec import ParamValue, Shape, TaskSpec


@click.command()
@click.option("--kernel", "kernel", required=True, type=click.Path(path_type=Path),
              help="The .cu or .cu.j2 file (its spec is the .toml beside it unless --spec).")
@click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec.")
@click.option("--shape", "shapes", multiple=True,
              help="Shapes to tune for (repeatable; default: all of the spec's). The spec's "
                   "other shapes are still verified for every point, not timed.")
@click.option("--strategy", type=click.Choice(STRATEGIES),
              default="auto", show_default=True,
              help="auto: exhaustive when the feasible space fits the budget, else TPE.")
@click.option("--budget", type=int, default=200, show_default=True,
              help="Points to compile and measure at most.")
@click.option("--time-budget", type=float, help="Seconds the search may take at most.")
@click.option("--top-k", type=int, default=5, show_default=True,
              help="Candidates re-timed with more repetitions before a winner is declared.")
@click.option("--rounds", type=int, default=2, show_default=True,
              help="Interleaved re-test rounds.")
@click.option("--seed", type=int, default=0, show_default=True, help="The sampler's seed.")
@click.option("--incumbent", "incumbent", multiple=True,
              help="The configuration to beat, NAME=VALUE (default: the spec's defaults).")
@click.option("--arch", help="Compile for this arch (default: the GPU's).")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds one measurement may take before its worker is killed.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Where to write results (default: pragma-ncu-autotune/<kernel>).")
@click.option("--per-shape", is_flag=True,
              help="Tune each shape on its own (a configuration per shape); with several "
                   "workers, the shapes are spread over them.")
@click.option("--configs", "configs", type=click.Path(path_type=Path),
              help="The folder of per-shape config tables to add the winners to "
                   "(<kernel>/<device>.json; default: OUT/configs).")
@pool_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def autotune(kernel: Path, spec: Path | None, shapes: tuple[str, ...], strategy: str,
             budget: int, time_budget: float | None, top_k: int, rounds: int, seed: int,
             incumbent: tuple[str, ...], arch: str | None, timeout: float,
             out_dir: Path | None, per_shape: bool, configs: Path | None,
             gpus: GpuSelection | None, workers: int | None, ray: str | None,
             fmt: str) -> None:
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
    settings = load_settings()
    task = load_task(kernel, spec)
    chosen = pick_shapes(task, shapes)
    names = {s.name for s in chosen}
    checks = [s for s in task.shapes if s.name not in names] if shapes else []
    if not any(p.values for p in task.params):
        raise click.ClickException(f"{task.spec_path} declares no parameter with candidate "
                                   "values ([params] NAME = {default = ..., values = [...]})")
    options = SearchOptions(strategy=strategy, budget=Budget(budget, time_budget), top_k=top_k,
                            rounds=rounds, seed=seed, jobs=settings.jobs)
    out = out_dir or Path("pragma-ncu-autotune") / task.source_path.name.split(".")[0]
    try:
        results = _search(task, chosen, checks, settings, options, PoolRequest(gpus, workers, ray),
                          per_shape, (parse_params(incumbent), arch, timeout), fmt == "table")
    except NoGPUError as exc:
        if task.is_cpu:
            raise click.ClickException(f"the CPU worker did not start: {exc.reason}") from None
        click.echo(f"no GPU: {exc.reason}\nautotune measures on a CUDA GPU; run "
                   "`pragma-ncu doctor` for what is missing.", err=True)
        sys.exit(3)
    except (PragmaError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if per_shape:
        _shapes_out(results, task, chosen, out, configs, fmt)
        sys.exit(0 if all(r.general.winner is not None for r in results) else 1)
    (result,) = results
    written = write_results(result, task, out, chosen, configs)
    if fmt == "json":
        emit_json({**result.to_json(), "files": {k: str(v) for k, v in written.items()}})
    else:
        _print(result, written)
    sys.exit(0 if result.general.winner is not None else 1)


def _search(task: TaskSpec, shapes: list[Shape], checks: list[Shape], settings: Settings,
            options: SearchOptions, req: PoolRequest, per_shape: bool,
            how: tuple[dict[str, ParamValue], str | None, float],
            show: bool) -> list[SearchResult]:
    """Start the workers, search, stop them: one result per shape with --per-shape, else one.
    `how` is (incumbent, arch, timeout)."""
    incumbent, arch, timeout = how
    notice = progress_printer(show)
    pool = open_pool(task, settings, timeout, req, notice)
    # a Ray actor's runner has the Runner's interface
    runner = cast(Runner, pool.primary.runner) if pool else _runner(task, settings, timeout)
    try:
        if per_shape:
            return autotune_shapes(task, shapes, settings, runner, options, check_shapes=checks,
                                   incumbent=incumbent, arch=arch, notice=notice, pool=pool)
        return [run_autotune(task, shapes, settings, runner, options, check_shapes=checks,
                             incumbent=incumbent, arch=arch, notice=notice, pool=pool,
                             progress=_progress(show, pool))]
    finally:
        if pool is not None:
            pool.close()
        else:
            runner.close()


def _runner(task: TaskSpec, settings: Settings, timeout: float) -> Runner:
    if task.is_cpu:
        return cpu_runner(settings, timeout)
    return Runner(worker_command(settings), timeout_s=timeout)


def _shapes_out(results: list[SearchResult], task: TaskSpec, shapes: list[Shape], out: Path,
                configs: Path | None, fmt: str) -> None:
    """Each shape's results in its own folder, all winners in one config table."""
    written = {r.shapes[0]: write_results(r, task, out / _safe(r.shapes[0]), shapes,
                                          configs or out / "configs") for r in results}
    table = write_table(results, task, configs or out / "configs", shapes)
    if fmt == "json":
        emit_json({"kernel": task.kernel_name, "table": str(table) if table else None,
                   "shapes": {r.shapes[0]: {**r.to_json(), "files": {
                       k: str(v) for k, v in written[r.shapes[0]].items()}} for r in results}})
        return
    click.echo(tables.shapes_table(results))
    click.echo("")
    if table is not None:
        click.echo(f"table: {table}")
    for shape, files in written.items():
        click.echo(f"{shape}: {files['results'].parent}")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _progress(enabled: bool, pool: WorkerPool | None) -> Progress:
    if pool is not None:
        return pool_progress(pool, enabled)
    tty = sys.stderr.isatty()

    def show(ev: Evaluation, best: Evaluation | None) -> None:
        if not enabled:
            return
        value = f"{ev.objective:.2f} µs" if ev.objective is not None else ev.status
        top = f"best {best.objective:.2f} µs" if best and best.objective else "no best yet"
        line = f"  [{ev.index + 1}] {point_key(ev.point)}: {value} ({top})"
        click.echo(line.ljust(100) + ("\r" if tty else "\n"), err=True, nl=False)
    return show


def _print(result: SearchResult, written: dict[str, Path]) -> None:
    click.echo(os.linesep.join(tables.stats_lines(result)))
    click.echo("")
    click.echo(tables.winners_table(result))
    click.echo("")
    click.echo(tables.retest_table(result))
    click.echo("")
    for role, path in written.items():
        click.echo(f"{role}: {path}")
