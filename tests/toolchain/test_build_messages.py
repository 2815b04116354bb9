"""What a failed build tells the user, on every path that builds a kernel (nvcc and cc are
present in CI; no GPU is needed: each path compiles before it needs one, or stops where it
finds none after compiling): the compiler's own first error lines, and for a kernel missing
from its source the same words as the check before building (tests/unit/test_kernel_found)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pragma_ncu import api
from pragma_ncu.infra.errors import PragmaError
from tests.scale_spec import one_block, write_spec

pytestmark = pytest.mark.toolchain

BROKEN = 'extern "C" __global__ void scale(float* y, int n) { int q = ; }\n'


def kernel(tmp_path: Path, text: str, name: str = "scale", source: str = "k.cu") -> Path:
    (tmp_path / source).write_text(text)
    write_spec(tmp_path, source, file="k.toml", name=name, launch=one_block(64, source),
               arrays=(("y", "output"),), shapes=(("small", 64),))
    return tmp_path / source


@pytest.fixture
def settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    from pragma_ncu.infra.settings import load_settings

    return load_settings().with_(cache_dir=tmp_path / "cache")


def test_the_build_says_a_kernel_is_missing_in_the_words_of_the_early_check(
        tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    """The source includes a header, so only the build can tell; it says the same."""
    (tmp_path / "k.h").write_text("#define N 4\n")
    path = kernel(tmp_path, '#include "k.h"\n' + BROKEN.replace("int q = ;", ""), "typo")
    report = api.bench(path, settings=settings)
    assert report.build.status == "kernel_not_found"
    assert report.build.problem == "no kernel named typo in k.cu (it defines: scale)"


def test_a_kernel_the_build_cannot_find_is_bad_input_for_bench_and_tune(
        tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    """Found missing by the build (the source includes a header), the kernel is still the
    spec's mistake: exit 2 by the contract, from bench and from tune's no-GPU check alike."""
    from click.testing import CliRunner

    from pragma_ncu.cli.main import cli

    (tmp_path / "k.h").write_text("#define N 4\n")
    path = kernel(tmp_path, '#include "k.h"\n' + BROKEN.replace("int q = ;", ""), "typo")
    env = {"PRAGMA_NCU_CACHE": str(tmp_path / "cache")}
    for args in (["bench", "--kernel", str(path)],
                 ["tune", "--kernel", str(path), "--store", str(tmp_path / "runs.sqlite")]):
        result = CliRunner().invoke(cli, args, env=env)
        assert result.exit_code == 2, (args[0], result.output)
        assert "no kernel named typo in k.cu (it defines: scale)" in result.output
    assert not (tmp_path / "runs.sqlite").exists()


def test_a_cpu_function_with_cxx_linkage_is_named_with_the_fix(tmp_path: Path,
                                                              settings) -> None:  # type: ignore[no-untyped-def]
    path = kernel(tmp_path, "void scale(float* y, int n) { }\n", source="k.cpp")
    with pytest.raises(PragmaError) as info:
        api.profile(path, settings=settings)
    message = str(info.value)
    assert message.startswith("no kernel named scale in k.cpp (it defines: _Z5scalePfi)")
    assert 'declare it extern "C"' in message


def test_nvccs_message_reaches_every_command(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    """explain and triage on a kernel that does not compile dropped nvcc's message."""
    path = kernel(tmp_path, BROKEN)
    said = "k.cu(1): error: expected an expression"
    assert said in api.bench(path, settings=settings).build.problem
    assert said in api.profile(path, settings=settings).problem
    for call in (lambda: api.explain(path, settings=settings),
                 lambda: api.triage(path, path, settings=settings, out=tmp_path / "triage"),
                 lambda: api.tune(path, api.TuneOptions(store=tmp_path / "runs.sqlite", rounds=1),
                                  settings=settings)):
        with pytest.raises(PragmaError) as info:
            call()
        assert said in str(info.value), str(info.value)
        assert "k.cu does not compile" in str(info.value)


def test_the_c_compilers_message_reaches_profile(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    path = kernel(tmp_path, 'extern "C" void scale(float* y, int n) { int q = ; }\n',
                  source="k.cpp")
    with pytest.raises(PragmaError) as info:
        api.profile(path, settings=settings)
    assert "k.cpp does not compile" in str(info.value)
    assert re.search(r"k\.cpp:1:\d+: error: expected", str(info.value))  # gcc's or clang's
