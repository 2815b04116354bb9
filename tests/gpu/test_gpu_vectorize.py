"""vectorize on a real GPU (skipped without one): the rewrite at every VEC, built with nvcc and
run through CuPy beside the source, at odd lengths and with every pointer misaligned by 0 to 3
elements, must write what the source writes, and leave what the source leaves (its
conditional store keeps the old values). The CPU run of the same rewrites is
tests/unit/test_moves_vectorize.py; this one is the hardware's alignment rules."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.fakes.moves import applied, rendered, spec_of
from tests.move_kernels.vectorize import BIAS, BIAS_ARGS, BIAS_SHAPES, HALF, HALF_ARGS

pytestmark = pytest.mark.gpu


def _module(cp, source: str, out: Path, name: str):  # type: ignore[no-untyped-def]
    (out / f"{name}.cu").write_text(source)
    run = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-o", str(out / f"{name}.cubin"),
                          str(out / f"{name}.cu")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return cp.RawModule(path=str(out / f"{name}.cubin"))


@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_vectorize_matches_the_source_misaligned_and_at_odd_lengths(
        gpu_device, tmp_path: Path, offset: int) -> None:  # type: ignore[no-untyped-def]
    cp = pytest.importorskip("cupy")
    spec = spec_of(tmp_path, BIAS, args=BIAS_ARGS, shapes=BIAS_SHAPES)
    a = applied("vectorize", spec)
    plain = _module(cp, BIAS, tmp_path, "plain").get_function("k")
    C = 7
    for vec in a.knobs[0].values[1:]:
        vector = _module(cp, rendered(spec, [a], PNCU_VEC=vec), tmp_path,
                         f"v{vec}").get_function("k")
        for n in (1, 3, 1001, (1 << 20) + 5):
            rng = np.random.default_rng(n + vec)
            x = cp.asarray(np.concatenate([np.zeros(offset, np.float32),
                                           rng.standard_normal(n).astype(np.float32)]))
            bias = cp.asarray(rng.standard_normal(C).astype(np.float32))
            outs = []
            for kernel, grid in ((plain, math.ceil(n / 256)),
                                 (vector, math.ceil(math.ceil(n / 256) / vec))):
                y = cp.full(n + offset, 3.0, cp.float32)
                kernel((grid,), (256,), (y[offset:], x[offset:], bias, np.int32(n), np.int32(C)))
                outs.append(cp.asnumpy(y))
            assert np.array_equal(outs[0], outs[1]), (vec, n, offset)


def test_vectorize_reads_16_halves_a_thread_where_aligned(gpu_device, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cp = pytest.importorskip("cupy")
    spec = spec_of(tmp_path, HALF, args=HALF_ARGS)
    a = applied("vectorize", spec)
    plain = _module(cp, HALF, tmp_path, "plain").get_function("k")
    vector = _module(cp, rendered(spec, [a], PNCU_VEC=16), tmp_path, "v16").get_function("k")
    for offset in (0, 1, 8):
        for n in (17, 100003):
            x = cp.asarray(np.random.default_rng(n).standard_normal(n + offset).astype(
                np.float16))
            outs = []
            for kernel, grid in ((plain, math.ceil(n / 256)),
                                 (vector, math.ceil(math.ceil(n / 256) / 16))):
                y = cp.zeros(n + offset, cp.float16)
                kernel((grid,), (256,), (y[offset:], x[offset:], np.int32(n)))
                outs.append(cp.asnumpy(y))
            assert np.array_equal(outs[0], outs[1]), (n, offset)
