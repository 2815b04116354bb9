"""`tune` as a library call: the closed loop on a spec, from the first round or resumed from
the run store, with the worker (or pool) started, and the no-GPU path where there is none."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pragma_ncu import loop
from pragma_ncu.api.arguments import check_fields, checked
from pragma_ncu.api.common import (
    SpecLike,
    connected,
    load,
    settings_or_default,
    shapes_of,
    target_of,
)
from pragma_ncu.backends.base import PoolRequest, Session
from pragma_ncu.coder.llm_coder import LLMCoder
from pragma_ncu.conductor.situation import Policy
from pragma_ncu.infra.bounds import Count, Fraction, Rounds, Seconds, Seed
from pragma_ncu.infra.errors import InputError, KernelFailure, NoGPUError, PragmaError
from pragma_ncu.infra.llm import LLMClient, LLMConfig
from pragma_ncu.infra.logs import RunLog, captured
from pragma_ncu.infra.progress import Notice, Progress, logged, notes
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.store import DEFAULT_NAME, Store
from pragma_ncu.knowledge.compendium import load_compendium
from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.search import strategies
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget
from pragma_ncu.spec.file import spec_tables, toml_text
from pragma_ncu.spec.model import Shape, TaskSpec

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class TuneResult:
    """A finished run: its id, its headline numbers, every round's record and the best kernel's
    files; or, where the device was missing (`no_device`: why), what could be checked without
    it (`message`) and no run."""

    run_id: str | None
    summary: dict[str, Any] = field(default_factory=dict)
    records: tuple[RoundRecord, ...] = ()
    files: dict[str, Path] = field(default_factory=dict)
    no_device: str | None = None
    message: str = ""


class TuneInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C); `run_id` resumes it."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(run_id)


class DeviceCheckError(KernelFailure):
    """No device, and the kernel does not even compile: `reason` says why there was no
    device, the message what the compiler said."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


@checked
def llm_config(settings: Settings, model: str | None = None, base_url: str | None = None,
               timeout_s: Seconds = 120.0) -> LLMConfig | None:
    """The coder's LLM: the model and endpoint given, else the settings'; None when there is
    no model, or neither an endpoint nor a key (the key only ever comes from settings)."""
    model = model or settings.llm_model
    base_url = base_url or settings.llm_base_url
    if not model or not (base_url or settings.llm_api_key):
        return None
    return LLMConfig(model=model, base_url=base_url, api_key=settings.llm_api_key,
                     timeout_s=timeout_s)


@dataclass(frozen=True)
class LLMRequest:
    """The coder's LLM as a command asks for it, resolved against the settings by `tune`: the
    model and endpoint given, else the settings' (`llm_config`); `off` for none at all."""

    model: str | None = None
    base_url: str | None = None
    timeout_s: Seconds = 120.0
    off: bool = False

    def __post_init__(self) -> None:
        check_fields(self)

    def resolved(self, settings: Settings) -> LLMConfig | None:
        return None if self.off else llm_config(settings, self.model, self.base_url,
                                                self.timeout_s)


# The fields of TuneOptions a run records and a resumed run takes back (the others say where
# and how to run, as given each time; the pool is recorded, and handed back by resumed_pool).
RECORDED = ("shapes", "rounds", "target", "patience", "budget", "time_budget", "move_points",
            "strategy", "seed", "retest_rounds", "max_time", "kernel_name")


@dataclass(frozen=True)
class TuneOptions:
    """How `tune` runs (docs/tune.md), checked when made (counts of 1 or more, fractions in
    (0, 1], finite seconds): the shapes timed (the spec's others are verified only), the
    rounds after the baseline at most, the fraction of the attainable roofline at which to
    stop (`target`), the rounds without an accepted candidate before stopping (`patience`),
    the points one round's search measures at most (`budget`) and the seconds it may take
    (`time_budget`), the most points a moves round's knobs may span (`move_points`; None: the
    budget), the search's strategy and seed, the interleaved rounds of each side-by-side
    re-test, the seconds the whole run may take (`max_time`, None: no limit), the kernel of
    the source to run in place of the spec's (`kernel_name`), and where and how to run: the
    run store, the arch, a measurement's timeout, the pool of workers. The run store records
    them (`record`); a resumed run takes its own back (`recorded`), all but where and how to
    run, which are those given now."""

    shapes: Sequence[str | Shape] = ()
    rounds: Rounds = 5
    target: Fraction = 0.9
    patience: Count = 2
    budget: Count = 200
    time_budget: Seconds | None = None
    move_points: Count | None = None
    strategy: str = "auto"
    seed: Seed = 0
    retest_rounds: Count = 3
    max_time: Seconds | None = 120.0
    kernel_name: str | None = None
    store: Path = Path(DEFAULT_NAME)
    arch: str | None = None
    timeout: Seconds = 60.0
    pool: PoolRequest | None = None

    def __post_init__(self) -> None:
        check_fields(self)
        strategies.check(self.strategy)  # an unknown name fails before any worker starts

    def record(self, task: TaskSpec, llm: LLMConfig | None) -> dict[str, Any]:
        """What the run store keeps of them (no secret: the LLM's model only)."""
        return {**{name: getattr(self, name) for name in RECORDED},
                "shapes": [s.name for s in shapes_of(task, self.shapes)],
                "llm": llm.model if llm else "none",
                "pool": self.pool.to_json() if self.pool is not None and self.pool.wanted
                else None}

    def recorded(self, config: dict[str, Any]) -> TuneOptions:
        """A resumed run's options: what its record says (a run recorded before a field
        existed gets its default), where and how to run as given now."""
        known = {name: config[name] for name in RECORDED if name in config}
        return replace(TuneOptions(**known), store=self.store, arch=self.arch,
                       timeout=self.timeout, pool=self.pool)


    def plan(self, task: TaskSpec, llm: bool, jobs: int) -> loop.RunPlan:
        """What the loop runs by: the conductor's policy and the search's options, each made
        from its own fields here."""
        return loop.RunPlan(
            tuple(s.name for s in shapes_of(task, self.shapes)),
            Policy(self.rounds, self.target, self.patience, llm=llm,
                   move_points=self.move_points or self.budget, max_time_s=self.max_time),
            SearchOptions(strategy=self.strategy,
                          budget=Budget(self.budget, self.time_budget), seed=self.seed,
                          jobs=jobs),
            side_rounds=self.retest_rounds, max_time_s=self.max_time)


@checked
def tune(spec: SpecLike | None = None, options: TuneOptions | None = None, *,
         spec_path: Path | None = None, llm: LLMConfig | LLMRequest | None = None,
         resume: str | None = None, settings: Settings | None = None,
         progress: Progress | None = None) -> TuneResult:
    """Make `spec`'s kernel faster round by round (see docs/tune.md): round 0 verifies, times
    and profiles it; each round searches a variant, re-tests the winner beside the historical
    best, profiles it and lets the conductor decide. `options` say how (TuneOptions: the
    shapes timed, when to stop, the search's budget, the time the run may take, the run
    store...). `llm` is the coder's LLM (an `LLMRequest` is resolved against the settings;
    None: none).
    `resume` (a run id, a prefix or "last") goes on with an interrupted run of the options'
    store, with its own spec and options. Without a GPU the result says so (`no_device`) and
    what could be checked. Raises TuneInterrupted on Ctrl-C (the run is marked and
    resumable). The run store (and a spec built in Python, written beside it) is created when
    the run starts: bad input, a missing device or a kernel that does not compile leave
    nothing behind. `progress` hears each step's line and each search and re-test as phases
    (pragma_ncu.infra.progress). The run's log, every LLM request and reply included, is kept
    beside the store (logs/<run id>.log; `files["log"]`)."""
    settings = settings_or_default(settings)
    options = options or TuneOptions()
    if isinstance(llm, LLMRequest):
        llm = llm.resolved(settings)
    progress = logged(progress)
    store = options.store
    with contextlib.ExitStack() as held:
        def opened() -> Store:
            return held.enter_context(contextlib.closing(Store.open(store)))

        if resume:
            db = _existing(store, opened)
            run_id, config = _resumed(db, resume)
            task = load(Path(config["kernel"]), Path(config["spec"]),
                        config.get("kernel_name"))
            pool = resumed_pool(config, options.pool, notes(progress))
            resumed = replace(options.recorded(config), pool=pool)
            return _run(task, config, resumed, run_id, lambda: db, llm, settings, progress)
        if spec is None:
            raise InputError("give a spec or a kernel file (or a run to resume)")
        task = load(spec, spec_path, options.kernel_name)
        config = {**_sources(task, spec, store), **options.record(task, llm)}

        def started() -> Store:
            if isinstance(spec, TaskSpec):
                _write_spec(task, store)
            return opened()
        return _run(task, config, options, None, started, llm, settings, progress)


def _existing(store: Path, opened: Callable[[], Store]) -> Store:
    """The run store to resume from, which must exist (opening a missing one would create
    it)."""
    if not store.is_file():
        raise InputError(f"no run store at {store} to resume from: `pragma-ncu tune` creates "
                         "it when a run starts; point --store at the one the run used")
    return opened()


def _sources(task: TaskSpec, given: SpecLike, store: Path) -> dict[str, str]:
    """Where the run's kernel and spec are, for the record (a resumed run loads them back); a
    spec built in Python is written out beside the store so that the run can be resumed from
    the command line too."""
    if isinstance(given, TaskSpec):
        return {"kernel": str(task.source_path), "spec": str(_spec_file(task, store)[0])}
    return {"kernel": str(given), "spec": str(task.spec_path)}


def _spec_file(task: TaskSpec, store: Path) -> tuple[Path, str]:
    """Where a spec built in Python is kept beside the store, and its text."""
    text = toml_text(spec_tables(task))
    return store.parent / "specs" / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.toml", text


def _write_spec(task: TaskSpec, store: Path) -> None:
    path, text = _spec_file(task, store)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _resumed(db: Store, wanted: str) -> tuple[str, dict[str, Any]]:
    run = db.resolve(wanted)
    if run.status == "done":
        raise InputError(f"run {run.id} is already done; see `pragma-ncu trace {run.id}`")
    return run.id, run.config


def resumed_pool(config: dict[str, Any], given: PoolRequest | None,
                 progress: Notice) -> PoolRequest | None:
    """The workers a resumed run measures on: those given now, whole, when any pool option
    is given (they replace the run's); else those the run was started with. Says which."""
    stored = PoolRequest.from_json(config.get("pool"))
    if given is not None and given.wanted:
        if stored.wanted and stored != given:
            progress(f"pool: {given.options()} as given, instead of the run's "
                     f"{stored.options()}")
        return given
    if stored.wanted:
        progress(f"pool: the run's {stored.options()} (give --gpus, --workers or --ray to "
                 "change it)")
        return stored
    return given


def run_log_path(store: Path, run_id: str) -> Path:
    """Where a run's log is kept: beside its run store, logs/<run id>.log."""
    return store.parent / "logs" / f"{run_id}.log"


def _run(task: TaskSpec, config: dict[str, Any], options: TuneOptions, run_id: str | None,
         start: Callable[[], Store], llm: LLMConfig | None, settings: Settings,
         progress: Progress) -> TuneResult:
    """`_loop`, with everything the package logs meanwhile kept in the run's log file (what
    came before the run had its id too; a resumed run's log goes on in the same file)."""
    run_log = RunLog()
    try:
        with captured(run_log):
            result = _loop(task, config, options, run_id, start, llm, settings, progress,
                           run_log)
    finally:
        run_log.close()
    if run_log.path is None:
        return result
    return replace(result, files={**result.files, "log": run_log.path})


def _loop(task: TaskSpec, config: dict[str, Any], options: TuneOptions, run_id: str | None,
          start: Callable[[], Store], llm: LLMConfig | None, settings: Settings,
          progress: Progress, run_log: RunLog) -> TuneResult:
    """The loop on a connected worker; `start` gives the run store once the device is open
    (the run starts there, and its log file is named). A failure marks the run failed,
    Ctrl-C interrupted: either is resumed by --resume, from its last finished round (round 0
    again when none finished)."""
    plan = options.plan(task, llm is not None, settings.jobs)
    backend, say = target_of(task), notes(progress)
    store, arch = options.store, options.arch
    begun = time.perf_counter()  # the run's time counts from here (the worker's start too)
    resuming = run_id is not None
    try:
        with connected(backend, settings, options.timeout, options.pool, say) as (runner,
                                                                                 workers):
            say(f"starting the {backend.device_word} worker")
            session = backend.open(task, settings, runner, arch=arch, pool=workers)
            db = start()
            if run_id is None:
                run_id = db.create_run(task.kernel_name, config["spec"], config,
                                       session.device)
            run_log.open(run_log_path(store, run_id))
            log.info("run %s %s", run_id, "resumed" if resuming else "started")
            log.debug("run %s: its options: %s", run_id, config)
            say(f"run {run_id} (resume with: pragma-ncu tune --resume {run_id})")
            ctx = _context(task, config, session, db, run_id, store, plan, llm, settings,
                           progress)
            ctx = replace(ctx, started=session.clock() - (time.perf_counter() - begun))
            state = loop.run(ctx, loop.load_state(ctx) if resuming else None)
    except NoGPUError as exc:
        return _without_device(task, settings, arch, exc.reason)
    except KeyboardInterrupt:
        if run_id is not None:
            db.set_run_status(run_id, "interrupted")
            log.info("run %s interrupted", run_id)
            raise TuneInterrupted(run_id) from None
        raise
    except Exception as exc:  # any failure: the run stays resumable, never "running"
        if run_id is not None:
            db.set_run_status(run_id, "failed", {"error": str(exc) if isinstance(
                exc, PragmaError) else f"{type(exc).__name__}: {exc}"})
            # the command says the error; the log keeps where it came from
            log.info("run %s failed", run_id, exc_info=True)
        raise
    summary = loop.summary(ctx, state)
    db.set_run_status(run_id, "done", summary)
    log.info("run %s done: %s", run_id, summary.get("stop_reason", ""))
    log.debug("run %s: its summary: %s", run_id, summary)
    written = loop.write_best(ctx, state, ctx.run_dir)
    return TuneResult(run_id, summary, tuple(state.records), written)


def _without_device(task: TaskSpec, settings: Settings, arch: str | None,
                    reason: str) -> TuneResult:
    """What can be checked without the device, or the target's own error when nothing can."""
    backend = target_of(task)
    try:
        message = backend.without_device(task, settings, arch)
    except KernelFailure as exc:  # bad input or the environment keep their own kind
        raise DeviceCheckError(reason, str(exc)) from None
    if message is None:
        raise backend.no_device(reason)
    return TuneResult(None, no_device=reason, message=message)


def _context(task: TaskSpec, config: dict[str, Any], session: Session, db: Store, run_id: str,
             store: Path, options: loop.RunPlan, llm: LLMConfig | None,
             settings: Settings, progress: Progress) -> loop.Context:
    """The run's fixed part: the spec with the tables its variants are laid over and the text
    the coder is shown (the spec file's own, as written)."""
    text = Path(config["spec"]).read_text()
    tables = tomllib.loads(text)
    run_dir = store.parent / "runs" / run_id
    coder = None
    if llm is not None:
        coder = LLMCoder(LLMClient(llm), loop.variant_checker(task, tables, run_dir, session))
    return loop.Context(task, tables, text, session, load_compendium(settings), db, run_id,
                        run_dir, options, coder, llm.model if llm else "none",
                        notes(progress), progress)
