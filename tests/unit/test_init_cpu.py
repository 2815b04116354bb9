"""A C kernel from `init` to a verified run on the CPU: the draft, its placeholders filled and its
reference stub written, builds with the system compiler and passes the CPU worker's checks."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu import backends
from pragma_ncu.backends.cpu.evaluator import CpuEvaluator
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.measure.measurement import Status
from pragma_ncu.spec.file import load_spec
from tests.draft_fill import fill

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")
ROOT = Path(__file__).resolve().parents[2]

KERNEL = r"""
#include <stdint.h>
/* y[i] = a * x[i] + y[i], and hist counts the signs of x */
void saxpy_hist(float* restrict y, uint32_t* hist, const float* restrict x, float a, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        y[i] = a * x[i] + y[i];
        hist[x[i] < 0.0f] += 1;
    }
}
"""
REFERENCE = '''
import numpy as np

def saxpy_hist(*, y, hist, x, a, n):
    counts = np.array([(x >= 0).sum(), (x < 0).sum()])
    return {"y": a * x.astype(np.float64) + y, "hist": hist + counts}
'''


def test_a_c_kernel_drafted_filled_and_verified(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PRAGMA_NCU_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *sys.path]))
    Path("saxpy_hist.c").write_text(KERNEL)
    result = CliRunner().invoke(cli, ["init", "saxpy_hist.c"])
    assert result.exit_code == 0, result.output
    assert "to fill (5): args[0].shape[0], args[1].shape[0], args[2].shape[0], " \
           "args[3].value, shapes[0].n" in result.output
    spec_file = Path("saxpy_hist.toml")
    spec_file.write_text(fill(spec_file.read_text(), ['"n"', '"2"', '"n"', "2.5", "10007"]))
    Path("saxpy_hist_reference.py").write_text(REFERENCE)
    spec = load_spec(spec_file, Path("saxpy_hist.c"))
    assert [(a.name, a.dtype.name, a.role.value) for a in spec.args] == [
        ("y", "fp32", "inout"), ("hist", "uint32", "inout"), ("x", "fp32", "input"),
        ("a", "fp32", "scalar"), ("n", "int64", "scalar")]
    settings = load_settings()
    with backends.get("cpu").runner(settings, 60) as runner:
        runner.hello()
        evaluator = CpuEvaluator(spec, settings, runner)
        built = evaluator.build(spec.default_params())
        assert built.ok, built.log
        m = evaluator.measure(spec.default_params(), built, spec.shapes[0], "search")
    assert m.status is Status.OK, m.message
