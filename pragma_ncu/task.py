"""From a spec to work orders: the build request of a kernel and the evaluation request of a
built kernel at one shape. Shared by `bench`, the tuner and the tune loop."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pragma_ncu.build import BuildCache, BuildRequest, BuildResult, build_many
from pragma_ncu.errors import SpecError
from pragma_ncu.settings import Settings
from pragma_ncu.spec import ParamValue, ResolvedTask, TaskSpec
from pragma_ncu.toolchain import NvccInfo
from pragma_ncu.worker.protocol import (
    CheckConfig,
    EvalRequest,
    KernelRef,
    ReferenceSpec,
    TimingConfig,
)

HARNESS_ENTRY = "copy_vec16"


def define_value(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def build_request(spec: TaskSpec, arch: str, params: dict[str, ParamValue] | None = None,
                  source: str | None = None) -> BuildRequest:
    """The nvcc job for `spec`'s kernel with `params` (defaults where not given) as macros."""
    values = {**spec.default_params(), **(params or {})}
    if source is None:
        if not spec.source_path.is_file():
            raise SpecError(str(spec.spec_path), "kernel.source",
                            "an existing .cu file", str(spec.source_path))
        source = spec.source_path.read_text()
    return BuildRequest(
        source=source, source_name=str(spec.source_path), kernel_name=spec.kernel_name,
        arch=arch, flags=spec.flags,
        defines=tuple((k, define_value(v)) for k, v in sorted(values.items())),
    )


def harness_request(arch: str) -> BuildRequest:
    text = resources.files("pragma_ncu.worker").joinpath("harness.cu").read_text()
    return BuildRequest(source=text, source_name="harness.cu", kernel_name=HARNESS_ENTRY,
                        arch=arch, lineinfo=False)


def build_with_harness(spec: TaskSpec, arch: str, nvcc: NvccInfo, settings: Settings,
                       params: dict[str, ParamValue] | None = None) -> tuple[BuildResult,
                                                                            BuildResult]:
    """Compile the kernel and the harness for `arch`, in parallel; (kernel, harness)."""
    cache = BuildCache(settings.cache_dir / "build")
    kernel, harness = build_many([build_request(spec, arch, params), harness_request(arch)],
                                 nvcc, cache, settings.jobs)
    if not harness.ok:
        raise RuntimeError(f"the bundled harness failed to compile for {arch}:\n{harness.log}")
    return kernel, harness


def kernel_ref(built: BuildResult, task: ResolvedTask) -> KernelRef:
    assert built.cubin_path is not None and built.symbol is not None
    return KernelRef(built.cubin_path, built.symbol, task.launch)


def reference_spec(spec: TaskSpec, original: KernelRef | None) -> ReferenceSpec:
    """The spec's NumPy reference, or else the original kernel (`original`) itself."""
    if spec.reference.function:
        base = spec.reference.base_dir or spec.spec_path.parent
        return ReferenceSpec("numpy", spec.reference.function, str(Path(base).resolve()))
    return ReferenceSpec("kernel", kernel=original)


def check_config(spec: TaskSpec, task: ResolvedTask, seeds: tuple[int, ...]) -> CheckConfig:
    from pragma_ncu import dtypes

    tolerances = []
    for a in task.args:
        if a.role in ("output", "inout"):
            dtype = dtypes.lookup(a.dtype)
            assert dtype is not None
            atol, rtol = spec.tolerance.for_dtype(dtype)
            tolerances.append((a.name, atol, rtol))
    return CheckConfig(seeds, tuple(tolerances), spec.tolerance.max_bad_fraction)


def eval_request(spec: TaskSpec, task: ResolvedTask, built: BuildResult, harness: BuildResult,
                 original: KernelRef | None = None, seeds: tuple[int, ...] = (1, 2),
                 timing: TimingConfig | None = None) -> EvalRequest:
    """Verify-and-time order for one built candidate at one resolved shape."""
    candidate = kernel_ref(built, task)
    assert harness.cubin_path is not None
    return EvalRequest(
        harness=harness.cubin_path, candidate=candidate, task=task,
        reference=reference_spec(spec, original or candidate),
        check=check_config(spec, task, seeds), timing=timing,
    )

