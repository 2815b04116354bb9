"""One parameter search, end to end: search, re-test the top candidates, decide.

`tune_parameters` takes any `Evaluator` (the GPU, recorded measurements in tests, or a
`PooledEvaluator` over many workers); `autotune` sets up the evaluator for a spec (GPU or CPU)
and runs it; `autotune_shapes` tunes each shape on its own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from pragma_ncu import task as tasks
from pragma_ncu.backends.cpu import ceilings as peaks
from pragma_ncu.backends.cpu.evaluator import CEILING_BYTES, CpuEvaluator
from pragma_ncu.bench import measured_compute
from pragma_ncu.ceilings import ceiling_for
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.roofline import ComputeRate
from pragma_ncu.runner import Runner
from pragma_ncu.search import retest as retesting
from pragma_ncu.search.evaluator import Evaluator, GpuEvaluator, Phases
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.parallel import PooledEvaluator, run_parallel_search, summaries
from pragma_ncu.search.per_shape import tune_each_shape
from pragma_ncu.search.results import Budget, Evaluation, SearchResult, SearchStats
from pragma_ncu.search.serial import (
    Clock,
    Problem,
    Progress,
    SearchLog,
    choose_strategy,
    incumbent_point,
    run_search,
)
from pragma_ncu.search.space import Point, Space
from pragma_ncu.settings import Settings
from pragma_ncu.spec import Shape, TaskSpec
from pragma_ncu.toolchain import DEFAULT_ARCH, arch_flag, find_nvcc

Notice = Callable[[str], None]


@dataclass(frozen=True)
class SearchOptions:
    strategy: str = "auto"  # one of strategies.STRATEGIES
    budget: Budget = field(default_factory=lambda: Budget(evaluations=200, seconds=None))
    top_k: int = 5
    rounds: int = 2  # interleaved re-test rounds
    seed: int = 0
    jobs: int = 1  # parallel compiles
    phases: Phases = field(default_factory=Phases)


def tune_parameters(problem: Problem, evaluator: Evaluator, options: SearchOptions, *,
                    clock: Clock = time.perf_counter, progress: Progress | None = None,
                    notice: Notice = lambda _: None) -> SearchResult:
    """Search, re-test and decide; never raises for a candidate's failure. A
    `PooledEvaluator` searches on all its workers at once and re-tests on one."""
    start = clock()
    pooled = evaluator if isinstance(evaluator, PooledEvaluator) else None
    workers = len(pooled.pool.live) if pooled is not None else 1
    strategy = choose_strategy(options.strategy, problem, options.budget, evaluator.limits,
                               options.seed, parallel=workers > 1)
    notice(f"searching {problem.space.size} points with {strategy.name}"
           + (f" on {workers} workers" if pooled is not None else ""))
    if pooled is None:
        log = run_search(problem, evaluator, strategy, options.budget, jobs=options.jobs,
                         clock=clock, progress=progress)
    else:
        before = pooled.pool.activity()
        log = run_parallel_search(problem, pooled, strategy, options.budget,
                                  jobs=options.jobs, clock=clock, progress=progress)
    incumbent = incumbent_point(problem)
    names = [s.name for s in problem.shapes]
    points = retesting.candidates(log.evaluations, names, options.top_k, incumbent)
    on = f" on {pooled.device.label}" if pooled is not None and pooled.device else ""
    notice(f"re-testing {len(points)} candidates, {options.rounds} rounds{on}")
    t0 = clock()
    retests = retesting.retest(points, log.builds, problem.shapes, evaluator, options.rounds,
                               incumbent)
    retest_s = clock() - t0
    general = retesting.decide(retests)
    per_shape = tuple((n, retesting.decide(retests, n)) for n in names)
    stats = _stats(problem, log, retest_s, clock() - start)
    result = SearchResult(problem.spec.kernel_name, strategy.name, options.seed, tuple(names),
                          tuple(log.evaluations), tuple(retests), general, per_shape, stats)
    if pooled is None:
        return result
    return replace(result, workers=summaries(log, before, pooled.pool.activity()),
                   retest_device=pooled.device)


def _stats(problem: Problem, log: SearchLog, retest_s: float, wall_s: float) -> SearchStats:
    evs = log.evaluations
    return SearchStats(
        space_size=problem.space.size, evaluated=log.evaluated,
        verified=sum(1 for e in evs if e.ok), pruned=dict(log.pruned), failed=dict(log.failed),
        wall_s=wall_s, search_s=log.seconds, retest_s=retest_s,
        compile_s=sum(e.compile_s for e in evs), gpu_s=sum(e.gpu_s for e in evs),
        cache_hits=sum(1 for b in log.builds.values() if b.cache_hit),
        time_to_within_2pct_s=time_to_within(evs, 0.02),
    )


def time_to_within(evaluations: Sequence[Evaluation], fraction: float) -> float | None:
    """Seconds into the search at which the running best first came within `fraction` of the
    best objective the search found."""
    values = [(e.elapsed_s, e.objective) for e in evaluations if e.objective is not None]
    if not values:
        return None
    final = min(v for _, v in values)
    running = math.inf
    for elapsed, value in sorted(values):
        running = min(running, value)
        if running <= final * (1.0 + fraction):
            return elapsed
    return None


@dataclass(frozen=True)
class Setup:
    """What a search on this machine needs besides the problem: evaluators and ceilings."""

    make: Callable[[Runner], Evaluator]  # an evaluator on one worker
    device: str
    ceiling_gbps: float | None
    compute: ComputeRate | None

    def evaluator(self, runner: Runner, pool: WorkerPool | None) -> Evaluator:
        if pool is None:
            return self.make(runner)
        return PooledEvaluator(pool, lambda lane: self.make(lane.runner))  # type: ignore[arg-type]

    def finish(self, result: SearchResult) -> SearchResult:
        return replace(result, device=self.device, ceiling_gbps=self.ceiling_gbps,
                       compute=self.compute)


def autotune(spec: TaskSpec, shapes: Sequence[Shape], settings: Settings, runner: Runner,
             options: SearchOptions, *, check_shapes: Sequence[Shape] = (),
             space: Space | None = None, incumbent: Point | None = None,
             arch: str | None = None, progress: Progress | None = None,
             notice: Notice = lambda _: None, pool: WorkerPool | None = None) -> SearchResult:
    """Search `spec`'s parameters on the runner's GPU (or CPU, for a C/C++ kernel), timed at
    `shapes` and verified there and at `check_shapes`; with a `pool`, on all its workers (the
    runner is then the pool's primary)."""
    problem = Problem(spec, tuple(shapes), space or Space.from_spec(spec), incumbent or {},
                      tuple(check_shapes))
    for shape in problem.all_shapes:
        spec.resolve(shape, {})  # a bad shape fails here, before any compile
    setup = set_up(spec, settings, runner, options.phases, arch, notice)
    result = tune_parameters(problem, setup.evaluator(runner, pool), options,
                             progress=progress, notice=notice)
    return setup.finish(result)


def autotune_shapes(spec: TaskSpec, shapes: Sequence[Shape], settings: Settings, runner: Runner,
                    options: SearchOptions, *, check_shapes: Sequence[Shape] = (),
                    space: Space | None = None, incumbent: Point | None = None,
                    arch: str | None = None, notice: Notice = lambda _: None,
                    pool: WorkerPool | None = None) -> list[SearchResult]:
    """Tune each of `shapes` on its own (each timed alone, verified at `check_shapes` too);
    with a pool, the shapes are spread over its workers (see `per_shape`)."""
    space = space or Space.from_spec(spec)
    problems = [Problem(spec, (shape,), space, incumbent or {}, tuple(check_shapes))
                for shape in shapes]
    for shape in (*shapes, *check_shapes):
        spec.resolve(shape, {})
    setup = set_up(spec, settings, runner, options.phases, arch, notice)
    results = tune_each_shape(problems, setup.evaluator(runner, pool), options,
                              lambda p, e, o, n: tune_parameters(p, e, o, notice=n),
                              notice=notice)
    return [setup.finish(r) for r in results]


def set_up(spec: TaskSpec, settings: Settings, runner: Runner, phases: Phases,
           arch: str | None, notice: Notice) -> Setup:
    """Start the worker and measure its ceilings; the evaluator maker for the spec's target."""
    if spec.is_cpu:
        return _cpu_setup(spec, settings, runner, notice)
    notice("starting the GPU worker")
    device = runner.hello()
    target = arch_flag(arch) if arch else (device.arch or DEFAULT_ARCH)
    nvcc = find_nvcc(settings)
    harness = tasks.build_harness(target, nvcc, settings)
    assert harness.cubin_path is not None
    notice("copy-bandwidth ceiling")
    ceiling = ceiling_for(runner, harness.cubin_path, settings.cache_dir / "ceilings.json")
    limits = Limits.from_device(device)
    compute = None
    if spec.flops_expr:
        notice("compute ceilings")
        peak = measured_compute(runner, target, nvcc, settings)
        compute = ComputeRate(spec.compute, peak.per_second)
    return Setup(lambda r: GpuEvaluator(spec, settings, r, nvcc, target, harness, limits, phases),
                 device.name, ceiling.gbps, compute)


def _cpu_setup(spec: TaskSpec, settings: Settings, runner: Runner, notice: Notice) -> Setup:
    notice("starting the CPU worker")
    host = runner.hello()
    ceiling = ceiling_for(runner, "", settings.cache_dir / "ceilings.json", nbytes=CEILING_BYTES)
    compute = None
    if spec.flops_expr:
        notice("the CPU's compute ceiling")
        peak = peaks.compute_ceiling_for(settings, host.cache_key, host.name)
        compute = ComputeRate("fp32", peak.per_second)
    return Setup(lambda r: CpuEvaluator(spec, settings, r), f"{host.name} ({host.cores} cores)",
                 ceiling.gbps, compute)
