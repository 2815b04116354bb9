"""`pragma-ncu tune`: the closed loop (baseline, tune, profile, decide; rewrite with an LLM)."""

from __future__ import annotations

import contextlib
import sys
import tomllib
from pathlib import Path
from typing import Any, cast

import click

from pragma_ncu import loop as session
from pragma_ncu import task as tasks
from pragma_ncu.backends.cpu.profiling import cpu_runner
from pragma_ncu.backends.cpu.session import CpuSession
from pragma_ncu.bench import worker_command
from pragma_ncu.build import BuildCache, build
from pragma_ncu.cli.common import emit_json, load_task, pick_shapes, progress_printer
from pragma_ncu.cli.knowledge_cmd import load_compendium
from pragma_ncu.cli.pool_options import PoolRequest, open_pool, pool_options
from pragma_ncu.coder.llm_coder import LLMCoder
from pragma_ncu.conductor.rules import Policy
from pragma_ncu.errors import NoGPUError, PragmaError
from pragma_ncu.llm import LLMClient, LLMConfig
from pragma_ncu.loop.backend import Backend, GpuBackend
from pragma_ncu.loop.rounds import Context, TuneOptions, variant_checker
from pragma_ncu.loop.rounds import run as run_loop
from pragma_ncu.pool.devices import GpuSelection
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.report import tune as tables
from pragma_ncu.report.trace import resolve_run
from pragma_ncu.runner import Runner
from pragma_ncu.search.autotune import SearchOptions
from pragma_ncu.search.results import Budget
from pragma_ncu.search.space import Space
from pragma_ncu.search.strategies import STRATEGIES
from pragma_ncu.settings import Settings, load_settings
from pragma_ncu.spec import TaskSpec
from pragma_ncu.store import DEFAULT_NAME, Store, StoreError
from pragma_ncu.toolchain import DEFAULT_ARCH, arch_flag, find_nvcc


@click.command()
@click.option("--kernel", "kernel", type=click.Path(path_type=Path),
              help="The .cu (.cu.j2) file, or a C/C++ one (.c, .cpp) for the CPU; its spec "
              "is the .toml beside it unless --spec.")
@click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec.")
@click.option("--shape", "shapes", multiple=True,
              help="Shapes to time (repeatable; default: all). The others are verified only.")
@click.option("--resume", "resume_id", help="Continue an interrupted run (id, prefix or 'last').")
@click.option("--rounds", type=int, default=5, show_default=True,
              help="Rounds after the baseline at most.")
@click.option("--target", type=float, default=0.9, show_default=True,
              help="Stop when the best reaches this fraction of the attainable roofline: the "
              "measured copy ceiling, or with the spec's metrics.flops the measured compute "
              "ceiling where that binds.")
@click.option("--patience", type=int, default=2, show_default=True,
              help="Stop after this many rounds without an accepted candidate.")
@click.option("--budget", type=int, default=200, show_default=True,
              help="Points to compile and measure per round at most.")
@click.option("--time-budget", type=float, help="Seconds one round's search may take at most.")
@click.option("--strategy", type=click.Choice(STRATEGIES),
              default="auto", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--llm-model", help="The coder's model (default $PRAGMA_NCU_LLM_MODEL).")
@click.option("--llm-base-url", help="An OpenAI-compatible endpoint (default "
              "$PRAGMA_NCU_LLM_BASE_URL); the key comes from $PRAGMA_NCU_LLM_API_KEY.")
@click.option("--no-llm", is_flag=True, help="Use no LLM even when one is configured.")
@click.option("--llm-timeout", type=float, default=120.0, show_default=True,
              help="Seconds one LLM request may take.")
@click.option("--store", "store_path", type=click.Path(path_type=Path),
              default=Path(DEFAULT_NAME), show_default=True, help="The run store.")
@click.option("--arch", help="Compile for this arch (default: the GPU's).")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds one measurement may take before its worker is killed.")
@click.option("--require-gpu", is_flag=True,
              help="Exit with status 3 when no GPU is present (default: check and exit 0).")
@pool_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def tune(kernel: Path | None, spec: Path | None, shapes: tuple[str, ...], resume_id: str | None,
         rounds: int, target: float, patience: int, budget: int, time_budget: float | None,
         strategy: str, seed: int, llm_model: str | None, llm_base_url: str | None,
         no_llm: bool, llm_timeout: float, store_path: Path, arch: str | None, timeout: float,
         require_gpu: bool, gpus: GpuSelection | None, workers: int | None, ray: str | None,
         fmt: str) -> None:
    """Make a kernel faster, round by round, and say why at every step.

    Round 0 verifies, times and profiles the original. Each round then gets a variant (the
    kernel's own knobs, re-tuned ranges, or with an LLM a rewritten template), searches its
    parameters inside the GPU's limits, re-tests the winner side by side with the historical
    best and profiles it; the conductor keeps the best (replaced only by a candidate verified
    at every shape and faster beyond noise) and decides the next step. Every round is stored
    in the run store (--resume continues an interrupted run) and `pragma-ncu trace` shows the
    reasoning. Without a GPU it checks the spec and compiles the kernel, says what a run
    needs, and exits 0. A C/C++ kernel runs on the CPU: the system compiler builds it (flags
    are parameters like any other), and perf profiles it, or cachegrind where the CPU's
    counters cannot be read. With --gpus (--workers for C/C++) each round's search measures on
    every GPU at once; the side-by-side re-test and the profile run on the first. Exit status: 0
    done, 1 the original fails, 2 bad input, 3 no GPU with --require-gpu.
    """
    settings = load_settings()
    store = _open_store(store_path)
    if resume_id:
        run_id, config = _resumed(store, resume_id)
        kernel, spec = Path(config["kernel"]), Path(config["spec"])
        shapes, rounds, target = tuple(config["shapes"]), config["rounds"], config["target"]
        patience, budget, strategy = config["patience"], config["budget"], config["strategy"]
        time_budget, seed = config["time_budget"], config["seed"]
    elif kernel is None:
        raise click.UsageError("give --kernel FILE (or --resume RUN)")
    task = load_task(kernel, spec)
    tuned = tuple(s.name for s in pick_shapes(task, shapes))
    coder_cfg = None if no_llm else _llm_config(settings, llm_model, llm_base_url, llm_timeout)
    config = {"kernel": str(kernel), "spec": str(task.spec_path), "shapes": list(tuned),
              "rounds": rounds, "target": target, "patience": patience, "budget": budget,
              "strategy": strategy, "time_budget": time_budget, "seed": seed,
              "llm": coder_cfg.model if coder_cfg else "none"}
    options = TuneOptions(tuned, Policy(rounds, target, patience, llm=coder_cfg is not None),
                          SearchOptions(strategy=strategy, budget=Budget(budget, time_budget),
                                        seed=seed, jobs=settings.jobs))
    show = progress_printer(fmt == "table")
    pool: WorkerPool | None = None
    try:
        pool = open_pool(task, settings, timeout, PoolRequest(gpus, workers, ray), show)
        # a pool closes its own workers; a Ray actor's runner has the Runner's interface
        with (contextlib.nullcontext(cast(Runner, pool.primary.runner)) if pool
              else _runner(task, settings, timeout)) as runner:
            show(f"starting the {'CPU' if task.is_cpu else 'GPU'} worker")
            backend = _backend(task, settings, runner, arch, pool)
            if not resume_id:
                run_id = store.create_run(task.kernel_name, str(task.spec_path), config,
                                          backend.device)
            show(f"run {run_id} (resume with: pragma-ncu tune --resume {run_id})")
            ctx = _context(task, settings, backend, store, run_id, store_path, options,
                           coder_cfg, show)
            state = run_loop(ctx, session.load_state(ctx) if resume_id else None)
    except NoGPUError as exc:
        if task.is_cpu:
            raise click.ClickException(f"the CPU worker did not start: {exc}") from None
        _without_gpu(task, settings, arch, exc.reason)
        sys.exit(3 if require_gpu else 0)
    except KeyboardInterrupt:
        store.set_run_status(run_id, "interrupted")
        click.echo(f"\ninterrupted; continue with: pragma-ncu tune --resume {run_id}", err=True)
        sys.exit(130)
    except (PragmaError, ValueError) as exc:
        if "run_id" in locals():
            store.set_run_status(run_id, "failed", {"error": str(exc)})
        raise click.ClickException(str(exc)) from None
    finally:
        if pool is not None:
            pool.close()
    summary = session.summary(ctx, state)
    store.set_run_status(run_id, "done", summary)
    written = session.write_best(ctx, state, ctx.run_dir)
    _report(fmt, run_id, summary, state, written)


def _runner(task: TaskSpec, settings: Settings, timeout: float) -> Runner:
    if task.is_cpu:
        return cpu_runner(settings, timeout)
    return Runner(worker_command(settings), timeout_s=timeout)


def _backend(task: TaskSpec, settings: Settings, runner: Runner, arch: str | None,
             pool: WorkerPool | None = None) -> Backend:
    """The CPU backend for a C/C++ kernel, the GPU's for CUDA."""
    if task.is_cpu:
        return CpuSession(task, settings, runner, pool=pool)
    return GpuBackend(task, settings, runner, worker_command(settings), arch, pool=pool)


def _without_gpu(task: TaskSpec, settings: Settings, arch: str | None, reason: str) -> None:
    """What can be checked without a GPU: the spec, the template at its defaults, the space."""
    click.echo(f"no GPU: {reason}", err=True)
    try:
        nvcc = find_nvcc(settings)
        built = build(tasks.build_request(task, arch_flag(arch) if arch else DEFAULT_ARCH, {},
                                          render_dir=settings.cache_dir / "rendered"),
                      nvcc, BuildCache(settings.cache_dir / "build"))
    except PragmaError as exc:
        raise click.ClickException(str(exc)) from None
    if not built.ok:
        raise click.ClickException(f"{task.source_path} does not compile at its defaults:\n"
                                   f"{built.log}")
    regs = built.resources.registers if built.resources else "?"
    size = Space.from_spec(task).size
    click.echo(f"{task.kernel_name}: compiles for {built.arch} at its defaults ({regs} "
               f"registers); {size} parameter points declared. tune verifies, times and "
               "profiles on a CUDA GPU: run it where `pragma-ncu doctor` finds one.")


def _open_store(path: Path) -> Store:
    try:
        return Store.open(path)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None


def _resumed(store: Store, wanted: str) -> tuple[str, dict[str, Any]]:
    try:
        run = resolve_run(store, wanted)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    if run.status == "done":
        raise click.ClickException(f"run {run.id} is already done; see `pragma-ncu trace "
                                   f"{run.id}`")
    return run.id, run.config


def _llm_config(settings: Settings, model: str | None, base_url: str | None,
                timeout: float) -> LLMConfig | None:
    model = model or settings.llm_model
    base_url = base_url or settings.llm_base_url
    if not model or not (base_url or settings.llm_api_key):
        return None
    return LLMConfig(model=model, base_url=base_url, api_key=settings.llm_api_key,
                     timeout_s=timeout)


def _context(task: TaskSpec, settings: Settings, backend: Backend, store: Store,
             run_id: str, store_path: Path, options: TuneOptions, llm: LLMConfig | None,
             show: Any) -> Context:
    base = tomllib.loads(task.spec_path.read_text())
    run_dir = store_path.parent / "runs" / run_id
    coder = None
    if llm is not None:
        coder = LLMCoder(LLMClient(llm), variant_checker(task, base, run_dir, backend))
    return Context(task, base, task.spec_path.read_text(), backend, load_compendium(), store,
                   run_id, run_dir, options, coder,
                   llm.model if llm else "none", show)


def _report(fmt: str, run_id: str, summary: dict[str, Any], state: Any,
            written: dict[str, Path]) -> None:
    if fmt == "json":
        emit_json({"run": run_id, "summary": summary,
                   "rounds": [r.to_json() for r in state.records],
                   "files": {k: str(v) for k, v in written.items()}})
        return
    click.echo(tables.rounds_table(state.records))
    click.echo("")
    for line in tables.summary_lines(run_id, summary):
        click.echo(line)
    for role, path in written.items():
        click.echo(f"{role}: {path}")
    click.echo(f"trace: pragma-ncu trace {run_id} [--format md|json|html]")
