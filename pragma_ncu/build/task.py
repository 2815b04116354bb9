"""From a spec to work orders: the build request of a kernel and the evaluation request of a
built kernel at one shape. Shared by `bench`, the search and the tune loop."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.build.compile import BuildRequest, BuildResult
from pragma_ncu.infra import sources
from pragma_ncu.infra.errors import SpecError
from pragma_ncu.spec import template as template
from pragma_ncu.spec.model import ParamValue, ResolvedTask, TaskSpec
from pragma_ncu.worker.protocol import (
    CheckConfig,
    EvalRequest,
    KernelRef,
    ReferenceSpec,
    TimingConfig,
)


def read_source(spec: TaskSpec) -> str:
    """The text of `spec`'s kernel file, every byte kept (see `sources`)."""
    if not spec.source_path.is_file():
        raise SpecError(str(spec.spec_path), "kernel.source",
                        "an existing .cu (or .cu.j2) file", str(spec.source_path))
    return sources.read(spec.source_path)


def build_request(spec: TaskSpec, arch: str, params: dict[str, ParamValue] | None = None,
                  source: str | None = None, render_dir: Path | None = None) -> BuildRequest:
    """The nvcc job for `spec`'s kernel at `params` (defaults where not given): macros, flags,
    and the template instantiated (see `spec.template`).

    A rendered jinja2 template is written under `render_dir` (content-addressed) so that the
    line table, ncu's source view and compiler messages point at a file that exists.
    """
    values = {**spec.default_params(), **(params or {})}
    text = read_source(spec) if source is None else source
    inst = template.instantiate(spec, values, text)
    source_name = str(spec.source_path)
    if inst.rendered and render_dir is not None:
        source_name = str(_write_rendered(inst.text, spec, render_dir))
    return BuildRequest(
        source=inst.text, source_name=source_name, kernel_name=spec.kernel_name,
        arch=arch, flags=spec.compile_flags(values),
        defines=tuple((k, template.define_value(v))
                      for k, v in sorted(template.macro_params(spec, values, text).items())),
        include_dirs=(str(spec.source_path.parent),) if inst.rendered else (),
    )


def _write_rendered(text: str, spec: TaskSpec, render_dir: Path) -> Path:
    path = render_dir / sources.digest(text)[:16] / spec.source_path.name.removesuffix(".j2")
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        sources.write(path, text)
    return path


def kernel_ref(built: BuildResult, task: ResolvedTask) -> KernelRef:
    assert built.cubin_path is not None and built.symbol is not None
    return KernelRef(built.cubin_path, built.symbol, task.launch)


def reference_spec(spec: TaskSpec, original: KernelRef | None) -> ReferenceSpec:
    """The spec's reference function (its kind is its library: numpy, torch or cupy), or else
    the original kernel (`original`) itself."""
    if spec.reference.function:
        base = spec.reference.base_dir or spec.spec_path.parent
        return ReferenceSpec(spec.reference.library, spec.reference.function,
                             str(Path(base).resolve()))
    return ReferenceSpec("kernel", kernel=original)


def check_config(spec: TaskSpec, task: ResolvedTask, seeds: tuple[int, ...]) -> CheckConfig:
    from pragma_ncu.spec import dtypes

    tolerances = []
    for a in task.args:
        if a.role in ("output", "inout"):
            dtype = dtypes.lookup(a.dtype)
            assert dtype is not None
            atol, rtol = spec.tolerance.for_dtype(dtype)
            tolerances.append((a.name, atol, rtol))
    return CheckConfig(seeds, tuple(tolerances), spec.tolerance.max_bad_fraction)


def eval_request(spec: TaskSpec, task: ResolvedTask, built: BuildResult,
                 harness: BuildResult | None, original: KernelRef | None = None,
                 seeds: tuple[int, ...] = (1, 2),
                 timing: TimingConfig | None = None) -> EvalRequest:
    """Verify-and-time order for one built candidate at one resolved shape (`harness` is the
    GPU's helper cubin; None for a CPU kernel, which needs none)."""
    candidate = kernel_ref(built, task)
    assert harness is None or harness.cubin_path is not None
    return EvalRequest(
        harness=harness.cubin_path or "" if harness is not None else "", candidate=candidate,
        task=task,
        reference=reference_spec(spec, original or candidate),
        check=check_config(spec, task, seeds), timing=timing,
    )
