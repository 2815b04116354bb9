"""The CPU worker (`python -m pragma_ncu.worker --cpu`), driven through the real Runner.

Tiny C kernels are compiled with `cc` into shared objects; each fault a candidate can commit
must come back as its status. Every worker here runs with `cuda` made unimportable, so a CUDA
import anywhere on the CPU path fails the tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.backends.cpu.worker.host import cache_sizes, parse_size
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.pool.runner import HostInfo, Runner
from pragma_ncu.spec.model import ResolvedArg, ResolvedLaunch, ResolvedTask
from pragma_ncu.worker import serve
from pragma_ncu.worker.protocol import (
    CheckConfig,
    EvalRequest,
    KernelRef,
    ReferenceSpec,
    TimingConfig,
)
from tests.cpu_kernels import cpu_kernels

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")

ROOT = Path(__file__).resolve().parents[2]
WORKER = serve.command(sys.executable, "pragma_ncu.backends.cpu.worker")
N = 1000  # not a multiple of any vector width
LAUNCH = ResolvedLaunch((1, 1, 1), (1, 1, 1), 0)  # ignored on the CPU

KERNELS = r"""
#include <stdint.h>
void axpy(const float* x, float* y, float a, int n) {
    for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
void axpy_unrolled(const float* x, float* y, float a, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        y[i] = a * x[i] + y[i]; y[i + 1] = a * x[i + 1] + y[i + 1];
        y[i + 2] = a * x[i + 2] + y[i + 2]; y[i + 3] = a * x[i + 3] + y[i + 3];
    }
    for (; i < n; ++i) y[i] = a * x[i] + y[i];
}
void axpy_past_end(const float* x, float* y, float a, int n) {
    for (int i = 0; i <= n; ++i) y[i] = a * (i < n ? x[i] : 0.0f) + 1.0f;
}
void axpy_wrong(const float* x, float* y, float a, int n) {
    for (int i = 0; i < n; ++i) y[i] = a * x[i] - y[i];
}
void axpy_mutates(float* x, float* y, float a, int n) {
    for (int i = 0; i < n; ++i) { y[i] = a * x[i] + y[i]; x[i] = 0.0f; }
}
void axpy_crash(const float* x, float* y, float a, int n) { *(volatile int*)0 = 1; }
void axpy_hang(const float* x, float* y, float a, int n) { volatile int spin = 1; while (spin) {} }
void add(const float* x, const float* y, float* z, int n) {
    for (int i = 0; i < n; ++i) z[i] = x[i] + y[i];
}
void add_short(const float* x, const float* y, float* z, int n) {
    for (int i = 0; i < n - 1; ++i) z[i] = x[i] + y[i];
}
void scale_i64(const int32_t* x, int64_t* y, int64_t k, int n) {
    for (int i = 0; i < n; ++i) y[i] = k * (int64_t)x[i];
}
"""

REFERENCE = """
import numpy as np

def axpy(x, y, a, n):
    return a * x + y

def add(x, y, n):
    return {"z": x + y}

def scale(x, k, n):
    return k * x

def broken(x, y, a, n):
    raise RuntimeError("reference bug")
"""


@pytest.fixture(scope="module")
def kdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """k.so built from KERNELS, the NumPy references, and a `cuda` package that cannot load."""
    d = cpu_kernels(tmp_path_factory.mktemp("cpu_kernels"), KERNELS, REFERENCE)
    blocker = d / "blocker" / "cuda"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('no CUDA in the CPU worker')\n")
    return d


def runner(kdir: Path, timeout_s: float = 30.0) -> Runner:
    # A regular package named `cuda` first on the path shadows the real one: importing it fails.
    env = {**os.environ, "PYTHONPATH": f"{kdir / 'blocker'}:{ROOT}"}
    return Runner(WORKER, timeout_s=timeout_s, env=env, describe=HostInfo.from_json)


@pytest.fixture(scope="module")
def cpu(kdir: Path) -> Iterator[Runner]:
    with runner(kdir) as r:
        yield r


def f32(name: str, role: str) -> ResolvedArg:
    return ResolvedArg(name, "fp32", role, (N,), 4)


def scalar(name: str, dtype: str, value: float) -> ResolvedArg:
    return ResolvedArg(name, dtype, "scalar", (), 8 if dtype.endswith("64") else 4, value=value)


AXPY = (f32("x", "input"), f32("y", "inout"), scalar("a", "fp32", 2.5), scalar("n", "int32", N))
ADD = (f32("x", "input"), f32("y", "input"), f32("z", "output"), scalar("n", "int32", N))


def request(kdir: Path, symbol: str, args: tuple[ResolvedArg, ...] = AXPY,
            reference: ReferenceSpec | None = None, function: str = "axpy",
            timing: TimingConfig | None = None, library: str = "k.so") -> EvalRequest:
    moved = sum(a.bytes_moved for a in args)
    task = ResolvedTask(symbol, f"n{N}", {"n": N}, {}, LAUNCH, args, moved, 2.0 * N)
    ref = reference or ReferenceSpec("numpy", f"ref.py:{function}", str(kdir))
    return EvalRequest("", KernelRef(str(kdir / library), symbol, LAUNCH), task, ref,
                       CheckConfig(seeds=(1, 2)), timing)


def evaluate(cpu: Runner, req: EvalRequest) -> Measurement:
    m = cpu.evaluate(req)
    assert m.shape == f"n{N}"
    return m


def test_hello_describes_the_host(cpu: Runner) -> None:
    host = cpu.hello()
    assert isinstance(host, HostInfo)
    assert host.cores >= 1 and host.llc_bytes > 0 and host.memory_bytes > 0
    assert host.cache_key == f"{host.name}:{host.cores}"


def test_correct_kernel_passes_both_rounds(cpu: Runner, kdir: Path) -> None:
    m = evaluate(cpu, request(kdir, "axpy"))
    assert m.status is Status.OK, m.message
    assert [c.phase for c in m.checks] == ["verify", "reverify"]
    out = m.checks[0].outputs[0]
    assert out.name == "y" and out.numel == N and out.bad == 0 and out.unwritten == 0
    assert m.timing is None and m.occupancy is None


def test_integer_kernel_with_a_64_bit_scalar(cpu: Runner, kdir: Path) -> None:
    args = (ResolvedArg("x", "int32", "input", (N,), 4, init=("randint", -50, 50)),
            ResolvedArg("y", "int64", "output", (N,), 8), scalar("k", "int64", 3),
            scalar("n", "int32", N))
    m = evaluate(cpu, request(kdir, "scale_i64", args, function="scale"))
    assert m.status is Status.OK, m.message


@pytest.mark.parametrize(("symbol", "args", "function", "status", "where"), [
    ("axpy_past_end", AXPY, "axpy", Status.OUT_OF_BOUNDS_WRITE, "y (4 bytes)"),
    ("add_short", ADD, "add", Status.UNWRITTEN_OUTPUT, "z: 1 of 1000"),
    ("axpy_wrong", AXPY, "axpy", Status.WRONG_ANSWER, "first at index"),
    ("axpy_mutates", AXPY, "axpy", Status.INPUT_MUTATED, "x ("),
])
def test_faults_are_statuses(cpu: Runner, kdir: Path, symbol: str,
                             args: tuple[ResolvedArg, ...], function: str, status: Status,
                             where: str) -> None:
    m = evaluate(cpu, request(kdir, symbol, args, function=function,
                              timing=TimingConfig(warmup_ms=1, min_reps=3, budget_ms=1)))
    assert m.status is status, m.message
    assert m.message.startswith("verify:") and where in m.message
    assert m.timing is None  # a failed check is never timed


def test_unwritten_output_counts_exactly(cpu: Runner, kdir: Path) -> None:
    m = evaluate(cpu, request(kdir, "add_short", ADD, function="add"))
    z = m.checks[0].outputs[0]
    assert (z.unwritten, z.bad, z.first_bad) == (1, 1, N - 1)
    assert evaluate(cpu, request(kdir, "add", ADD, function="add")).status is Status.OK


def test_missing_symbol_and_library_are_launch_errors(cpu: Runner, kdir: Path) -> None:
    m = evaluate(cpu, request(kdir, "no_such_kernel"))
    assert m.status is Status.LAUNCH_ERROR and "no_such_kernel" in m.message
    m = evaluate(cpu, request(kdir, "axpy", library="missing.so"))
    assert m.status is Status.LAUNCH_ERROR and "cannot load kernel" in m.message


def test_reference_failure_is_reference_error(cpu: Runner, kdir: Path) -> None:
    m = evaluate(cpu, request(kdir, "axpy", function="broken"))
    assert m.status is Status.REFERENCE_ERROR and "reference bug" in m.message


def test_kernel_reference_agrees_with_a_rewrite(cpu: Runner, kdir: Path) -> None:
    original = ReferenceSpec("kernel", kernel=KernelRef(str(kdir / "k.so"), "axpy", LAUNCH))
    assert evaluate(cpu, request(kdir, "axpy_unrolled", reference=original)).status is Status.OK
    wrong = evaluate(cpu, request(kdir, "axpy_wrong", reference=original))
    assert wrong.status is Status.WRONG_ANSWER


def test_timing_between_the_rounds(cpu: Runner, kdir: Path) -> None:
    cfg = TimingConfig(warmup_ms=2, min_reps=7, max_reps=200, budget_ms=5)
    m = evaluate(cpu, request(kdir, "axpy", timing=cfg))
    assert m.status is Status.OK, m.message
    assert m.timing is not None and m.timing.mode == "clock"
    assert cfg.min_reps <= m.timing.reps <= cfg.max_reps
    assert 0 < m.timing.min_us <= m.timing.median_us
    assert m.copy_us is not None and m.copy_us > 0  # 12 kB moved: enough for a copy
    assert [c.phase for c in m.checks] == ["verify", "reverify"]
    assert m.timing.samples_us == ()  # not asked for: stored rows stay small
    kept = evaluate(cpu, request(kdir, "axpy", timing=replace(cfg, keep_samples=True)))
    assert kept.timing is not None and len(kept.timing.samples_us) == kept.timing.reps
    assert min(kept.timing.samples_us) == kept.timing.min_us


def test_ceiling_and_launch_ops(cpu: Runner) -> None:
    answer = cpu.call({"op": "ceiling", "bytes": 8 << 20})
    assert answer["ok"] and answer["ceiling"]["gbps"] > 0
    assert answer["ceiling"]["method"] in answer["ceiling"]["methods"]
    assert answer["ceiling"]["bytes"] == 8 << 20
    refused = cpu.call({"op": "launch", "request": {}})
    assert not refused["ok"] and refused["kind"] == "protocol"


def test_segfault_is_a_worker_crash_and_the_next_worker_serves(kdir: Path) -> None:
    with runner(kdir) as r:
        m = r.evaluate(request(kdir, "axpy_crash"))
        assert m.status is Status.WORKER_CRASH and "code -11" in m.message
        assert r.evaluate(request(kdir, "axpy")).status is Status.OK
        assert r.restarts == 1


def test_hang_is_a_timeout(kdir: Path) -> None:
    with runner(kdir, timeout_s=3) as r:
        r.hello()
        m = r.evaluate(request(kdir, "axpy_hang"))
        assert m.status is Status.TIMEOUT


def test_cpu_path_imports_no_cuda() -> None:
    code = ("import sys, pragma_ncu.backends.cpu.worker, pragma_ncu.worker.__main__; "
            "sys.exit(any(m == 'cuda' or m.startswith('cuda.') for m in sys.modules))")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_host_facts_parse_sysfs(tmp_path: Path) -> None:
    assert parse_size("32K") == 32 << 10 and parse_size("8M") == 8 << 20
    for index, (level, kind, size) in enumerate([("1", "Data", "48K"), ("1", "Instruction", "32K"),
                                                 ("2", "Unified", "2048K"),
                                                 ("3", "Unified", "36M")]):
        d = tmp_path / f"index{index}"
        d.mkdir()
        (d / "level").write_text(level + "\n")
        (d / "type").write_text(kind + "\n")
        (d / "size").write_text(size + "\n")
    assert cache_sizes(tmp_path) == (36 << 20, 48 << 10)
    assert cache_sizes(tmp_path / "none") == (32 << 20, 32 << 10)
