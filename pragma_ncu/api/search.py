"""`autotune` as a library call: the parameter search on the spec's target, one worker or a
pool, its results written where asked."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pragma_ncu.api.arguments import check_fields, checked
from pragma_ncu.api.common import (
    SpecLike,
    connected,
    load,
    settings_or_default,
    shapes_of,
    target_of,
)
from pragma_ncu.backends.base import PoolRequest, Session, UsageError
from pragma_ncu.infra.bounds import Count, Seconds, Seed
from pragma_ncu.infra.errors import InputError, NoGPUError
from pragma_ncu.infra.progress import Progress, logged, notes
from pragma_ncu.infra.settings import Settings
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.search import autotune as search
from pragma_ncu.search import table as tables
from pragma_ncu.search import vllm_table
from pragma_ncu.search.cache import MeasurementCache, cached, fingerprint, measuring_code
from pragma_ncu.search.output import (
    OWN_LAYOUT,
    TableFormat,
    table_roles,
    write_results,
    write_table,
)
from pragma_ncu.search.results import Budget, CacheUse, SearchResult
from pragma_ncu.spec.model import ParamValue, Shape, TaskSpec


class AutotuneInterrupted(KeyboardInterrupt):
    """An autotune interrupted (Ctrl-C) with the measurement cache on: what it measured is in
    `cache`, and the same call resumes from it."""

    def __init__(self, cache: Path, measured: int) -> None:
        self.cache, self.measured = cache, measured
        super().__init__(str(cache))


@dataclass(frozen=True)
class ShapesResult:
    """`autotune_shapes`: each shape's search, and the config table files they were all added
    to (one in this tool's layout; in vLLM's, one per combination of the fixed dims)."""

    results: tuple[SearchResult, ...]
    tables: tuple[Path, ...] = ()

    @property
    def table(self) -> Path | None:
        return self.tables[0] if self.tables else None


@checked
def default_out(spec: TaskSpec) -> Path:
    """Where the command writes a search's results: pragma-ncu-autotune/<kernel file stem>."""
    return Path("pragma-ncu-autotune") / spec.source_path.name.split(".")[0]


@dataclass(frozen=True)
class AutotuneOptions:
    """How `autotune` (and `autotune_shapes`) searches: the shapes timed (all of the spec's by
    default; the others are then verified only, or ad hoc as "T=4096,d=11008"), the strategy
    (search.strategies.choices()), the budget in points and seconds, the top `top_k`
    re-tested over `rounds`, the sampler's seed, the configuration to beat (`incumbent`, the
    spec's defaults unless given), the arch, a measurement's timeout, where the results and
    config tables go (`out`, `configs`, `config_format`), the pool of workers, and the
    measurement cache (`cache`: a SQLite file, the CLI's default the run store; None: every
    point measured afresh, nothing kept)."""

    shapes: Sequence[str | Shape] = ()
    strategy: str = "auto"
    budget: Count = 200
    time_budget: Seconds | None = None
    top_k: Count = 5
    rounds: Count = 2
    seed: Seed = 0
    incumbent: dict[str, ParamValue] | None = None
    arch: str | None = None
    timeout: Seconds = 60.0
    out: Path | None = None
    configs: Path | None = None
    config_format: TableFormat = OWN_LAYOUT
    pool: PoolRequest | None = None
    cache: Path | None = None

    def __post_init__(self) -> None:
        check_fields(self)


@checked
def autotune(spec: SpecLike, options: AutotuneOptions | None = None, *,
             settings: Settings | None = None, progress: Progress | None = None
             ) -> SearchResult:
    """Search the parameters `spec` declares inside the device's limits (docs/tuner.md):
    every point verified at every shape, timed at `options.shapes`, the top candidates
    re-tested, a winner only beyond the noise. With `options.out`, writes the instantiated
    best kernel, results.json, evaluations.jsonl and the config table (under `configs`,
    default out/configs, in the layout `config_format` names) and lists them in
    `SearchResult.files`. `progress` hears each step's line, and the search and the re-test
    as phases (points done of how many, the best so far, each worker's count:
    pragma_ncu.infra.progress)."""
    options = options or AutotuneOptions()
    task, chosen, (result,) = _searched(spec, options, settings, progress, per_shape=False)
    if options.out is None:
        return result
    written = write_results(result, task, options.out, chosen, options.configs,
                            options.config_format)
    return replace(result, files=tuple((k, str(v)) for k, v in written.items()))


@checked
def autotune_shapes(spec: SpecLike, options: AutotuneOptions | None = None, *,
                    settings: Settings | None = None, progress: Progress | None = None
                    ) -> ShapesResult:
    """`autotune` of each shape on its own (a configuration per shape; with a pool the shapes
    are spread over its workers). With `options.out`, each shape's results go to out/<shape>
    and every winner to the config table (under `configs`, default out/configs, in the
    layout `config_format` names)."""
    options = options or AutotuneOptions()
    task, chosen, results = _searched(spec, options, settings, progress, per_shape=True)
    if options.out is None:
        return ShapesResult(tuple(results))
    folder = options.configs or options.out / "configs"
    written = [replace(r, files=tuple((k, str(v)) for k, v in write_results(
        r, task, options.out / _safe(r.shapes[0]), chosen, folder,
        options.config_format).items())) for r in results]
    return ShapesResult(tuple(written), tuple(write_table(results, task, folder, chosen,
                                                          options.config_format)))


@checked
def convert_table(table: Path, *, to: str = "vllm", batch_dim: str | None = None,
                  out: Path | None = None, dtype: str | None = None,
                  block_shape: tuple[int, int] | None = None,
                  dim_map: tuple[tuple[str, str], ...] = (),
                  triton_version: str | None = None) -> dict[str, Path]:
    """Write the config table file `table` (this tool's layout) in the layout of the engine
    `to` ("vllm" or "sglang": one file per combination of the fixed dims, keyed by `batch_dim`,
    by default the one dim its shapes vary in, named as the engine's loader asks: `dtype` and
    `block_shape` selectors, the engine's names for the fixed dims by `dim_map`, SGLang's
    configs/triton_<`triton_version`>/ folder) under `out` (default: the table's own folder);
    the files written, by role. Files already there keep the batch sizes the table does not
    give."""
    if to not in vllm_table.ENGINES:
        raise UsageError(f"--to {to}: a table is written in an engine's layout "
                         f"({', '.join(vllm_table.ENGINES)})", option="--to")
    loaded = tables.load_table(table)
    fmt = _engine_format(to, batch_dim, dtype, block_shape, dim_map, triton_version)
    try:
        batch = vllm_table.batch_dim([e.dims for e in loaded.configs.values()], batch_dim)
    except tables.TableError as exc:
        raise UsageError(str(exc), option="--batch-dim") from None
    try:
        files = vllm_table.from_table(loaded, batch, fmt.naming())
    except vllm_table.NamingError as exc:
        raise UsageError(str(exc), option=exc.option) from None
    return table_roles(vllm_table.write(out or Path(table).parent, files))


def _engine_format(layout: str, batch_dim: str | None, dtype: str | None,
                   block_shape: tuple[int, int] | None, dim_map: tuple[tuple[str, str], ...],
                   triton_version: str | None) -> TableFormat:
    """The engine layout asked for, its options checked (UsageError naming the option)."""
    try:
        return TableFormat(layout, batch_dim, dtype, block_shape, dim_map, triton_version)
    except vllm_table.NamingError as exc:
        raise UsageError(str(exc), option=exc.option) from None


def _searched(spec: SpecLike, options: AutotuneOptions, settings: Settings | None,
              progress: Progress | None, per_shape: bool
              ) -> tuple[TaskSpec, list[Shape], list[SearchResult]]:
    """The spec, the shapes timed and the results: one search of them all, or one per shape,
    on the target's session (with the device and the ceilings each result stands on)."""
    task, settings, chosen, checks, search_options = _plan(spec, settings, options)
    progress = logged(progress)
    store: MeasurementCache | None = None
    try:
        with _session(task, settings, options, progress) as (session, _):
            if options.cache is not None:  # opened once a worker runs: no file without one
                store = MeasurementCache(options.cache)
            evaluator = cached(session.evaluator(task), store, _context(task, session))
            say = notes(progress)
            if per_shape:
                found = search.autotune_shapes(task, chosen, evaluator, search_options,
                                               check_shapes=checks,
                                               incumbent=options.incumbent,
                                               progress=progress, notice=say)
            else:
                found = [search.autotune(task, chosen, evaluator, search_options,
                                         check_shapes=checks, incumbent=options.incumbent,
                                         progress=progress, notice=say)]
            use = None if store is None else CacheUse(
                str(store.path), store.counts.reused, store.counts.measured)
            return task, chosen, [replace(_on(r, session), cache=use) for r in found]
    except KeyboardInterrupt:
        if store is not None:
            raise AutotuneInterrupted(store.path, store.counts.measured) from None
        raise
    finally:
        if store is not None:
            store.close()


def _context(task: TaskSpec, session: Session) -> dict[str, str]:
    """What decides a measurement beyond its build, shape and phase (search/cache.py): the
    device, the spec's bytes, the reference's, the code that measures."""
    ref = task.reference
    if ref.function and ":" in ref.function and ref.function.split(":")[0].endswith(".py"):
        path = Path(ref.base_dir or task.spec_path.parent) / ref.function.split(":")[0]
        reference = _bytes(path) + ref.function.encode()
    else:
        reference = (ref.function or "").encode() + _bytes(task.source_path)
    return {"device": session.identity or session.device, "tool": measuring_code(),
            "spec": fingerprint(_bytes(task.spec_path)),
            "reference": fingerprint(ref.library, reference)}


def _bytes(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return str(path).encode()


def _plan(spec: SpecLike, settings: Settings | None, options: AutotuneOptions
          ) -> tuple[TaskSpec, Settings, list[Shape], list[Shape], search.SearchOptions]:
    """The spec, the settings, the shapes timed, the shapes only verified, the search's
    options; a bad shape, a spec with nothing to search or an engine's table without a batch
    dim (or with fixed dims the engine cannot name) fails here, before a worker starts or
    anything compiles."""
    task, settings = load(spec), settings_or_default(settings)
    chosen = shapes_of(task, options.shapes)
    names = {s.name for s in chosen}
    checks = [s for s in task.shapes if s.name not in names] if options.shapes else []
    if not any(p.values for p in task.params):
        raise InputError(f"{task.spec_path} declares no parameter with candidate values "
                          "([params] NAME = {default = ..., values = [...]})")
    search.resolvable(task, (*chosen, *checks))
    if options.config_format.layout != "pragma":
        try:
            options.config_format.batch(task, chosen)
        except tables.TableError as exc:
            option = exc.option if isinstance(exc, vllm_table.NamingError) else "--batch-dim"
            raise UsageError(str(exc), option=option) from None
    return task, settings, chosen, checks, search.SearchOptions(
        strategy=options.strategy, budget=Budget(options.budget, options.time_budget),
        top_k=options.top_k, rounds=options.rounds, seed=options.seed, jobs=settings.jobs)


@contextlib.contextmanager
def _session(task: TaskSpec, settings: Settings, options: AutotuneOptions,
             progress: Progress | None) -> Iterator[tuple[Session, WorkerPool | None]]:
    """The target's session on its worker (or pool), closed after; a worker that does not
    start is the target's no-device error."""
    target, say = target_of(task), notes(progress)
    try:
        with connected(target, settings, options.timeout, options.pool, say) as (runner,
                                                                                  workers):
            say(f"starting the {target.device_word} worker")
            yield target.open(task, settings, runner, arch=options.arch, pool=workers,
                              notice=say), workers
    except NoGPUError as exc:
        raise target.no_device(exc.reason) from None


def _on(result: SearchResult, session: Session) -> SearchResult:
    """The result with the device it ran on and the ceilings its roofline stands on."""
    return replace(result, device=session.device, ceiling_gbps=session.ceiling_gbps,
                   compute=session.compute)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
