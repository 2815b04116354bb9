"""The toy target: its spec rules, its (in-process) worker, its session and its diagnosis."""

from __future__ import annotations

from typing import Any

from pragma_ncu.backends.base import Notice, Session, Target
from pragma_ncu.diagnose.engine import Rules
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.search.evaluator import Phases
from pragma_ncu.settings import Settings
from pragma_ncu.spec import SpecRules, TaskSpec

RULES = SpecRules("toy", (".toy",), launch_required=False, dtypes=("fp32", "fp64", "int32"),
                  dtypes_reason="a type the toy evaluates with NumPy",
                  template_args_refused="no template arguments: a toy kernel is Python")
COLLECTOR = "toycount"


class InProcess:
    """The toy's "worker": nothing to start, its kernels run in this process."""

    def __enter__(self) -> InProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def hello(self) -> str:
        return "toy machine"

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

        return ToySession(spec, runner.hello())

    def diagnosis(self) -> Rules:
        from tests.fakes.toy_backend.diagnosis import diagnose_toy

        return diagnose_toy

    def recognizes(self, kernel: KernelProfile) -> str | None:
        return COLLECTOR if "toy_cost_us" in kernel.metrics else None


TARGET = ToyTarget()
