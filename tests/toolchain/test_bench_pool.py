"""bench over many shapes on several (simulated) GPUs: the kernel is compiled for real (nvcc),
the shapes are spread over two fake GPU workers, each row names the GPU that measured it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.backends.cuda.bench import run_bench
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.report import bench as render
from pragma_ncu.spec.file import load_spec
from tests.fakes.pool import FakeGpu, fake_pool

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]


def test_shapes_are_spread_over_the_gpus_and_rows_keep_their_order(tmp_path: Path) -> None:
    spec = load_spec(ROOT / "examples" / "silu_and_mul.toml")
    settings = load_settings().with_(cache_dir=tmp_path / "cache")
    gpus = [FakeGpu("GPU-aaaa", delay_s=0.2), FakeGpu("GPU-bbbb", delay_s=0.2)]
    with fake_pool(tmp_path, gpus).start() as pool:
        report = run_bench(spec, spec.shapes, settings, pool.primary.runner, pool=pool)
    assert [r.shape.name for r in report.rows] == [s.name for s in spec.shapes]
    assert {r.device for r in report.rows} == {"gpu0", "gpu1"}
    assert all(r.measurement.status.value == "ok" for r in report.rows)
    table = render.bench_table(report)
    assert table.splitlines()[0].split()[:2] == ["shape", "GPU"]
    assert render.bench_json(report)["rows"][0]["device"] in ("gpu0", "gpu1")
