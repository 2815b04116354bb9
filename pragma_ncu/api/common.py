"""What every API function does first: settings, the spec (a TaskSpec, a kernel file, or a
.toml spec), its shapes, its target, and the worker (or pool of workers) to run it on."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import cast

from pragma_ncu import backends
from pragma_ncu.api.arguments import checked
from pragma_ncu.backends.base import PoolRequest, Target, UsageError
from pragma_ncu.infra import sources
from pragma_ncu.infra.errors import SpecError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.infra.settings import Settings, load_settings
from pragma_ncu.pool.runner import Runner
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.spec.file import check_shapes, load_spec, spec_path_for
from pragma_ncu.spec.model import Shape, TaskSpec
from pragma_ncu.worker.reference import check_reference

SpecLike = TaskSpec | str | Path  # a spec, a kernel file (its spec beside it), a .toml spec


def settings_or_default(settings: Settings | None) -> Settings:
    return settings if settings is not None else load_settings()


@checked
def configured_columns(*, settings: Settings | None = None) -> int | None:
    """The text width the settings ask for ($COLUMNS, where set to a positive number), None
    where they leave it to the terminal."""
    return settings_or_default(settings).columns


@checked
def load(spec: SpecLike, spec_path: Path | None = None,
         kernel_name: str | None = None) -> TaskSpec:
    """The TaskSpec of `spec`: itself, the spec of a kernel file (`spec_path`, or the .toml
    beside it), or a .toml spec (naming its kernel); `kernel_name` in place of the spec's
    kernel (one spec serves the variants of a kernel in other files); its source checked to
    define its kernel (KernelNotFound, which names the file's one kernel of the spec's
    signature where there is one) and its reference function to answer for its inputs (a
    ReferenceCheckError: `worker.reference.check_reference`), before anything is built or a
    run is stored."""
    task = _loaded(spec, spec_path)
    if kernel_name:
        task = replace(task, kernel_name=kernel_name)
    target_of(task).check_kernel(task)
    _reference_checked(task)
    return task


_CHECKED: set[tuple[TaskSpec, tuple[int, int] | None]] = set()


def _reference_checked(task: TaskSpec) -> None:
    """`check_reference`, once per spec and state of its reference file in this process (a
    command and the API call it makes both load the spec)."""
    if not task.reference.function:
        return
    target = task.reference.function.split(":")[0]
    path = Path(task.reference.base_dir or task.spec_path.parent) / target
    try:
        stat: tuple[int, int] | None = (path.stat().st_mtime_ns, path.stat().st_size)
    except OSError:
        stat = None
    key = (task, stat)
    if key not in _CHECKED:
        check_reference(task)
        _CHECKED.add(key)


def _loaded(spec: SpecLike, spec_path: Path | None) -> TaskSpec:
    if isinstance(spec, TaskSpec):
        return spec
    path = Path(spec)
    if path.suffix == ".toml":
        return load_spec(path)
    sources.require_file(path)
    return load_spec(spec_path or spec_path_for(path), path)


@checked
def shapes_of(spec: TaskSpec, wanted: Sequence[str | Shape] | None = None) -> list[Shape]:
    """Shapes by name, as Shape objects, or ad hoc as 'T=4096,d=11008'; all of the spec's when
    none are named (UsageError for `--shape` otherwise)."""
    if not wanted:
        return list(spec.shapes)
    chosen = [item if isinstance(item, Shape) else _shape(spec, item) for item in wanted]
    check_shapes(spec, [s for s in chosen if s not in spec.shapes])  # a shape made here
    return chosen


def _shape(spec: TaskSpec, item: str) -> Shape:
    if "=" in item:
        try:
            dims = tuple((k.strip(), int(v)) for k, v in
                         (part.split("=") for part in item.split(",")))
        except ValueError:
            raise UsageError(f"{item!r}: expected NAME=INT[,NAME=INT...]",
                             option="--shape") from None
        return Shape(item, dims)
    try:
        return spec.shape_named(item)
    except SpecError as exc:
        raise UsageError(str(exc), option="--shape") from None


def open_pool(target: Target, settings: Settings, timeout_s: float,
              request: PoolRequest | None, notice: Notice) -> WorkerPool | None:
    """The started pool `request` asks for, or None for the usual single worker (a host
    without the devices is a NoGPUError or a PoolError)."""
    if request is None or not request.wanted:
        return None
    slots, make = target.pool_slots(request, settings, timeout_s)
    notice(f"starting {len(slots)} workers" + (" through Ray" if request.ray else ""))
    return WorkerPool(slots, make, notice=notice).start()


@contextlib.contextmanager
def connected(target: Target, settings: Settings, timeout_s: float,
              request: PoolRequest | None, notice: Notice
              ) -> Iterator[tuple[Runner, WorkerPool | None]]:
    """The runner to work with, and the pool when one was asked for (its primary's runner:
    a Ray actor's runner has the Runner's interface); everything closed after."""
    pool = open_pool(target, settings, timeout_s, request, notice)
    try:
        if pool is not None:
            yield cast(Runner, pool.primary.runner), pool
        else:
            with target.runner(settings, timeout_s) as runner:
                yield runner, None
    finally:
        if pool is not None:
            pool.close()


def target_of(spec: TaskSpec) -> Target:
    return backends.target_for(spec)
