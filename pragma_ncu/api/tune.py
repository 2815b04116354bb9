"""`tune` as a library call: the closed loop on a spec, from the first round or resumed from
the run store, with the worker (or pool) started, and the no-GPU path where there is none."""

from __future__ import annotations

import contextlib
import hashlib
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pragma_ncu import loop
from pragma_ncu.api.common import (
    Progress,
    SpecLike,
    connected,
    load,
    quiet,
    settings_or_default,
    shapes_of,
    target_of,
)
from pragma_ncu.backends.base import PoolRequest, Session
from pragma_ncu.coder.llm_coder import LLMCoder
from pragma_ncu.conductor.rules import Policy
from pragma_ncu.errors import NoGPUError, PragmaError
from pragma_ncu.knowledge.compendium import load_compendium
from pragma_ncu.llm import LLMClient, LLMConfig
from pragma_ncu.records import RoundRecord
from pragma_ncu.search.autotune import SearchOptions
from pragma_ncu.search.results import Budget
from pragma_ncu.settings import Settings
from pragma_ncu.spec import Shape, TaskSpec
from pragma_ncu.specfile import spec_tables, toml_text
from pragma_ncu.store import DEFAULT_NAME, Store


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


class DeviceCheckError(PragmaError):
    """No device, and the kernel does not even compile: `reason` says why there was no
    device, the message what the compiler said."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


def llm_config(settings: Settings, model: str | None = None, base_url: str | None = None,
               timeout_s: float = 120.0) -> LLMConfig | None:
    """The coder's LLM: the model and endpoint given, else the settings'; None when there is
    no model, or neither an endpoint nor a key (the key only ever comes from settings)."""
    model = model or settings.llm_model
    base_url = base_url or settings.llm_base_url
    if not model or not (base_url or settings.llm_api_key):
        return None
    return LLMConfig(model=model, base_url=base_url, api_key=settings.llm_api_key,
                     timeout_s=timeout_s)


def tune(spec: SpecLike | None = None, *, spec_path: Path | None = None,
         shapes: Sequence[str | Shape] = (), rounds: int = 5, target: float = 0.9,
         patience: int = 2, budget: int = 200, time_budget: float | None = None,
         strategy: str = "auto", seed: int = 0, llm: LLMConfig | None = None,
         resume: str | None = None, store: Path = Path(DEFAULT_NAME), arch: str | None = None,
         timeout: float = 60.0, pool: PoolRequest | None = None,
         settings: Settings | None = None, progress: Progress = quiet) -> TuneResult:
    """Make `spec`'s kernel faster round by round (see docs/tune.md): round 0 verifies, times
    and profiles it; each round searches a variant, re-tests the winner beside the historical
    best, profiles it and lets the conductor decide. `shapes` are timed (the spec's others
    verified only); `target` is the fraction of the attainable roofline at which to stop.
    `resume` (a run id, a prefix or "last") goes on with an interrupted run of `store`, with
    its own spec and options. Without a GPU the result says so (`no_device`) and what could be
    checked. Raises TuneInterrupted on Ctrl-C (the run is marked and resumable)."""
    settings = settings_or_default(settings)
    with contextlib.closing(Store.open(store)) as db:
        run_id: str | None = None
        if resume:
            run_id, config = _resumed(db, resume)
            task = load(Path(config["kernel"]), Path(config["spec"]))
        elif spec is None:
            raise PragmaError("give a spec or a kernel file (or a run to resume)")
        else:
            task = load(spec, spec_path)
            config = _config(task, spec, shapes, rounds, target, patience, budget, time_budget,
                             strategy, seed, llm, store)
        return _run(task, config, run_id, db, store, llm, arch, timeout, pool, settings,
                    progress)


def _config(task: TaskSpec, given: SpecLike | None, shapes: Sequence[str | Shape], rounds: int,
            target: float, patience: int, budget: int, time_budget: float | None,
            strategy: str, seed: int, llm: LLMConfig | None, store: Path) -> dict[str, Any]:
    """What a run records of its options (a resumed run takes them back); a spec built in
    Python is written out beside the store so that the run can be resumed from the command
    line too."""
    tuned = [s.name for s in shapes_of(task, shapes)]
    if isinstance(given, TaskSpec):
        kernel, spec_file = str(task.source_path), str(_written(task, store))
    else:
        kernel, spec_file = str(given), str(task.spec_path)
    return {"kernel": kernel, "spec": spec_file, "shapes": tuned, "rounds": rounds,
            "target": target, "patience": patience, "budget": budget, "strategy": strategy,
            "time_budget": time_budget, "seed": seed, "llm": llm.model if llm else "none"}


def _written(task: TaskSpec, store: Path) -> Path:
    text = toml_text(spec_tables(task))
    path = store.parent / "specs" / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _resumed(db: Store, wanted: str) -> tuple[str, dict[str, Any]]:
    run = db.resolve(wanted)
    if run.status == "done":
        raise PragmaError(f"run {run.id} is already done; see `pragma-ncu trace {run.id}`")
    return run.id, run.config


def _run(task: TaskSpec, config: dict[str, Any], run_id: str | None, db: Store, store: Path,
         llm: LLMConfig | None, arch: str | None, timeout: float, pool: PoolRequest | None,
         settings: Settings, progress: Progress) -> TuneResult:
    options = loop.TuneOptions(
        tuple(config["shapes"]),
        Policy(config["rounds"], config["target"], config["patience"], llm=llm is not None,
               move_points=config["budget"]),
        SearchOptions(strategy=config["strategy"],
                      budget=Budget(config["budget"], config["time_budget"]),
                      seed=config["seed"], jobs=settings.jobs))
    backend = target_of(task)
    resuming = run_id is not None
    try:
        with connected(backend, settings, timeout, pool, progress) as (runner, workers):
            progress(f"starting the {backend.device_word} worker")
            session = backend.open(task, settings, runner, arch=arch, pool=workers)
            if run_id is None:
                run_id = db.create_run(task.kernel_name, config["spec"], config,
                                       session.device)
            progress(f"run {run_id} (resume with: pragma-ncu tune --resume {run_id})")
            ctx = _context(task, config, session, db, run_id, store, options, llm, settings,
                           progress)
            state = loop.run(ctx, loop.load_state(ctx) if resuming else None)
    except NoGPUError as exc:
        return _without_device(task, settings, arch, exc.reason)
    except KeyboardInterrupt:
        if run_id is not None:
            db.set_run_status(run_id, "interrupted")
            raise TuneInterrupted(run_id) from None
        raise
    except (PragmaError, ValueError) as exc:
        if run_id is not None:
            db.set_run_status(run_id, "failed", {"error": str(exc)})
        raise
    summary = loop.summary(ctx, state)
    db.set_run_status(run_id, "done", summary)
    written = loop.write_best(ctx, state, ctx.run_dir)
    return TuneResult(run_id, summary, tuple(state.records), written)


def _without_device(task: TaskSpec, settings: Settings, arch: str | None,
                    reason: str) -> TuneResult:
    """What can be checked without the device, or the target's own error when nothing can."""
    backend = target_of(task)
    try:
        message = backend.without_device(task, settings, arch)
    except PragmaError as exc:
        raise DeviceCheckError(reason, str(exc)) from None
    if message is None:
        raise backend.no_device(reason)
    return TuneResult(None, no_device=reason, message=message)


def _context(task: TaskSpec, config: dict[str, Any], session: Session, db: Store, run_id: str,
             store: Path, options: loop.TuneOptions, llm: LLMConfig | None,
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
                        run_dir, options, coder, llm.model if llm else "none", progress)
