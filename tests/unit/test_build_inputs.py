"""The compile cache's inputs: the compiler's dependency output read, and a build found again
only while every file it read hashes the same (no compiler needed: builds are faked)."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.build import compile as builds
from pragma_ncu.build.compile import BuildCache, BuildResult, cached_build, read_depfile


def edit(path: Path, text: str) -> None:
    """Write `text`, dated a second ago: the cache does not remember a build whose header
    was written within a clock tick of its compile (see the race test below)."""
    path.write_text(text)
    past = time.time_ns() - 10**9
    os.utime(path, ns=(past, past))


def test_depfile_of_nvcc_and_gcc_read_as_absolute_paths(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    own = tmp_path / "build-1234"
    nvcc = tmp_path / "nvcc.d"
    nvcc.write_text(f"{own}/kernel.cubin : {own}/kernel.cu \\\n    /usr/include/stdc-predef.h \\\n"
                    "    inc/tile.h\n")
    assert read_depfile(nvcc, own) == ("/usr/include/stdc-predef.h",
                                       str(tmp_path / "inc" / "tile.h"))
    gcc = tmp_path / "gcc.d"
    gcc.write_text(f"{own}/k.so: {own}/k.c /opt/my\\ lib/a.h /opt/cost$$/b.h \\\n"
                   " /opt/x\\#y.h /opt/my\\ lib/a.h\n")
    assert read_depfile(gcc, own) == ("/opt/my lib/a.h", "/opt/cost$/b.h", "/opt/x#y.h")
    assert read_depfile(tmp_path / "none.d", own) is None
    (tmp_path / "junk.d").write_text("no rule here")
    assert read_depfile(tmp_path / "junk.d", own) is None


def _fake_compile(header: Path, calls: list[int]) -> builds.Compile:
    """A compile that 'reads' `header` and records each run."""
    def compile_into(tmp: Path) -> tuple[BuildResult, tuple[str, ...] | None]:
        calls.append(1)
        (tmp / "kernel.cubin").write_bytes(header.read_bytes())
        result = BuildResult("ok", "k", "k", str(tmp / "kernel.cubin"), None, "", "sm_90", (),
                             "key")
        return result, (str(header),)
    return compile_into


def test_a_build_is_found_again_only_while_its_inputs_hash_the_same(tmp_path: Path) -> None:
    header = tmp_path / "tile.h"
    edit(header, "#define TILE 32\n")
    cache, calls = BuildCache(tmp_path / "cache"), []
    first = cached_build("a" * 64, cache, _fake_compile(header, calls))
    assert Path(first.cubin_path or "").read_text() == "#define TILE 32\n"
    hit = cached_build("a" * 64, cache, _fake_compile(header, calls))
    assert hit.cache_hit and hit.cubin_path == first.cubin_path and len(calls) == 1
    header.write_text("#define TILE 64\n")
    os.utime(header, ns=(1, 1))  # an old mtime: the content, not the time, decides
    second = cached_build("a" * 64, cache, _fake_compile(header, calls))
    assert not second.cache_hit and len(calls) == 2
    assert Path(second.cubin_path or "").read_text() == "#define TILE 64\n"
    assert cached_build("b" * 64, cache, _fake_compile(header, calls)).cache_hit is False


def test_a_build_whose_header_changed_while_compiling_is_not_remembered(tmp_path: Path) -> None:
    """ccache's guard: a file newer than the compile's start may not be what the compiler
    read, so that build serves its caller but no later lookup."""
    header = tmp_path / "tile.h"
    edit(header, "#define TILE 32\n")
    cache, calls = BuildCache(tmp_path / "cache"), []
    inner = _fake_compile(header, calls)

    def racing(tmp: Path) -> tuple[BuildResult, tuple[str, ...] | None]:
        result = inner(tmp)
        header.write_text("#define TILE 32\n")  # rewritten during the compile
        return result

    first = cached_build("c" * 64, cache, racing)
    assert first.ok and Path(first.cubin_path or "").is_file()
    assert not cached_build("c" * 64, cache, inner).cache_hit and len(calls) == 2


def test_no_dependency_output_means_no_cache(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "cache")

    def failing(tmp: Path) -> tuple[BuildResult, tuple[str, ...] | None]:
        return builds.failed_build("k", "sm_90", "fatal error: tile.h: No such file"), None

    assert cached_build("d" * 64, cache, failing).status == "compile_error"
    assert not cached_build("d" * 64, cache, failing).cache_hit
    assert not list((tmp_path / "cache").rglob("build.json"))


@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", '[{"inputs": 3, "entry": 4}]'])
def test_a_damaged_manifest_is_a_miss_not_an_error(tmp_path: Path, damage: str) -> None:
    header = tmp_path / "tile.h"
    edit(header, "x")
    cache, calls = BuildCache(tmp_path / "cache"), []
    cached_build("e" * 64, cache, _fake_compile(header, calls))
    cache.manifest("e" * 64).write_text(damage)
    again = cached_build("e" * 64, cache, _fake_compile(header, calls))
    assert not again.cache_hit and len(calls) == 2
    assert replace(again, cache_hit=True) == cached_build("e" * 64, cache,
                                                          _fake_compile(header, calls))


def test_the_compilers_environment_is_in_the_key(tmp_path: Path) -> None:
    """NVCC_APPEND_FLAGS, CPATH, ... change what a compiler builds without a flag of ours."""
    from pragma_ncu.backends.cpu.build import CompilerInfo, cache_key
    from pragma_ncu.build.compile import BuildRequest
    from pragma_ncu.infra.settings import load_settings

    env = {"HOME": str(tmp_path), "NVCC_APPEND_FLAGS": "-G", "CPATH": "/opt/inc", "OTHER": "x"}
    assert load_settings(env).compiler_env == (("NVCC_APPEND_FLAGS", "-G"),
                                               ("CPATH", "/opt/inc"))
    req = BuildRequest(source="int f(void) { return 1; }", source_name="f.c", kernel_name="f",
                       arch="host")
    cc = CompilerInfo("/usr/bin/cc", "cc 13", None)
    assert cache_key(req, cc) != cache_key(req, replace(cc, environment=(("CPATH", "/a"),)))
