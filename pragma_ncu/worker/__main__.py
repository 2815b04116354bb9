"""Worker entry point: `python -m pragma_ncu.worker` serves protocol requests on stdin/stdout.

The protocol channel is the original stdout; file descriptor 1 is then pointed at stderr, so
anything a kernel or a library prints (device printf included) cannot corrupt the channel.

`python -m pragma_ncu.worker --cpu` serves the same protocol for C kernels in shared objects
(`pragma_ncu.worker.cpu`): hello answers with the host's facts, and CUDA is never imported.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, BinaryIO

from pragma_ncu.worker.protocol import encode, eval_request_from_dict


def _channel() -> BinaryIO:
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "wb", buffering=0)


def _hello() -> tuple[Any, dict[str, Any]]:
    try:
        from pragma_ncu.worker.gpu import Gpu

        gpu = Gpu()
        return gpu, {"ok": True, "device": gpu.info()}
    except ImportError as exc:
        return None, {"ok": False, "kind": "no_gpu",
                      "error": f"cuda-python is not importable ({exc}); pip install cuda-core"}
    except Exception as exc:
        return None, {"ok": False, "kind": "no_gpu", "error": f"{type(exc).__name__}: {exc}"}


def _session(state: dict[str, Any], gpu: Any) -> Any:
    """The worker's one Session, made on first use (not rebuilt for every request)."""
    if "session" not in state:
        from pragma_ncu.worker.evaluate import Session

        state["session"] = Session(gpu)
    return state["session"]


def _handle_cpu(message: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """The CPU worker's requests; its session (library and reference caches) outlives them."""
    from pragma_ncu.worker import cpu

    op = message.get("op")
    if op == "hello":
        if "cpu_session" not in state:
            state["cpu_session"] = cpu.CpuSession()
        return {"ok": True, "device": state["cpu_session"].host}
    session = state.get("cpu_session")
    if session is None:
        return {"ok": False, "kind": "protocol", "error": "send hello first"}
    if op == "evaluate":
        result = cpu.evaluate(session, eval_request_from_dict(message))
        return {"ok": True, "measurement": result.to_json(), "fatal": False}
    if op == "ceiling":
        return {"ok": True, "ceiling": cpu.ceiling(session, int(message.get("bytes",
                                                                          cpu.CEILING_BYTES)))}
    if op == "launch":  # it exists for ncu, which profiles GPU kernels only
        return {"ok": False, "kind": "protocol", "error": "the CPU worker has no 'launch' op"}
    return {"ok": False, "kind": "protocol", "error": f"unknown op {op!r}"}


def _handle(message: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    if state.get("cpu"):
        return _handle_cpu(message, state)
    op = message.get("op")
    if op == "hello":
        state["gpu"], answer = _hello()
        return answer
    gpu = state.get("gpu")
    if gpu is None:
        return {"ok": False, "kind": "protocol", "error": "send hello first"}
    from pragma_ncu.worker import ceiling, evaluate
    from pragma_ncu.worker.gpu import CudaFailure

    try:
        if op == "evaluate":
            result = evaluate.evaluate(_session(state, gpu), eval_request_from_dict(message))
            return {"ok": True, "measurement": result.to_json(),
                    "fatal": bool(result.extra.get("fatal"))}
        if op == "launch":  # for ncu: warm-up launches, then the one it profiles
            done = evaluate.launch_for_profile(_session(state, gpu),
                                               eval_request_from_dict(message["request"]),
                                               int(message.get("warmup", 2)),
                                               int(message.get("seed", 1)))
            return {"ok": True, **done}
        if op == "compute_ceiling":
            return {"ok": True, "ceiling": ceiling.measure_compute(gpu, message["peaks"])}
        if op == "ceiling":
            return {"ok": True, "ceiling": ceiling.measure(gpu, message["harness"],
                                                           int(message.get("bytes", 1 << 30)))}
    except CudaFailure as exc:
        return {"ok": False, "kind": "cuda", "error": str(exc), "fatal": exc.fatal}
    return {"ok": False, "kind": "protocol", "error": f"unknown op {op!r}"}


def main() -> int:
    channel = _channel()
    state: dict[str, Any] = {"cpu": "--cpu" in sys.argv[1:]}
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            channel.write(encode({"ok": False, "kind": "protocol", "error": str(exc)}))
            continue
        if message.get("op") == "exit":
            break
        try:
            answer = _handle(message, state)
        except Exception as exc:  # report, then keep serving unless the context is broken
            answer = {"ok": False, "kind": "internal", "error": f"{type(exc).__name__}: {exc}",
                      "trace": traceback.format_exc(limit=8)}
        channel.write(encode(answer))
        if answer.get("fatal"):
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
