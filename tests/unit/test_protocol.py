"""Unit tests for pragma_ncu.worker.protocol: EvalRequest survives the JSON trip to the worker;
and the worker serves the side its command line names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.spec.file import load_spec
from pragma_ncu.worker import serve
from pragma_ncu.worker.protocol import (
    CheckConfig,
    EvalRequest,
    KernelRef,
    ReferenceSpec,
    TimingConfig,
    encode,
    eval_request_from_dict,
    task_from_dict,
)

REPO = Path(__file__).resolve().parents[2]
SILU = REPO / "examples" / "silu_and_mul.toml"
EXAMPLES = sorted((REPO / "examples").glob("*.toml")) + sorted(
    (REPO / "examples" / "faults").glob("*.toml"))

ROOT = Path(__file__).resolve().parents[2]


def wire(req: EvalRequest) -> dict:
    """What the worker reads: one JSON line."""
    line = encode(req.to_message())
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    return json.loads(line)


def silu_task(shape: str = "odd", params: dict | None = None):
    spec = load_spec(SILU)
    return spec.resolve(spec.shape_named(shape), params)


DEFAULT_TIMING = TimingConfig()


def make_request(task, reference: str = "numpy", timing: TimingConfig | None = DEFAULT_TIMING,
                 **kw) -> EvalRequest:
    candidate = KernelRef("/cache/build/abc123.cubin", "silu_and_mul", task.launch)
    if reference == "numpy":
        ref = ReferenceSpec("numpy", "reference.py:silu_and_mul", str(REPO / "examples"))
    else:
        original = KernelRef("/cache/build/orig.cubin", "_Z12silu_and_mulP6__halfPKS_i",
                             replace(task.launch, grid=(1, 2, 3)))
        ref = ReferenceSpec("kernel", kernel=original)
    return EvalRequest(
        harness="/cache/build/harness.cubin", candidate=candidate, task=task, reference=ref,
        check=kw.pop("check", CheckConfig((7, 8, 9), (("out", 1e-2, 2e-2),), 0.001)),
        timing=timing, **kw,
    )


@pytest.mark.parametrize("reference", ["numpy", "kernel"])
@pytest.mark.parametrize(
    "timing",
    [TimingConfig(), TimingConfig(warmup_ms=2.5, min_reps=5, max_reps=50, budget_ms=7.0,
                                  flush_l2=False, graph_below_us=3.0, copy_reference=False),
     None],
    ids=["default-timing", "custom-timing", "no-timing"],
)
def test_eval_request_round_trip(reference, timing):
    req = make_request(silu_task(), reference, timing)
    msg = wire(req)
    assert msg["op"] == "evaluate"
    back = eval_request_from_dict(msg)
    assert back == req
    assert back.timing == timing
    assert back.reference.kind == reference
    if reference == "kernel":
        assert back.reference.kernel == req.reference.kernel
        assert back.reference.kernel.launch.grid == (1, 2, 3)
        assert back.reference.function is None
    else:
        assert back.reference.kernel is None
        assert back.reference.function == "reference.py:silu_and_mul"


def test_round_trip_keeps_types():
    req = make_request(silu_task("llama-7b", {"BLOCK": 512}))
    back = eval_request_from_dict(wire(req))
    task = back.task
    assert task.shape_name == "llama-7b"
    assert task.dims == {"T": 4096, "d": 11008}
    assert task.params == {"BLOCK": 512}
    assert task.launch.grid == (4096, 1, 1) and isinstance(task.launch.grid, tuple)
    assert task.launch.block == (512, 1, 1)
    out, x, d = task.args
    assert out.shape == (4096, 11008) and isinstance(out.shape, tuple)
    assert x.init == ("normal", 0.0, 1.0) and isinstance(x.init, tuple)
    assert out.init is None
    assert d.value == 11008 and d.shape == ()
    assert task.bytes_moved == 4096 * 11008 * 2 * 3
    assert task.flops is None
    assert back.check.seeds == (7, 8, 9)
    assert back.check.tolerances == (("out", 1e-2, 2e-2),)
    assert back.check.max_bad_fraction == 0.001
    assert back.candidate.launch == task.launch


def test_default_check_config_round_trip():
    req = make_request(silu_task(), check=CheckConfig())
    assert eval_request_from_dict(wire(req)).check == CheckConfig()


def test_missing_check_falls_back_to_defaults():
    msg = wire(make_request(silu_task()))
    del msg["check"]
    assert eval_request_from_dict(msg).check == CheckConfig()


def test_message_is_plain_json():
    msg = make_request(silu_task()).to_message()
    assert set(msg) == {"op", "harness", "candidate", "task", "reference", "check", "timing"}
    assert json.loads(json.dumps(msg)) == json.loads(encode(msg))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_example_task_round_trips(path):
    spec = load_spec(path)
    for shape in spec.shapes:
        task = spec.resolve(shape)
        back = task_from_dict(json.loads(json.dumps(make_request(task).to_message()))["task"])
        assert back == task


def test_the_worker_serves_the_side_its_command_line_names(tmp_path: Path) -> None:
    """Every target's side is served the same way, by module: the worker knows none."""
    (tmp_path / "echo_side.py").write_text(
        "class Echo:\n"
        "    def hello(self):\n        return {'ok': True, 'device': {'name': 'echo'}}\n"
        "    def handle(self, op, message):\n"
        "        return {'ok': True, 'op': op} if op == 'echo' else None\n"
        "def make_side():\n    return Echo()\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    requests = "\n".join(json.dumps(m) for m in ({"op": "hello"}, {"op": "echo"},
                                                 {"op": "nope"}, {"op": "exit"})) + "\n"
    done = subprocess.run(serve.command(sys.executable, "echo_side"), input=requests,
                          capture_output=True, text=True, env=env, timeout=60)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and answers[0]["device"] == {"name": "echo"}
    assert answers[1] == {"ok": True, "op": "echo"} and "unknown op" in answers[2]["error"]
    assert serve.side_module(["--side", "echo_side"]) == "echo_side"
    bare = subprocess.run([sys.executable, "-m", "pragma_ncu.worker"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert bare.returncode == 2 and "--side MODULE" in bare.stderr  # no default side
