"""The toy target: its spec rules, its (in-process) worker and device, its session, the
commands of one kernel (bench and profile) and its diagnosis."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pragma_ncu.backends.base import Notice, ProfileOptions, Session, Target
from pragma_ncu.backends.results import BenchReport, ProfileRun
from pragma_ncu.diagnose.engine import Rules
from pragma_ncu.infra.settings import Settings
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.search.evaluator import Phases
from pragma_ncu.spec.model import ParamValue, Shape, TaskSpec
from pragma_ncu.targets.rules import SpecRules
from pragma_ncu.worker.protocol import TimingConfig

RULES = SpecRules("toy", (".toy",), launch_required=False, dtypes=("fp32", "fp64", "int32"),
                  dtypes_reason="a type the toy evaluates with NumPy",
                  template_args_refused="no template arguments: a toy kernel is Python")
COLLECTOR = "toycount"


@dataclass(frozen=True)
class ToyDevice:
    """What the toy runs its kernels on: this process."""

    name: str = "toy machine"

    @property
    def cache_key(self) -> str:
        return self.name

    def summary(self) -> str:
        return f"{self.name} (Python, in process)"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class InProcess:
    """The toy's "worker": nothing to start, its kernels run in this process."""

    def __enter__(self) -> InProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def hello(self) -> ToyDevice:
        return ToyDevice()

    def close(self, wait_s: float = 5.0) -> None:
        """Nothing to stop."""


class ToyTarget(Target):
    name = "toy"
    rules = RULES
    device_word = "toy"
    collectors = (COLLECTOR,)

    def runner(self, settings: Settings, timeout_s: float,
               env: dict[str, str] | None = None) -> Any:
        return InProcess()

    def open(self, spec: TaskSpec, settings: Settings, runner: Any, *,
             arch: str | None = None, pool: WorkerPool | None = None,
             phases: Phases | None = None, notice: Notice = lambda _: None) -> Session:
        from tests.fakes.toy_backend.session import ToySession

        return ToySession(spec, runner.hello().name)

    def bench(self, spec: TaskSpec, shapes: Sequence[Shape], settings: Settings, runner: Any,
              *, params: dict[str, ParamValue] | None = None, arch: str | None = None,
              timing: TimingConfig | None = None, progress: Notice = lambda _: None,
              pool: WorkerPool | None = None) -> BenchReport:
        from tests.fakes.toy_backend.commands import bench

        return bench(spec, shapes, runner.hello(), params or {}, progress)

    def profile(self, spec: TaskSpec, shape: Shape, settings: Settings,
                options: ProfileOptions, progress: Notice = lambda _: None) -> ProfileRun:
        from tests.fakes.toy_backend.commands import profile

        out = options.out_dir or Path("pragma-ncu-profiles") / f"{spec.kernel_name}-{shape.name}"
        return profile(spec, shape, ToyDevice(), options.params, out, options.repeats, progress)

    def diagnosis(self) -> Rules:
        from tests.fakes.toy_backend.diagnosis import diagnose_toy

        return diagnose_toy

    def recognizes(self, kernel: KernelProfile) -> str | None:
        return COLLECTOR if "toy_cost_us" in kernel.metrics else None

    def launch_duration_us(self, kernel: KernelProfile) -> float | None:
        return kernel.value("toy_cost_us")


TARGET = ToyTarget()
