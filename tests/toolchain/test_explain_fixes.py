"""The fixed builds of examples/apps/pipeline.cu that tools/gpu_explain_check.sh measures
against explain's estimates compile (nvcc, as the script builds them), and the script, the
source and the summary name the same fixes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.toolchain import find_nvcc
from tools.explain_check_summary import FIXES

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "examples" / "apps" / "pipeline.cu"
SCRIPT = ROOT / "tools" / "gpu_explain_check.sh"


def test_the_script_builds_each_fix_the_source_has_and_the_summary_tables():
    script, source = SCRIPT.read_text(), SOURCE.read_text()
    flags = {flag.upper() for flag in FIXES}
    assert set(re.findall(r"-D(FIX_[A-Z_]+)", script)) == flags
    assert set(re.findall(r"defined\((FIX_[A-Z_]+)\)|#ifndef (FIX_[A-Z_]+)", source)) <= {
        (f, "") for f in flags} | {("", f) for f in flags}
    for flag, (name, replacement) in FIXES.items():
        assert f"pipeline_{flag}" in script and flag.upper() in source
        assert re.search(rf"\b{name}\(float", source) and re.search(rf"\b{replacement}\(",
                                                                      source)


@pytest.mark.parametrize("flags", [[], ["-DFIX_NORM_SCALE", "-DFIX_SGEMM_SMALL",
                                        "-DFIX_SILU_MUL"]])
def test_the_builds_compile(tmp_path, flags):
    nvcc = find_nvcc(load_settings())
    proc = subprocess.run([nvcc.path, "-O3", "-arch=sm_90", "-std=c++17", "-c", "-o",
                           str(tmp_path / "pipeline.o"), str(SOURCE), *flags],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
