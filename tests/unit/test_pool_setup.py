"""Choosing and pinning GPUs, shipping files to Ray actors, and the command line's pool options
(no GPU, no Ray cluster needed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.pool import devices
from pragma_ncu.pool.ray_workers import STAGE, Shipper, localize
from pragma_ncu.pool.workers import WorkerDevice
from pragma_ncu.search.results import Evaluation

ROOT = Path(__file__).resolve().parents[2]
SMI = """GPU 0: NVIDIA H200 (UUID: GPU-11111111-2222-3333-4444-555555555555)
GPU 1: NVIDIA H200 (UUID: GPU-66666666-7777-8888-9999-aaaaaaaaaaaa)
GPU 2: NVIDIA H200 (UUID: GPU-bbbbbbbb-cccc-dddd-eeee-ffffffffffff)
"""
GPUS = devices.parse_smi(SMI)


def test_gpus_are_all_a_count_or_ordinals() -> None:
    assert devices.parse_gpus("all").all
    assert devices.parse_gpus("2") == devices.GpuSelection(count=2)
    assert devices.parse_gpus("0,2").ordinals == (0, 2)
    assert devices.parse_gpus("3,").ordinals == (3,)
    for bad in ("0", "two", "1,1", "-1,2", ","):
        with pytest.raises(ValueError, match="--gpus"):
            devices.parse_gpus(bad)


def test_selecting_gpus_says_what_the_host_has() -> None:
    assert [g.ordinal for g in devices.select(devices.parse_gpus("all"), GPUS)] == [0, 1, 2]
    assert [g.ordinal for g in devices.select(devices.parse_gpus("2"), GPUS)] == [0, 1]
    assert [g.ordinal for g in devices.select(devices.parse_gpus("2,0"), GPUS)] == [2, 0]
    with pytest.raises(ValueError, match="this host has 3 GPU"):
        devices.select(devices.parse_gpus("4"), GPUS)
    with pytest.raises(ValueError, match="no GPU 5 here"):
        devices.select(devices.parse_gpus("0,5"), GPUS)


def test_each_worker_is_pinned_to_its_gpu_by_uuid() -> None:
    slots = devices.gpu_slots(GPUS[1:], {"PATH": "/bin"})
    assert [s.label for s in slots] == ["gpu1", "gpu2"]
    env = dict(slots[0].env)
    assert env["CUDA_VISIBLE_DEVICES"] == "GPU-66666666-7777-8888-9999-aaaaaaaaaaaa"
    assert env["PATH"] == "/bin" and slots[0].uuid == env["CUDA_VISIBLE_DEVICES"]


def _run(child: dict | None, smi: str | None):
    calls = []

    def run(cmd, **kw):
        calls.append(cmd)
        if cmd[0] == "nvidia-smi":
            if smi is None:
                raise FileNotFoundError("nvidia-smi")
            return subprocess.CompletedProcess(cmd, 0, smi, "")
        assert kw["env"]["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"  # ordinals as nvidia-smi's
        return subprocess.CompletedProcess(cmd, 0, json.dumps(child or {}), "")
    return run, calls


def test_the_gpus_are_counted_in_a_child_process_then_by_nvidia_smi() -> None:
    child = {"gpus": [{"ordinal": 0, "name": "NVIDIA H200", "uuid": "GPU-1"}]}
    run, calls = _run(child, SMI)
    assert devices.list_gpus("python3", {}, run) == [devices.GpuInfo(0, "NVIDIA H200", "GPU-1")]
    assert calls == [["python3", "-m", "pragma_ncu.pool.devices"]]
    run, _ = _run({"gpus": [], "error": "CUDA_ERROR_NO_DEVICE"}, SMI)
    assert len(devices.list_gpus("python3", {}, run)) == 3
    run, _ = _run({"gpus": [], "error": "CUDA_ERROR_NO_DEVICE"}, SMI)
    visible = devices.list_gpus("python3", {"CUDA_VISIBLE_DEVICES": "2,GPU-1111"}, run)
    assert [(g.ordinal, g.uuid[:8]) for g in visible] == [(0, "GPU-bbbb"), (1, "GPU-1111")]
    run, _ = _run({"gpus": [], "error": "CUDA_ERROR_NO_DEVICE"}, None)
    with pytest.raises(NoGPUError, match="CUDA_ERROR_NO_DEVICE.*nvidia-smi"):
        devices.list_gpus("python3", {}, run)


def test_the_child_query_reports_an_error_here_instead_of_failing() -> None:
    proc = subprocess.run([sys.executable, "-m", "pragma_ncu.pool.devices"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    data = json.loads(proc.stdout)
    assert data["gpus"] or data["error"]


def test_files_travel_to_an_actor_once_and_are_staged_by_content(tmp_path: Path) -> None:
    cubin = tmp_path / "a" / "kernel.cubin"
    cubin.parent.mkdir()
    cubin.write_bytes(b"\x7fELF cubin")
    (tmp_path / "reference.py").write_text("def f(): pass\n")
    message = {"op": "evaluate", "harness": str(cubin),
               "candidate": {"cubin": str(cubin), "symbol": "k"},
               "reference": {"kind": "numpy", "function": "reference.py:f",
                             "base_dir": str(tmp_path)},
               "task": {"shape_name": "s", "params": {"cubin": 3}}}
    shipper = Shipper()
    packed, files = shipper.pack(message)
    assert len(files) == 2  # the cubin once (named twice), the reference file
    assert packed["harness"] == packed["candidate"]["cubin"]
    assert packed["harness"].startswith(STAGE) and packed["harness"].endswith("/kernel.cubin")
    assert packed["reference"]["base_dir"].startswith(STAGE)
    assert packed["task"]["params"] == {"cubin": 3}  # not a path: left alone
    again, files2 = shipper.pack(message)
    assert again == packed and files2 == {}  # the actor holds them already
    local = localize(packed, "/node/stage")
    assert local["candidate"]["cubin"].startswith("/node/stage/")
    name = packed["candidate"]["cubin"][len(STAGE) + 1:]
    assert files[name] == cubin.read_bytes()


def test_an_evaluation_keeps_the_gpu_that_measured_it() -> None:
    device = WorkerDevice("gpu1", "NVIDIA H200", "GPU-6666", "node-a")
    ev = Evaluation(3, {"BLOCK": 256}, "compile_error", device=device)
    assert Evaluation.from_json(json.loads(json.dumps(ev.to_json()))) == ev
    assert Evaluation.from_json({**ev.to_json(), "device": None}).device is None


KERNEL = str(ROOT / "examples" / "templated" / "silu_and_mul.cu")
CPU_KERNEL = str(ROOT / "examples" / "cpu" / "conv1d.cpp")


def _invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner(env=env).invoke(cli, ["autotune", *args])


def test_ray_without_ray_installed_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as without the extra
    res = _invoke("--kernel", CPU_KERNEL, "--workers", "2", "--ray", "local", "--out",
                  str(tmp_path))
    assert res.exit_code == 3, res.output  # the environment lacks Ray
    assert 'pip install "pragma-ncu[ray]"' in res.output
    assert "Traceback" not in res.output


def test_pool_options_that_do_not_fit_the_kernel_are_usage_errors(tmp_path: Path) -> None:
    res = _invoke("--kernel", CPU_KERNEL, "--gpus", "2", "--out", str(tmp_path))
    assert res.exit_code == 2 and "use --workers N" in res.output
    res = _invoke("--kernel", KERNEL, "--workers", "2", "--out", str(tmp_path))
    assert res.exit_code == 2 and "takes --gpus" in res.output
    res = _invoke("--kernel", KERNEL, "--gpus", "1,1", "--out", str(tmp_path))
    assert res.exit_code == 2 and "distinct" in res.output


def test_gpus_on_a_host_without_a_gpu_is_no_gpu(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    def none(python, env, run=None):
        raise NoGPUError("CUDA_ERROR_NO_DEVICE; nvidia-smi: not found")
    monkeypatch.setattr(devices, "list_gpus", none)
    res = _invoke("--kernel", KERNEL, "--gpus", "all", "--out", str(tmp_path))
    assert res.exit_code == 3, res.output
    assert "no GPU" in res.output and "CUDA_ERROR_NO_DEVICE" in res.output
    assert "Traceback" not in res.output


class _FakeRay:
    """Just enough of the `ray` module for RayRunner: actors run in this process; `fail` plants
    what the next `get` raises."""

    class exceptions:  # noqa: N801 - mirrors ray.exceptions
        class GetTimeoutError(Exception):
            pass

        class RayActorError(Exception):
            pass

    def __init__(self, answer: dict) -> None:
        self.answer, self.fail, self.actors, self.killed = answer, None, [], 0

    def remote(self, cls):
        ray = self

        class Handle:
            def options(self, **need):
                return self

            def remote(self, *args):
                actor = _FakeActor(ray)
                ray.actors.append(actor)
                return actor
        return Handle()

    def get(self, ref, timeout=None):
        if self.fail is not None:
            exc, self.fail = self.fail, None
            raise exc
        return ref()

    def kill(self, actor):
        self.killed += 1


class _FakeActor:
    def __init__(self, ray: _FakeRay) -> None:
        self.ray, self.files = ray, []
        for name in ("hello", "evaluate", "call", "close"):
            setattr(self, name, type("M", (), {"remote": staticmethod(self._method(name))})())

    def _method(self, name):
        def remote(*args):
            if name == "hello":
                return lambda: {"device": {"name": "Fake CPU"}, "host": "node-a"}
            if name == "evaluate":
                self.files.append(dict(args[1]))
                return lambda: self.ray.answer
            return lambda: {}
        return remote


def test_a_lost_ray_actor_is_a_crash_of_its_point_and_a_new_actor_takes_over(
        tmp_path: Path) -> None:
    from pragma_ncu.measure.measurement import Status
    from pragma_ncu.pool.ray_workers import RayRunner
    from pragma_ncu.pool.workers import Slot
    from tests.fakes.requests import fake_request

    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(b"cubin")
    req = fake_request("ok")
    req = type(req)(str(cubin), type(req.candidate)(str(cubin), "ok", req.candidate.launch),
                    req.task, req.reference, req.check, req.timing)
    ok = {"status": "ok", "shape": "odd", "message": ""}
    ray = _FakeRay(ok)
    runner = RayRunner(ray, Slot("cpu0"), cpu=True, timeout_s=5, describe=lambda d: d["name"],
                       worker_args=("-m", "pragma_ncu.worker", "--side", "cpu_side"))
    assert runner.hello() == "Fake CPU" and runner.host == "node-a"
    assert runner.evaluate(req).status is Status.OK
    assert len(ray.actors[0].files[0]) == 1  # the cubin, once for harness and candidate
    assert runner.evaluate(req).status is Status.OK and ray.actors[0].files[1] == {}
    ray.fail = ray.exceptions.RayActorError("the node died")
    lost = runner.evaluate(req)
    assert lost.status is Status.WORKER_CRASH and "the node died" in lost.message
    assert runner.evaluate(req).status is Status.OK  # a new actor, sent the files again
    assert len(ray.actors) == 2 and runner.restarts == 1 and len(ray.actors[1].files[0]) == 1
    ray.fail = ray.exceptions.GetTimeoutError()
    hung = runner.evaluate(req)
    assert hung.status is Status.TIMEOUT and ray.killed == 2
    ray.answer = {"no_worker": "CUDA_ERROR_NO_DEVICE"}
    with pytest.raises(NoGPUError, match="CUDA_ERROR_NO_DEVICE"):
        runner.evaluate(req)
