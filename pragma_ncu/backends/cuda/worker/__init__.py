"""The GPU's worker side (`python -m pragma_ncu.worker --side pragma_ncu.backends.cuda.worker`,
`worker_command`): hello opens the device, `evaluate`
verifies, times and re-verifies, `launch` runs the launches ncu profiles, `ceiling` and
`compute_ceiling` measure the device. CUDA is imported only when hello opens the device.

`gpu` is the handle on the device, `workspace` the guarded arrays of one evaluation, `checks`
the reference and the comparisons on the device, `timing` CUDA-event and graph timing,
`evaluate` the Instance the shared verify/time/re-verify procedure drives, `ceiling` the
microbenchmarks; harness.cu and peaks.cu are their kernels.
"""

from __future__ import annotations

from typing import Any

from pragma_ncu.infra.settings import Settings
from pragma_ncu.worker import serve
from pragma_ncu.worker.protocol import eval_request_from_dict


def worker_command(settings: Settings) -> list[str]:
    """The command that serves this side."""
    return serve.command(settings.python, __name__)


class GpuSide:
    """The GPU worker's answers; its session (reference cache, flushers) outlives requests."""

    def __init__(self) -> None:
        self.gpu: Any = None
        self.session: Any = None

    def hello(self) -> dict[str, Any]:
        try:
            from pragma_ncu.backends.cuda.worker.gpu import Gpu

            self.gpu = Gpu()
            return {"ok": True, "device": self.gpu.info()}
        except ImportError as exc:
            self.gpu = None
            return {"ok": False, "kind": "no_gpu",
                    "error": f"cuda-python is not importable ({exc}); pip install cuda-core"}
        except Exception as exc:
            self.gpu = None
            return {"ok": False, "kind": "no_gpu", "error": f"{type(exc).__name__}: {exc}"}

    def _session(self) -> Any:
        """The worker's one Session, made on first use (not rebuilt for every request)."""
        if self.session is None:
            from pragma_ncu.backends.cuda.worker.evaluate import Session

            self.session = Session(self.gpu)
        return self.session

    def handle(self, op: str, message: dict[str, Any]) -> dict[str, Any] | None:
        from pragma_ncu.backends.cuda.worker import ceiling, evaluate
        from pragma_ncu.backends.cuda.worker.gpu import CudaFailure

        try:
            if op == "evaluate":
                result = evaluate.evaluate(self._session(), eval_request_from_dict(message))
                return {"ok": True, "measurement": result.to_json(),
                        "fatal": bool(result.extra.get("fatal"))}
            if op == "launch":  # for ncu: warm-up launches, then the one it profiles
                done = evaluate.launch_for_profile(self._session(),
                                                   eval_request_from_dict(message["request"]),
                                                   int(message.get("warmup", 2)),
                                                   int(message.get("seed", 1)))
                return {"ok": True, **done}
            if op == "compute_ceiling":
                return {"ok": True, "ceiling": ceiling.measure_compute(self.gpu,
                                                                       message["peaks"])}
            if op == "ceiling":
                return {"ok": True, "ceiling": ceiling.measure(
                    self.gpu, message["harness"], int(message.get("bytes", 1 << 30)))}
        except CudaFailure as exc:
            return {"ok": False, "kind": "cuda", "error": str(exc), "fatal": exc.fatal}
        return None


def make_side() -> GpuSide:
    return GpuSide()
