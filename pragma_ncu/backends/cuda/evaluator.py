"""The evaluator of CUDA kernels: nvcc builds a cubin (cached), the GPU worker verifies it
against the reference and times it."""

from __future__ import annotations

from pragma_ncu.backends.cuda.build import build
from pragma_ncu.build.compile import BuildCache, BuildRequest, BuildResult
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import NvccInfo
from pragma_ncu.pool.runner import Runner
from pragma_ncu.search.evaluator import CompiledEvaluator, Phases
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.spec.model import TaskSpec


class GpuEvaluator(CompiledEvaluator):
    """Compiles with nvcc (cached) and measures in the runner's worker process."""

    def __init__(self, spec: TaskSpec, settings: Settings, runner: Runner, nvcc: NvccInfo,
                 arch: str, harness: BuildResult, limits: Limits,
                 phases: Phases | None = None, reference: TaskSpec | None = None) -> None:
        super().__init__(spec, settings, runner, arch, harness, limits, phases or Phases(),
                         reference)
        self.nvcc = nvcc
        self.cache = BuildCache(settings.cache_dir / "build")

    def compile(self, spec: TaskSpec, req: BuildRequest) -> BuildResult:
        return build(req, self.nvcc, self.cache)
