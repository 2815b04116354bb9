"""The compile cache keys on every header the preprocessor reads, however it was found: next to
the source, through a `-I` flag of the spec, through a template's include folder; for nvcc and
for the CPU target's cc (both present in CI). An edited header is a rebuild with the new
resources; an untouched one (or one rewritten with the same bytes) is a cache hit."""

from __future__ import annotations

import ctypes
import os
import time
from pathlib import Path

import pytest

from pragma_ncu.backends.cpu import build as cpu_build
from pragma_ncu.backends.cuda.build import build
from pragma_ncu.build import task as tasks
from pragma_ncu.build.compile import BuildCache, BuildRequest, BuildResult
from pragma_ncu.infra import sources
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.spec.file import load_spec
from tests.scale_spec import one_block, write_spec

pytestmark = pytest.mark.toolchain

KERNEL = """#include "tile.h"
extern "C" __global__ void k(float* y, int n) {
    __shared__ float s[TILE];
    s[threadIdx.x % TILE] = 1.f;
    __syncthreads();
    if (threadIdx.x < n) y[threadIdx.x] = s[(threadIdx.x + 1) % TILE];
}
"""


def edit(path: Path, text: str) -> None:
    """Write `text`, dated a second ago: a header written within a clock tick of a compile is
    not remembered with it (it may have changed while the compiler read it)."""
    path.write_text(text)
    past = time.time_ns() - 10**9
    os.utime(path, ns=(past, past))


def smem(result: BuildResult) -> int:
    assert result.ok and result.resources is not None, result.log
    return result.resources.shared_static


def k_spec(folder: Path, source: str, flags: list[str], params: str = "") -> Path:
    """k.toml: the kernel k of `source` writing y (n = 256) in one block, with `flags`."""
    flag_list = str(flags).replace("'", '"')
    return write_spec(folder, source, file="k.toml", name="k", kernel=f"flags = {flag_list}",
                      params=params, launch=one_block(256), arrays=(("y", "output"),),
                      shapes=((None, 256),))


def test_header_through_an_include_flag_is_keyed(tmp_path: Path, monkeypatch, nvcc) -> None:  # type: ignore[no-untyped-def]
    """The probe of issue 25: tile.h found through `-Iinc` (relative, from where the command
    runs) edited from 32 to 1024 floats; bench reported the old build's 128 B."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inc").mkdir()
    header = tmp_path / "inc" / "tile.h"
    edit(header, "#define TILE 32\n")
    (tmp_path / "k.cu").write_text(KERNEL)
    spec = load_spec(k_spec(tmp_path, "k.cu", ["-Iinc"]))
    cache = BuildCache(tmp_path / "cache")

    def built() -> BuildResult:
        return build(tasks.build_request(spec, "sm_90"), nvcc, cache)

    first = built()
    assert smem(first) == 128 and not first.cache_hit
    again = built()
    assert again.cache_hit and smem(again) == 128 and again.cubin_path == first.cubin_path
    edit(header, "#define TILE 32\n")  # the same bytes, a new mtime: still the same build
    assert built().cache_hit
    edit(header, "#define TILE 1024\n")
    edited = built()
    assert not edited.cache_hit and smem(edited) == 4096
    assert edited.cubin_path != first.cubin_path and Path(first.cubin_path or "").is_file()
    edit(header, "#define TILE 32\n")  # back to the first version: its build is kept
    back = built()
    assert back.cache_hit and smem(back) == 128 and back.cubin_path == first.cubin_path


def test_header_in_a_templates_include_folder_is_keyed(tmp_path: Path, nvcc) -> None:  # type: ignore[no-untyped-def]
    """A jinja2 template is rendered elsewhere (the render folder) and finds its headers
    through its own folder, given as an include folder."""
    (tmp_path / "tpl").mkdir()
    header = tmp_path / "tpl" / "tile.h"
    edit(header, "#define TILE 64\n")
    (tmp_path / "tpl" / "k.cu.j2").write_text("// block {{ BLOCK }}\n" + KERNEL)
    spec = load_spec(k_spec(tmp_path / "tpl", "k.cu.j2", [], "BLOCK = 256"))
    cache = BuildCache(tmp_path / "cache")

    def built() -> BuildResult:
        return build(tasks.build_request(spec, "sm_90", render_dir=tmp_path / "rendered"),
                     nvcc, cache)

    assert smem(built()) == 256
    assert built().cache_hit
    edit(header, "#define TILE 512\n")
    edited = built()
    assert not edited.cache_hit and smem(edited) == 2048


def test_a_failure_for_a_missing_header_is_not_cached(tmp_path: Path, nvcc) -> None:  # type: ignore[no-untyped-def]
    """With no header the compiler writes no dependency output: nothing says which file to
    watch, so the failure is compiled again once the header exists."""
    source = tmp_path / "k.cu"
    source.write_text(KERNEL)
    req = BuildRequest(source=KERNEL, source_name=str(source), kernel_name="k", arch="sm_90")
    cache = BuildCache(tmp_path / "cache")
    failed = build(req, nvcc, cache)
    assert failed.status == "compile_error" and "tile.h" in failed.log
    edit(tmp_path / "tile.h", "#define TILE 16\n")
    assert smem(build(req, nvcc, cache)) == 64


CPU_KERNEL = """#include "size.h"
int tile_size(void) { return SIZE; }
"""


def test_cpu_header_through_an_include_flag_is_keyed(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The same for a C function built by cc: the shared object itself answers the new value."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inc").mkdir()
    header = tmp_path / "inc" / "size.h"
    edit(header, "#define SIZE 32\n")
    (tmp_path / "k.c").write_text(CPU_KERNEL)
    cc = cpu_build.find_compiler(load_settings(), cxx=False)
    cache = BuildCache(tmp_path / "cache")
    req = BuildRequest(source=CPU_KERNEL, source_name=str(tmp_path / "k.c"),
                       kernel_name="tile_size", arch="host", flags=("-Iinc", "-O1"))

    def answer(result: BuildResult) -> int:
        assert result.ok and result.cubin_path, result.log
        return int(ctypes.CDLL(result.cubin_path).tile_size())

    first = cpu_build.build(req, cc, cache)
    assert answer(first) == 32 and cpu_build.build(req, cc, cache).cache_hit
    edit(header, "#define SIZE 1024\n")
    edited = cpu_build.build(req, cc, cache)
    assert not edited.cache_hit and answer(edited) == 1024


def test_a_latin1_source_reaches_the_compiler_unchanged(tmp_path: Path, nvcc) -> None:  # type: ignore[no-untyped-def]
    """Issue 25's probe: Latin-1 bytes in a comment gave a UnicodeDecodeError; the compiler
    now gets the file's bytes (the copy it compiled is kept beside the cubin)."""
    data = b"// caf\xe9: 5 \xb5s\n" + KERNEL.replace('#include "tile.h"', "#define TILE 8").encode()
    source = tmp_path / "k.cu"
    source.write_bytes(data)
    req = BuildRequest(source=sources.read(source), source_name=str(source), kernel_name="k",
                       arch="sm_90")
    result = build(req, nvcc, BuildCache(tmp_path / "cache"))
    assert smem(result) == 32
    assert (Path(result.cubin_path or "").parent / "kernel.cu").read_bytes().endswith(data)
