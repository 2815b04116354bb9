"""The loop's and the search's view of the CUDA target: nvcc, the GPU worker, ncu. With a
pool, the searches measure on all its GPUs, and re-tests, side-by-side comparisons and profiles
run on its first (the runner is then the pool's primary)."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.backends.base import CompiledSession, Notice, Profiled
from pragma_ncu.backends.cuda import build as cuda_build
from pragma_ncu.backends.cuda.ceilings import measured_compute
from pragma_ncu.backends.cuda.evaluator import GpuEvaluator
from pragma_ncu.backends.cuda.profiling import run_profile
from pragma_ncu.backends.cuda.worker import worker_command
from pragma_ncu.build.compile import BuildResult
from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import NvccInfo, find_nvcc, target_arch
from pragma_ncu.measure.roofline import ComputeRate
from pragma_ncu.pool.ceilings import ceiling_for
from pragma_ncu.pool.runner import DeviceInfo, Runner
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.search.evaluator import CompiledEvaluator, Phases
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.space import Point
from pragma_ncu.spec.file import check_shapes
from pragma_ncu.spec.model import Shape, TaskSpec
from pragma_ncu.worker.guards import worker_memory


class CudaSession(CompiledSession):
    """Opened on a started GPU worker: the arch to compile for, nvcc, the harness, the
    measured copy ceiling and (with the spec's FLOPs) the compute ceiling."""

    def __init__(self, original: TaskSpec, settings: Settings, runner: Runner,
                 arch: str | None = None, phases: Phases | None = None,
                 pool: WorkerPool | None = None, notice: Notice = lambda _: None) -> None:
        info: DeviceInfo = runner.hello()
        check_shapes(original, memory=worker_memory(info.memory_bytes, info.name))
        super().__init__(original, settings, runner, pool, phases or Phases(),
                         Limits.from_device(info), info.name)
        self.arch = target_arch(arch, info.arch)
        self.identity = f"{info.name}, driver {info.driver_version}"
        self.nvcc: NvccInfo = find_nvcc(settings)
        self.harness: BuildResult = cuda_build.build_harness(self.arch, self.nvcc, settings)
        assert self.harness.cubin_path is not None
        notice("copy-bandwidth ceiling")
        self.ceiling_gbps = ceiling_for(runner, self.harness.cubin_path,
                                        settings.cache_dir / "ceilings.json").gbps
        if original.flops_expr:  # the roofline needs the compute ceiling only with FLOPs
            notice("compute ceilings")
            ceiling = measured_compute(runner, self.arch, self.nvcc, settings)
            self.compute = ComputeRate(original.compute, ceiling.per_second)
        self.compute_ceilings = self.known_compute(info.cache_key)

    def make_evaluator(self, spec: TaskSpec, runner: Runner) -> CompiledEvaluator:
        return GpuEvaluator(spec, self.settings, runner, self.nvcc, self.arch, self.harness,
                            self.limits, self.phases, reference=self.original)

    def profile(self, spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profiled:
        """The instance at `point` under ncu at `shape` (on the pool's first GPU)."""
        try:
            pin = dict(self.pool.primary.slot.env) if self.pool is not None else {}
            run = run_profile(spec, shape, self.settings, self.runner,
                              worker_command(self.settings), params=dict(point),
                              arch=self.arch, out_dir=out_dir, env=pin or None)
        except PragmaError as exc:
            return Profiled(None, problem=str(exc))
        if run.profile is None or not run.profile.kernels:
            return Profiled(None, problem=run.problem or "the report holds no kernel")
        kernel = next((k for k in run.profile.kernels if k.name == spec.kernel_name),
                      run.profile.kernels[0])
        return Profiled(kernel, str(run.profile_path or ""),
                        profiler=f"ncu {run.profile.ncu_version}".strip(),
                        resources=run.profile.collection.get("resources"),
                        collector=run.profile.collector)
