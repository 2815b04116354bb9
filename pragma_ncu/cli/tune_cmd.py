"""`pragma-ncu tune`: the closed loop (baseline, tune, profile, decide; rewrite with an LLM)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.api import bounds, strategies
from pragma_ncu.cli.common import (
    bounded,
    click_error,
    emit_json,
    kernel_name_option,
    user_errors,
)
from pragma_ncu.cli.display import progress_display
from pragma_ncu.cli.pool_options import pool_options
from pragma_ncu.infra.errors import ExitStatus
from pragma_ncu.report import tune as tables


class MaxTime(click.ParamType):
    """Seconds, or no limit: 0 or "none"."""

    name = "seconds"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> float | None:
        if value is None or isinstance(value, float):
            return value
        text = str(value).strip().lower()
        if text in ("none", "0", "0.0"):
            return None
        try:
            seconds = float(text)
        except ValueError:
            self.fail(f"{value!r}: seconds, or 0 / none for no limit", param, ctx)
        if seconds < 0:
            self.fail(f"{value!r}: seconds, or 0 / none for no limit", param, ctx)
        return seconds


@click.command()
@click.option("--kernel", "kernel", type=click.Path(path_type=Path),
              help="The .cu (.cu.j2) file, or a C/C++ one (.c, .cpp) for the CPU; its spec "
              "is the .toml beside it unless --spec.")
@click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec.")
@kernel_name_option
@click.option("--shape", "shapes", multiple=True,
              help="Shapes to time (repeatable; default: all). The others are verified only.")
@click.option("--resume", "resume_id", help="Continue an interrupted run (id, prefix or 'last').")
@click.option("--rounds", type=bounded(bounds.ROUNDS), default=5, show_default=True,
              help="Rounds after the baseline at most.")
@click.option("--target", type=bounded(bounds.FRACTION), default=0.9, show_default=True,
              help="Stop when the best reaches this fraction of the attainable roofline: the "
              "measured copy ceiling, or with the spec's metrics.flops the measured compute "
              "ceiling where that binds.")
@click.option("--patience", type=bounded(bounds.COUNT), default=2, show_default=True,
              help="Stop after this many rounds without an accepted candidate.")
@click.option("--budget", type=bounded(bounds.COUNT), default=200, show_default=True,
              help="Points to compile and measure per round at most.")
@click.option("--time-budget", type=bounded(bounds.SECONDS),
              help="Seconds one round's search may take at most.")
@click.option("--max-time", "max_time", type=MaxTime(), default="120", show_default=True,
              help="Seconds the whole run may take: each round's search gets a share of what "
              "is left, and the run stops when that cannot hold another round. 0 or 'none': "
              "no limit.")
@click.option("--retest-rounds", type=bounded(bounds.COUNT), default=3, show_default=True,
              help="Interleaved rounds of each side-by-side re-test of a candidate and the "
              "best; up to 4x as many while too noisy to decide.")
@click.option("--strategy", type=click.Choice(strategies.choices()),
              default="auto", show_default=True)
@click.option("--seed", type=bounded(bounds.SEED), default=0, show_default=True)
@click.option("--llm-model", help="The coder's model (default $PRAGMA_NCU_LLM_MODEL).")
@click.option("--llm-base-url", help="An OpenAI-compatible endpoint (default "
              "$PRAGMA_NCU_LLM_BASE_URL); the key comes from $PRAGMA_NCU_LLM_API_KEY.")
@click.option("--no-llm", is_flag=True, help="Use no LLM even when one is configured.")
@click.option("--llm-timeout", type=bounded(bounds.SECONDS), default=120.0, show_default=True,
              help="Seconds one LLM request may take.")
@click.option("--store", "store_path", type=click.Path(path_type=Path),
              default=Path(api.DEFAULT_STORE), show_default=True, help="The run store.")
@click.option("--arch", help="Compile for this arch (default: the GPU's).")
@click.option("--timeout", type=bounded(bounds.SECONDS), default=60.0, show_default=True,
              help="Seconds one measurement may take before its worker is killed.")
@click.option("--require-gpu", is_flag=True,
              help="Exit with status 3 when no GPU is present (default: check and exit 0).")
@pool_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def tune(kernel: Path | None, spec: Path | None, spec_kernel: str | None,
         shapes: tuple[str, ...], resume_id: str | None,
         rounds: int, target: float, patience: int, budget: int, time_budget: float | None,
         max_time: float | None, retest_rounds: int, strategy: str, seed: int,
         llm_model: str | None, llm_base_url: str | None, no_llm: bool, llm_timeout: float,
         store_path: Path,
         arch: str | None, timeout: float,
         require_gpu: bool, gpus: api.GpuSelection | None, workers: int | None, ray: str | None,
         fmt: str) -> None:
    """Make a kernel faster, round by round, and say why at every step.

    Round 0 verifies, times and profiles the original. Each round then gets a variant (the
    kernel's own knobs, re-tuned ranges, or with an LLM a rewritten template), searches its
    parameters inside the GPU's limits, re-tests the winner side by side with the historical
    best and profiles it; the conductor keeps the best (replaced only by a candidate verified
    at every shape and shown faster by the interval of their timings; a round too noisy to
    decide says so) and decides the next step. Every round is stored
    in the run store (--resume continues an interrupted run) and `pragma-ncu trace` shows the
    reasoning. Without a GPU it checks the spec and compiles the kernel, says what a run
    needs, and exits 0. A C/C++ kernel runs on the CPU: the system compiler builds it (flags
    are parameters like any other), and perf profiles it, or cachegrind where the CPU's
    counters cannot be read. With --gpus (--workers for C/C++) each round's search measures on
    every GPU at once; the side-by-side re-test and the profile run on the first. Exit status: 0
    done, 1 the original fails, 2 bad input, 3 no GPU with --require-gpu.
    """
    if resume_id is None and kernel is None:
        raise click.UsageError("give --kernel FILE (or --resume RUN)")
    llm = api.LLMRequest(llm_model, llm_base_url, llm_timeout, off=no_llm)
    try:
        with user_errors(ValueError, keep=(api.DeviceCheckError,)), \
                progress_display(fmt == "table" or sys.stderr.isatty()) as show:
            options = api.TuneOptions(
                shapes=shapes, rounds=rounds, target=target, patience=patience, budget=budget,
                time_budget=time_budget, strategy=strategy, seed=seed,
                retest_rounds=retest_rounds, max_time=max_time, kernel_name=spec_kernel,
                store=store_path, arch=arch, timeout=timeout,
                pool=api.PoolRequest(gpus, workers, ray))
            result = api.tune(kernel, options, spec_path=spec, llm=llm, resume=resume_id,
                              progress=show)
    except api.DeviceCheckError as exc:
        click.echo(f"no GPU: {exc.reason}", err=True)
        raise click_error(exc) from None
    except api.TuneInterrupted as exc:
        click.echo(f"\ninterrupted; continue with: pragma-ncu tune --resume {exc.run_id}",
                   err=True)
        sys.exit(ExitStatus.INTERRUPTED)
    if result.no_device is not None:
        click.echo(f"no GPU: {result.no_device}", err=True)
        click.echo(result.message)
        sys.exit(ExitStatus.ENVIRONMENT if require_gpu else ExitStatus.OK)
    _report(fmt, result)


def _report(fmt: str, result: api.TuneResult) -> None:
    run_id = result.run_id
    if fmt == "json":
        emit_json({"run": run_id, "summary": result.summary,
                   "rounds": [r.to_json() for r in result.records],
                   "files": {k: str(v) for k, v in result.files.items()}})
        return
    click.echo(tables.rounds_table(result.records))
    click.echo("")
    for line in tables.summary_lines(str(run_id), result.summary):
        click.echo(line)
    for role, path in result.files.items():
        click.echo(f"{role}: {path}")
    click.echo(f"trace: pragma-ncu trace {run_id} [--format md|json|html]")
