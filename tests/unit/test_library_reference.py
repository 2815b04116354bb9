"""References in torch and CuPy: the spec key, the dispatch, the conversions, the errors.

No GPU and no torch or CuPy here: the device path (`worker.device_reference`) runs against a
FakeGpu whose "device" memory is host memory and the stand-in modules in tests/fakes, which take
it through __cuda_array_interface__ as torch and CuPy take device memory. Every dtype's inputs
must reach the reference exactly as a NumPy reference gets them, and its outputs come back in
the same reference dtypes. The CPU worker runs torch references on CPU tensors; that path runs
for real, in the worker process, with the fake torch on its path. The real libraries on a real
GPU: tools/gpu_reference_check.py.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest

from pragma_ncu.backends.cuda.worker.device_reference import device_reference
from pragma_ncu.backends.cuda.worker.gpu import DeviceMemory
from pragma_ncu.build.task import reference_spec
from pragma_ncu.infra.errors import SpecError
from pragma_ncu.measure.measurement import Status
from pragma_ncu.pool.runner import HostInfo, Runner
from pragma_ncu.spec import dtypes
from pragma_ncu.spec.file import load_spec
from pragma_ncu.spec.model import ResolvedArg, ResolvedLaunch, ResolvedTask
from pragma_ncu.worker import serve
from pragma_ncu.worker.protocol import (
    CheckConfig,
    EvalRequest,
    KernelRef,
    ReferenceSpec,
)
from pragma_ncu.worker.reference import ReferenceFailure, run_numpy_reference
from tests.cpu_kernels import cpu_kernels
from tests.scale_spec import scale_spec
from tests.tools_loader import load_module

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes"
SHAPE = (3, 5)


def fake(library: str) -> ModuleType:
    return load_module(FAKES / f"fake_{library}" / library / "__init__.py", library)


@pytest.fixture(params=["torch", "cupy"])
def library(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    module = fake(request.param)
    monkeypatch.setitem(sys.modules, request.param, module)
    yield module


class FakeGpu:
    """Device memory that is host memory: alloc, free, copy, sync."""

    def __init__(self) -> None:
        self.buffers: dict[int, np.ndarray] = {}

    def alloc(self, nbytes: int) -> DeviceMemory:
        buffer = np.zeros(max(nbytes, 1), dtype=np.uint8)
        self.buffers[buffer.ctypes.data] = buffer
        return DeviceMemory(buffer.ctypes.data, nbytes)

    def free(self, mem: DeviceMemory) -> None:
        del self.buffers[mem.ptr]

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        ctypes.memmove(dst, src, nbytes)

    def sync(self) -> None:
        pass

    def read(self, mem: DeviceMemory, dtype: str) -> np.ndarray:
        return self.buffers[mem.ptr][: mem.nbytes].view(dtype).copy()


def storage(dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Stored values of every kind, sign bits and high bits included."""
    d = dtypes.lookup(dtype)
    assert d is not None
    if dtype == "bf16":
        return dtypes.f32_to_bf16(rng.normal(size=SHAPE).astype(np.float32))
    if d.is_float:
        return rng.normal(size=SHAPE).astype(d.storage)
    info = np.iinfo(d.storage)
    return rng.integers(info.min, info.max, size=SHAPE, dtype=d.storage, endpoint=True)


def workspace(gpu: FakeGpu, arrays: dict[str, np.ndarray], args: tuple[ResolvedArg, ...]
              ) -> Any:
    """A Workspace stand-in: the arrays' stored values in "device" buffers."""
    placed = {}
    for name, values in arrays.items():
        mem = gpu.alloc(values.nbytes)
        gpu.buffers[mem.ptr][: values.nbytes] = values.reshape(-1).view(np.uint8)
        placed[name] = SimpleNamespace(ptr=mem.ptr)
    return SimpleNamespace(gpu=gpu, args=args, arrays=placed)


def identity_args(dtype: str) -> tuple[ResolvedArg, ...]:
    itemsize = dtypes.lookup(dtype).itemsize  # type: ignore[union-attr]
    return (ResolvedArg("x", dtype, "input", SHAPE, itemsize),
            ResolvedArg("y", dtype, "output", SHAPE, itemsize),
            ResolvedArg("k", "int32", "scalar", (), 4, value=7))


@pytest.mark.parametrize("dtype", dtypes.dtype_names())
def test_inputs_and_outputs_follow_the_numpy_rules(library: Any, dtype: str) -> None:
    """The same stored values give the reference the same numbers, and its outputs come back
    as the same reference dtype and values, as through a NumPy reference."""
    x = storage(dtype, np.random.default_rng(7))
    args = identity_args(dtype)
    seen: dict[str, Any] = {}

    def ref(x: Any, k: int) -> Any:
        seen.update(x=np.asarray(x).copy(), k=k)
        return x

    expected = run_numpy_reference(lambda x, k: x, args, lambda name: x)["y"]
    gpu = FakeGpu()
    ws = workspace(gpu, {"x": x}, args)
    buffers = device_reference(ws, ref, library.__name__)
    mem, ref_name = buffers["y"]
    assert ref_name == {"float32": "fp32", "float64": "fp64", "int64": "int64"}[
        expected.dtype.name]
    np.testing.assert_array_equal(gpu.read(mem, expected.dtype.name), expected)
    np.testing.assert_array_equal(seen["x"].reshape(-1), expected)  # what the reference saw
    assert seen["k"] == 7 and seen["x"].shape == SHAPE


def test_a_reference_that_changes_its_inputs_changes_a_copy(library: Any) -> None:
    x = storage("fp32", np.random.default_rng(1))
    args = identity_args("fp32")
    gpu = FakeGpu()
    ws = workspace(gpu, {"x": x}, args)

    def ref(x: Any, k: int) -> Any:
        x *= 2  # in place, on what it was given
        return x

    device_reference(ws, ref, library.__name__)
    stored = gpu.buffers[ws.arrays["x"].ptr][: x.nbytes].view(np.float32).reshape(SHAPE)
    np.testing.assert_array_equal(stored, x)  # the kernel's input is untouched


def test_several_outputs_by_name_or_in_order_and_cleanup(library: Any) -> None:
    args = (ResolvedArg("x", "fp16", "input", SHAPE, 2),
            ResolvedArg("acc", "int32", "inout", SHAPE, 4),
            ResolvedArg("out", "fp16", "output", SHAPE, 2))
    x = storage("fp16", np.random.default_rng(2))
    acc = np.arange(15, dtype=np.int32).reshape(SHAPE)
    gpu = FakeGpu()
    ws = workspace(gpu, {"x": x, "acc": acc}, args)
    before = set(gpu.buffers)
    by_dict = device_reference(ws, lambda x, acc: {"out": x * 2, "acc": acc + 1},
                               library.__name__)
    assert gpu.read(by_dict["acc"][0], "int64").tolist() == list(range(1, 16))
    np.testing.assert_allclose(gpu.read(by_dict["out"][0], "float32"),
                               x.astype(np.float32).reshape(-1) * 2)
    by_tuple = device_reference(ws, lambda x, acc: (acc + 1, x * 2), library.__name__)
    assert gpu.read(by_tuple["acc"][0], "int64").tolist() == list(range(1, 16))
    calls = library.calls
    assert calls["synchronize" if library.__name__ == "torch" else "deviceSynchronize"] >= 2
    assert calls["empty_cache" if library.__name__ == "torch" else "free_all_blocks"] >= 2
    for bad, message in [
        (lambda x, acc: {"out": x}, "no value for \\['acc'\\]"),
        (lambda x, acc: (x, acc, x), "returned 3 arrays, expected 2"),
        (lambda x, acc: {"out": x[:2], "acc": acc}, "'out' has 10 elements, expected 15"),
        (lambda x, acc: {"out": "text", "acc": acc}, f"'out' is not a {library.__name__}"),
        (lambda x, acc: 1 / 0, "the reference raised ZeroDivisionError"),
    ]:
        with pytest.raises(ReferenceFailure, match=message):
            device_reference(ws, bad, library.__name__)
    assert set(gpu.buffers) - before == {m.ptr for m, _ in (*by_dict.values(),
                                                            *by_tuple.values())}


@pytest.mark.parametrize("name", ["torch", "cupy"])
def test_a_missing_library_names_itself_and_the_fallback(name: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, name, None)  # import fails, as when not installed
    args = identity_args("fp32")
    ws = workspace(FakeGpu(), {"x": np.zeros(SHAPE, np.float32)}, args)
    with pytest.raises(ReferenceFailure) as info:
        device_reference(ws, lambda x, k: x, name)
    message = str(info.value)
    assert f"reference.library = '{name}'" in message and "pip install" in message
    assert 'library = "numpy", the default' in message


# --- the spec -------------------------------------------------------------------------------
SPEC = scale_spec(shapes=((None, 1000),))


@pytest.mark.parametrize("library", ["numpy", "torch", "cupy"])
def test_reference_library_reaches_the_worker_as_the_kind(tmp_path: Path, library: str) -> None:
    path = tmp_path / "scale.toml"
    path.write_text(SPEC + f'[reference]\nfunction = "ref.py:scale"\nlibrary = "{library}"\n')
    spec = load_spec(path)
    assert spec.reference.library == library
    ref = reference_spec(spec, None)
    assert (ref.kind, ref.function, ref.base_dir) == (library, "ref.py:scale",
                                                      str(tmp_path.resolve()))


def test_reference_library_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "scale.toml"
    path.write_text(SPEC + '[reference]\nfunction = "ref.py:scale"\nlibrary = "jax"\n')
    with pytest.raises(SpecError, match="reference.library.*numpy, torch, cupy"):
        load_spec(path)
    path.write_text(SPEC + '[reference]\nlibrary = "torch"\n')
    with pytest.raises(SpecError, match="reference.function"):
        load_spec(path)
    path.write_text(SPEC)
    assert load_spec(path).reference.library == "numpy"  # the default, and unused without one


# --- the CPU worker: torch on CPU tensors, for real in its process ---------------------------
KERNELS = r"""
void axpy(const float* x, float* y, float a, int n) {
    for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
"""
REFERENCES = """
import torch

def axpy(x, y, a, n):
    assert type(x).__name__ == "Tensor" and type(y).__name__ == "Tensor"
    return a * x + y

def axpy_wrong(x, y, a, n):
    return a * x - y
"""
N = 999
ARGS = (ResolvedArg("x", "fp32", "input", (N,), 4), ResolvedArg("y", "fp32", "inout", (N,), 4),
        ResolvedArg("a", "fp32", "scalar", (), 4, value=2.5),
        ResolvedArg("n", "int32", "scalar", (), 4, value=N))


@pytest.fixture(scope="module")
def kdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cpu_kernels(tmp_path_factory.mktemp("torch_cpu"), KERNELS, REFERENCES)


def cpu_worker(first_on_path: Path) -> Runner:
    env = {**os.environ, "PYTHONPATH": f"{first_on_path}:{ROOT}"}
    return Runner(serve.command(sys.executable, "pragma_ncu.backends.cpu.worker"), timeout_s=60,
                  env=env, describe=HostInfo.from_json)


def cpu_request(kdir: Path, kind: str, function: str) -> EvalRequest:
    launch = ResolvedLaunch((1, 1, 1), (1, 1, 1), 0)
    task = ResolvedTask("axpy", "n", {"n": N}, {}, launch, ARGS, 12 * N, 2.0 * N)
    return EvalRequest("", KernelRef(str(kdir / "k.so"), "axpy", launch), task,
                       ReferenceSpec(kind, f"ref.py:{function}", str(kdir)),
                       CheckConfig(seeds=(1, 2)), None)


@pytest.mark.skipif(subprocess.run(["which", "cc"], capture_output=True).returncode != 0,
                    reason="no C compiler (cc)")
def test_the_cpu_worker_runs_torch_references_on_cpu_tensors(kdir: Path) -> None:
    with cpu_worker(FAKES / "fake_torch") as worker:
        worker.hello()
        ok = worker.evaluate(cpu_request(kdir, "torch", "axpy"))
        assert ok.status is Status.OK, ok.message
        wrong = worker.evaluate(cpu_request(kdir, "torch", "axpy_wrong"))
        assert wrong.status is Status.WRONG_ANSWER, wrong.message
        cupy = worker.evaluate(cpu_request(kdir, "cupy", "axpy"))
        assert cupy.status is Status.REFERENCE_ERROR
        assert "CuPy reference runs on the GPU" in cupy.message
    with cpu_worker(FAKES / "no_torch") as worker:
        worker.hello()
        missing = worker.evaluate(cpu_request(kdir, "torch", "axpy"))
        assert missing.status is Status.REFERENCE_ERROR
        assert "pip install torch" in missing.message and 'library = "numpy"' in missing.message


def test_the_bundled_cupy_references_compute_what_the_numpy_ones_do(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy mirrors NumPy's API: with NumPy standing in for it, examples/reference_cupy.py must
    give examples/reference.py's numbers (the GPU run: tools/gpu_reference_check.py)."""
    monkeypatch.setitem(sys.modules, "cupy", np)

    gpu, host = (load_module(ROOT / "examples" / name, f"_{name}")
                 for name in ("reference_cupy.py", "reference.py"))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 18)).astype(np.float32)
    np.testing.assert_array_equal(gpu.silu_and_mul(x, 9), host.silu_and_mul(x, 9))
    i, r = rng.normal(size=(2, 5, 11)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, size=11).astype(np.float32)
    got, want = gpu.fused_add_rmsnorm(i, r, w, 1e-6, 11), host.fused_add_rmsnorm(i, r, w, 1e-6, 11)
    for key in ("input", "residual"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12)
    a, b = rng.normal(size=(6, 4)).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(gpu.sgemm(a, b, 6, 3, 4), host.sgemm(a, b, 6, 3, 4), rtol=1e-12)
