"""`bench`, `profile`, `explain` and `init` as library calls."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pragma_ncu import backends
from pragma_ncu.api.application import (
    SOURCE_SUFFIXES,
    Application,
    explain_application,
    matches,
    no_match,
)
from pragma_ncu.api.arguments import checked
from pragma_ncu.api.common import (
    SpecLike,
    load,
    open_pool,
    settings_or_default,
    shapes_of,
    target_of,
)
from pragma_ncu.backends.base import PoolRequest, ProfileOptions
from pragma_ncu.backends.results import BenchReport, ProfileRun
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.draft import Draft, draft_spec, write_draft
from pragma_ncu.infra.bounds import Milliseconds, Positive, Seconds
from pragma_ncu.infra.errors import KernelFailure, NoGPUError
from pragma_ncu.infra.progress import Progress, logged, notes
from pragma_ncu.infra.settings import Settings
from pragma_ncu.knowledge.compendium import load_compendium
from pragma_ncu.measure.ceilings import (
    cached_compute_for_device,
    cached_for_device,
)
from pragma_ncu.pool.runner import Runner
from pragma_ncu.profile.launches import Launches
from pragma_ncu.profile.profiles import KernelProfile, Profile
from pragma_ncu.profile.read import read_launches
from pragma_ncu.spec.model import ParamValue, Shape, source_suffixes
from pragma_ncu.triage.load import demangled
from pragma_ncu.worker.protocol import TimingConfig


@checked
def bench(spec: SpecLike, *, shapes: Sequence[str | Shape] = (),
          params: dict[str, ParamValue] | None = None, arch: str | None = None,
          timeout: Seconds = 60.0, budget_ms: Milliseconds = 100.0,
          pool: PoolRequest | None = None,
          settings: Settings | None = None, progress: Progress | None = None
          ) -> BenchReport:
    """Build once, then verify and time the kernel at each of `shapes` (all of the spec's by
    default), spread over a pool's workers when one is asked for. Without a GPU the report
    says so (`device` None, `no_device_reason`) after compiling."""
    task, settings = load(spec), settings_or_default(settings)
    chosen = shapes_of(task, shapes)
    target, say = target_of(task), notes(logged(progress))
    try:
        workers = open_pool(target, settings, timeout, pool, say)
    except NoGPUError:
        workers = None  # bench then compiles and says there is no GPU
    try:
        with (contextlib.nullcontext(cast(Runner, workers.primary.runner)) if workers
              else target.runner(settings, timeout)) as runner:
            return target.bench(task, chosen, settings, runner, params=params, arch=arch,
                                timing=TimingConfig(budget_ms=budget_ms), progress=say,
                                pool=workers)
    finally:
        if workers is not None:
            workers.close()


@checked
def profile(spec: SpecLike, *, shape: str | Shape | None = None,
            options: ProfileOptions | None = None, settings: Settings | None = None,
            progress: Progress | None = None) -> ProfileRun:
    """Verify, time and profile the kernel at one shape (the spec's first by default) with its
    target's collector: ncu for CUDA (the .ncu-rep and ncu's log beside the profile.json),
    perf or cachegrind for C/C++. A failed step is the run's `problem`."""
    task, settings = load(spec), settings_or_default(settings)
    chosen = shapes_of(task, [shape] if shape else None)[0]
    return target_of(task).profile(task, chosen, settings, options or ProfileOptions(),
                                   notes(logged(progress)))


@dataclass(frozen=True)
class Explanation:
    """What `explain` found: the profile read (or taken now), and each kernel's diagnosis.
    For a report of more than one launch, `application` groups them by kernel and ranks the
    groups by what reaching their roofline would save; `kernels` then holds each group's
    median launch (complete) with its diagnosis, in that order, while the profile's kernels
    may carry only the few metrics grouping reads (pragma_ncu.profile.launches)."""

    profile: Profile
    kernels: tuple[tuple[KernelProfile, Diagnosis], ...]
    application: Application | None = None

    @property
    def diagnoses(self) -> list[Diagnosis]:
        return [d for _, d in self.kernels]


@checked
def explain(report: str | Path | Profile, *, kernel: str | None = None, reader: str = "auto",
            ceiling_gbps: Positive | None = None, spec: Path | None = None,
            shape: str | None = None, options: ProfileOptions | None = None,
            settings: Settings | None = None, progress: Progress | None = None,
            sources: Sequence[Path] = (), kernel_name: str | None = None) -> Explanation:
    """What limits each kernel of `report` (a Profile, a .ncu-rep, a profile.json, a folder of
    ncu CSV pages, or a kernel source profiled now), ranked by evidence, by the rules of the
    collector that measured it. `kernel` keeps the kernels of that name (or part of it). A
    report of many launches is explained as an application (see `Explanation`); `sources`
    (files, or folders searched recursively; default: the .cu files beside the report) are
    where its kernels may be defined, to say how to hand one to `init` and `tune`.
    `kernel_name` profiles that kernel of a source in place of its spec's. `ceiling_gbps`,
    where given, is a finite number of GB/s above 0 (its annotation's bound)."""
    settings = settings_or_default(settings)
    launches = Launches.of(report) if isinstance(report, Profile) else _launches_of(
        Path(report), reader, spec, shape, options, settings, progress, kernel_name)
    found = launches.profile
    diagnose = _diagnoser(found, settings, ceiling_gbps)
    if len(found.kernels) > 1:
        roots = list(sources) or _beside(report)
        app = explain_application(launches, diagnose, kernel, roots)
        return Explanation(found, tuple((g.kernel, g.diagnosis) for g in app.groups), app)
    chosen = launches.full([k.index for k in _select(found, kernel)])
    return Explanation(found, tuple((k, diagnose(k)) for k in chosen.values()))


def _diagnoser(found: Profile, settings: Settings, ceiling_gbps: float | None
               ) -> Callable[[KernelProfile], Diagnosis]:
    """A kernel's diagnosis by its collector's rules, with the ceilings found once: the one
    given, the one the profile recorded, else those this machine measured on the same GPU."""
    knowledge = load_compendium(settings)
    device = _device_name(list(found.kernels))
    copy = cached_for_device(settings.cache_dir / "ceilings.json", device) if device else None
    compute = cached_compute_for_device(settings.cache_dir / "compute_ceilings.json",
                                        device) if device else None
    ceiling = ceiling_gbps or found.collection.get("ceiling_gbps") or (copy.gbps if copy
                                                                        else None)
    return lambda k: backends.diagnose_in(found, k, knowledge, ceiling,
                                          compute.per_second if compute else None)


def _beside(report: str | Path | Profile) -> list[Path]:
    """The CUDA sources beside a report (not below it: an application's build folder)."""
    if isinstance(report, Profile):
        return []
    path = Path(report)
    folder = path if path.is_dir() else path.parent
    return sorted(p for p in folder.glob("*") if p.suffix in SOURCE_SUFFIXES)


def _launches_of(path: Path, reader: str, spec: Path | None, shape: str | None,
                 options: ProfileOptions | None, settings: Settings,
                 progress: Progress | None, kernel_name: str | None = None) -> Launches:
    """A kernel source is profiled now; a report's launches are read light (every launch's
    names, duration and launch configuration; full profiles only of those diagnosed)."""
    if path.suffix in source_suffixes():
        run = profile(load(path, spec, kernel_name), shape=shape, options=options,
                      settings=settings, progress=progress)
        if run.profile is None:
            kind = run.failure_kind()
            raise (kind or KernelFailure)(f"cannot explain {path.name}: {run.problem}")
        return Launches.of(run.profile)
    return demangled(read_launches(path, settings, reader), settings)[0]


def _select(found: Profile, name: str | None) -> list[KernelProfile]:
    if name is None:
        return list(found.kernels)
    chosen = [k for k in found.kernels if matches(k, name)]
    if not chosen:
        raise no_match(name, [k.name for k in found.kernels])
    return chosen


def _device_name(kernels: list[KernelProfile]) -> str | None:
    """The report's GPU, to look up ceilings this machine measured on one like it."""
    names = {str(k.metrics["device__attribute_display_name"].value) for k in kernels
             if "device__attribute_display_name" in k.metrics}
    return names.pop() if len(names) == 1 else None


@dataclass(frozen=True)
class Initialized:
    """What `init` drafted, and the files it wrote."""

    draft: Draft
    written: tuple[Path, ...]


@checked
def init(kernel: str | Path, *, name: str | None = None, spec_path: Path | None = None,
         reference: str | None = "numpy", force: bool = False) -> Initialized:
    """Draft the spec of `kernel` (one of its kernels, `name`) and a reference stub in
    `reference`'s library (None: the kernel is its own reference), and write them (never over
    existing files unless `force`)."""
    draft = draft_spec(Path(kernel), name, spec_path, reference)
    return Initialized(draft, write_draft(draft, force))
