"""The ceilings the roofline stands on: the `ceilings` command, the compute-ceiling cache and
bench's roofline columns (rendered from a report, no GPU)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.backends.results import BenchReport, BenchRow
from pragma_ncu.build.compile import BuildResult, KernelResources
from pragma_ncu.cli.main import cli
from pragma_ncu.measure.ceilings import (
    Ceiling,
    ComputeCeiling,
    cached_compute_for_device,
    write_cache,
)
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.report import bench as render
from pragma_ncu.spec.file import load_spec

ROOT = Path(__file__).resolve().parents[2]
H200 = {"fp32_fma": 60.0e12, "fp64_fma": 30.0e12, "fp16_tensor": 500.0e12,
        "bf16_tensor": 500.0e12, "sfu": 4.0e12}


def test_without_a_gpu_the_command_says_so_and_points_at_the_cpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    result = CliRunner().invoke(cli, ["ceilings"])
    assert result.exit_code == 3
    assert "--cpu" in result.output


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_cpu_ceilings_are_measured_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("PRAGMA_NCU_CACHE", str(tmp_path))
    result = CliRunner().invoke(cli, ["ceilings", "--cpu", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["compute"]["per_second"]["fp32_fma"] > 1e9  # any CPU does a GFLOP/s
    assert data["copy"]["gbps"] > 0.5
    again = CliRunner().invoke(cli, ["ceilings", "--cpu", "--format", "json"])
    assert json.loads(again.output)["compute"]["cached"] is True


def test_a_cached_compute_ceiling_is_found_by_device_name(tmp_path):
    cache = tmp_path / "compute_ceilings.json"
    for when, rate in (("2026-11-01 10:00:00", 50e12), ("2026-11-24 10:00:00", 60e12)):
        entry = ComputeCeiling({"fp32_fma": rate}, {}, "NVIDIA H200", when)
        prior = json.loads(cache.read_text()) if cache.exists() else {}
        write_cache(cache, {**prior, f"H200:{when}": {k: v for k, v in entry.__dict__.items()
                                                      if k != "cached"}})
    found = cached_compute_for_device(cache, "NVIDIA H200")
    assert found is not None and found.per_second["fp32_fma"] == 60e12 and found.cached
    assert cached_compute_for_device(cache, "NVIDIA H100 80GB HBM3") is None


def _report(median_us: float) -> BenchReport:
    spec = load_spec(ROOT / "examples" / "roofline" / "sgemm_tiled.toml")
    shape = spec.shapes[0]
    task = spec.resolve(shape, spec.default_params())
    timing = TimingStats(median_us=median_us, mean_us=median_us, min_us=median_us,
                         max_us=median_us, p10_us=median_us, p90_us=median_us, iqr_us=1.0,
                         stdev_us=1.0, reps=10, mode="events", launches_per_sample=1)
    m = Measurement(Status.OK, shape.name, timing=timing, bytes_moved=task.bytes_moved,
                    flops=task.flops, copy_us=60.0)
    build = BuildResult("ok", "sgemm_tiled", "sgemm_tiled", "x.cubin",
                        KernelResources(registers=119), "", "sm_90", (), "k")
    return BenchReport(spec, spec.default_params(), build, None, None,
                       Ceiling(4200.0, "driver memcpy", {}, "NVIDIA H200", "2026-11-24"),
                       (BenchRow(shape, task, m),),
                       ComputeCeiling(H200, {"sgemm_fp32": 50.8}, "NVIDIA H200", "2026-11-24"))


def test_bench_judges_a_gemm_against_the_fp32_ceiling():
    """137 GFLOP in 4.58 ms = 30 TFLOP/s: 50% of a 60 TFLOP/s FP32 ceiling, though its bytes
    would take 1% of that time at the copy ceiling; the vendor GEMM stands in the header."""
    report = _report(4580.0)
    row = render.bench_rows(report)[0]
    assert row["bound_by"] == "FP32 FMA"
    assert row["pct_of_roofline"] == pytest.approx(50.0, abs=0.1)
    assert row["tflops"] == pytest.approx(30.0, abs=0.1)
    table = render.bench_table(report)
    assert "TFLOP/s" in table and "FP32 FMA" in table
    header = "\n".join(render.bench_header(report))
    assert "FP32 FMA 60.0" in header and "sgemm_fp32 50.8" in header


def test_the_ceilings_table_sets_each_measured_rate_beside_the_datasheet():
    from pragma_ncu.api import compendium as load_compendium
    from pragma_ncu.measure.ceilings import datasheet_for
    from pragma_ncu.report.ceilings import ceiling_rows

    sheet = datasheet_for("NVIDIA H200", load_compendium())
    assert sheet["fp32_fma"] == 67 and sheet["copy_gbps"] == 4800
    assert datasheet_for("Imaginary GPU 9000", load_compendium()) == {}
    copy = Ceiling(4246.0, "driver memcpy", {}, "NVIDIA H200", "2026-11-24")
    compute = ComputeCeiling({**H200, "fp8_tensor": 990e12}, {"sgemm_fp32": 50.8},
                             "NVIDIA H200", "2026-11-24")
    rows = {r[0]: r for r in ceiling_rows(copy, compute, sheet)}
    assert rows["FP32 FMA"][1:4] == ["60.0 TFLOP/s", "67 TFLOP/s", "90%"]
    assert rows["copy (read + write)"][3] == "88%"
    assert rows["FP8 tensor cores"][3] == "50%"  # 990 of 1979: mma.sync, not wgmma
    assert rows["special-function unit"][2:4] == ["-", "-"]  # no datasheet figure
    assert rows["vendor sgemm_fp32"][1] == "50.8 TFLOP/s"
