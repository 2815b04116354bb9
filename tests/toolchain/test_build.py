"""nvcc builds, -Xptxas -v resource parsing and the build cache (nvcc is present in CI)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.backends.cuda import build as cuda_build
from pragma_ncu.backends.cuda.build import build, build_many, cache_key
from pragma_ncu.build import task as tasks
from pragma_ncu.build.compile import BuildCache, BuildRequest
from pragma_ncu.spec.file import load_spec

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml")) + sorted(
    (ROOT / "examples" / "faults").glob("*.toml"))


@pytest.fixture
def cache(tmp_path: Path) -> BuildCache:
    return BuildCache(tmp_path / "build")


SMEM_KERNEL = """
extern "C" __global__ void smem(float* y, const float* x, int n) {
    __shared__ float tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x % TILE] = i < n ? x[i] : 0.f;
    __syncthreads();
    if (i < n) y[i] = tile[(threadIdx.x + 1) % TILE];
}
template <int N> __global__ void templated(float* y) { y[threadIdx.x] = N; }
template __global__ void templated<4>(float*);
"""


def req(tmp_path: Path, source: str = SMEM_KERNEL, name: str = "smem",
        defines: tuple[tuple[str, str], ...] = (("TILE", "256"),)) -> BuildRequest:
    return BuildRequest(source=source, source_name=str(tmp_path / "k.cu"), kernel_name=name,
                        arch="sm_90", defines=defines)


@pytest.mark.parametrize("spec_path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_builds_with_resources(spec_path: Path, nvcc, cache) -> None:  # type: ignore[no-untyped-def]
    spec = load_spec(spec_path)
    result = build(tasks.build_request(spec, "sm_90"), nvcc, cache)
    assert result.ok, result.log
    assert result.symbol == spec.kernel_name
    assert result.resources is not None and result.resources.registers > 0
    assert result.cubin_path and Path(result.cubin_path).stat().st_size > 0
    assert "-lineinfo" in result.command


def test_shared_memory_and_barriers_parsed(tmp_path: Path, nvcc, cache) -> None:  # type: ignore[no-untyped-def]
    result = build(req(tmp_path), nvcc, cache)
    assert result.ok
    assert result.resources.shared_static == 256 * 4  # type: ignore[union-attr]
    assert result.resources.barriers == 1  # type: ignore[union-attr]
    bigger = build(req(tmp_path, defines=(("TILE", "1024"),)), nvcc, cache)
    assert bigger.resources.shared_static == 1024 * 4  # type: ignore[union-attr]


def test_compile_error_is_data_with_the_compiler_message(tmp_path: Path, nvcc, cache) -> None:  # type: ignore[no-untyped-def]
    broken = build(req(tmp_path, source="extern \"C\" __global__ void smem() { int x = ; }"),
                   nvcc, cache)
    assert broken.status == "compile_error" and not broken.ok
    assert "expected an expression" in broken.log
    assert str(tmp_path / "k.cu") in broken.log  # the user's file name, not the cache's copy
    assert broken.cubin_path is None


def test_missing_kernel_lists_entry_points(tmp_path: Path, nvcc, cache) -> None:  # type: ignore[no-untyped-def]
    result = build(req(tmp_path, name="nope"), nvcc, cache)
    assert result.status == "kernel_not_found"
    assert "smem" in result.entries


def test_cpp_template_name_resolves_to_mangled_symbol(tmp_path: Path, nvcc, cache) -> None:  # type: ignore[no-untyped-def]
    result = build(req(tmp_path, name="templated"), nvcc, cache)
    assert result.ok and result.symbol is not None
    assert result.symbol.startswith("_Z") and "templated" in result.symbol


def test_cache_hit_on_identical_compile(tmp_path: Path, nvcc, cache) -> None:  # type: ignore[no-untyped-def]
    first = build(req(tmp_path), nvcc, cache)
    second = build(req(tmp_path), nvcc, cache)
    assert not first.cache_hit and second.cache_hit
    assert second.cubin_path == first.cubin_path and cache.hits == 1
    assert second.resources == first.resources


def test_cache_key_covers_source_flags_defines_arch_and_compiler(tmp_path: Path, nvcc) -> None:  # type: ignore[no-untyped-def]
    """The request's own key; the headers it reads are keyed by the cache (test_build_cache)."""
    base = req(tmp_path)
    key = cache_key(base, nvcc)
    assert cache_key(replace(base, source=base.source + "\n// x"), nvcc) != key
    assert cache_key(replace(base, flags=("-O1",)), nvcc) != key
    assert cache_key(replace(base, defines=(("TILE", "128"),)), nvcc) != key
    assert cache_key(replace(base, arch="sm_80"), nvcc) != key
    assert cache_key(base, replace(nvcc, banner=nvcc.banner + "x")) != key
    assert cache_key(base, replace(nvcc, path="/elsewhere/nvcc")) != key
    assert cache_key(base, replace(nvcc, environment=(("NVCC_APPEND_FLAGS", "-G"),))) != key


def test_build_many_runs_in_parallel_and_keeps_order(tmp_path: Path, nvcc, cache) -> None:  # type: ignore[no-untyped-def]
    reqs = [req(tmp_path, defines=(("TILE", str(t)),)) for t in (32, 64, 128, 256)]
    results = build_many(reqs, nvcc, cache, jobs=4)
    assert [r.resources.shared_static for r in results] == [128, 256, 512, 1024]  # type: ignore[union-attr]
    assert len({r.key for r in results}) == 4


def test_harness_compiles(nvcc, cache) -> None:  # type: ignore[no-untyped-def]
    result = build(cuda_build.harness_request("sm_90"), nvcc, cache)
    assert result.ok, result.log
    for entry in ("compare_fp16_fp32", "fill_normal_bf16", "count_ne_u8", "flush_read"):
        assert entry in result.entries
