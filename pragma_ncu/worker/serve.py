"""The worker's request loop, the same for every device side: one JSON request per line on
stdin, one answer per line on the protocol channel (see `protocol`).

A device side is a module with `make_side()` returning a `Side`: each target's (the CUDA
side is `pragma_ncu.backends.cuda.worker`, the CPU side `pragma_ncu.backends.cpu.worker`, or a
registered target's module). `python -m pragma_ncu.worker --side MODULE` serves it, for every
target alike: this module names none of them, and a target's `worker_command` is `command`
with its side's module.

The protocol channel is the original stdout; file descriptor 1 is then pointed at stderr, so
anything a kernel or a library prints (device printf included) cannot corrupt the channel.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from collections.abc import Iterable, Sequence
from typing import Any, BinaryIO, Protocol

from pragma_ncu.worker.protocol import encode

USAGE = "usage: python -m pragma_ncu.worker --side MODULE (a module with make_side())"


class Side(Protocol):
    """What a device side answers. `hello` opens the device (or says why it cannot:
    {"ok": False, "kind": "no_gpu", ...}); `handle` answers every other op, None for an op it
    does not know. An answer with "fatal": true ends the worker after it is sent."""

    def hello(self) -> dict[str, Any]: ...

    def handle(self, op: str, message: dict[str, Any]) -> dict[str, Any] | None: ...


def command(python: str, side: str) -> list[str]:
    """The command that serves the side in module `side` on the interpreter `python`."""
    return [python, "-m", "pragma_ncu.worker", "--side", side]


def side_module(argv: Sequence[str]) -> str | None:
    """The module a command line names with `--side MODULE`, or None when it names none."""
    args = list(argv)
    at = args.index("--side") + 1 if "--side" in args else len(args)
    return args[at] if at < len(args) else None


def load_side(module: str) -> Side:
    side: Side = importlib.import_module(module).make_side()
    return side


def channel() -> BinaryIO:
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "wb", buffering=0)


def serve(side: Side, lines: Iterable[bytes], out: BinaryIO) -> int:
    """Answer every request until "exit", the input's end, or a fatal answer (exit code 3)."""
    ready = False
    for line in lines:
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            out.write(encode({"ok": False, "kind": "protocol", "error": str(exc)}))
            continue
        if message.get("op") == "exit":
            break
        try:
            answer, ready = _answer(side, message, ready)
        except Exception as exc:  # report, then keep serving unless the context is broken
            answer = {"ok": False, "kind": "internal", "error": f"{type(exc).__name__}: {exc}",
                      "trace": traceback.format_exc(limit=8)}
        out.write(encode(answer))
        if answer.get("fatal"):
            return 3
    return 0


def _answer(side: Side, message: dict[str, Any], ready: bool) -> tuple[dict[str, Any], bool]:
    op = message.get("op")
    if op == "hello":
        answer = side.hello()
        return answer, bool(answer.get("ok"))
    if not ready:
        return {"ok": False, "kind": "protocol", "error": "send hello first"}, ready
    handled = side.handle(str(op), message)
    if handled is None:
        return {"ok": False, "kind": "protocol", "error": f"unknown op {op!r}"}, ready
    return handled, ready


def main(argv: Sequence[str]) -> int:
    module = side_module(argv)
    if module is None:
        print(USAGE, file=sys.stderr)
        return 2
    out = channel()
    return serve(load_side(module), sys.stdin.buffer, out)
