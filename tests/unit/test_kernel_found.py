"""'no kernel named X in foo.cu (it defines: a, b)' before anything is built, wherever a kernel
source is given, when the source certainly lacks it; when code it does not show could define
the kernel (a local header, an include folder, token pasting) the build decides, in the same
words (tests/toolchain/test_build_messages.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu import api
from pragma_ncu.build.compile import compiler_excerpt
from pragma_ncu.draft import check_kernel
from pragma_ncu.infra.errors import InputError, KernelNotFound
from pragma_ncu.spec.file import load_spec
from tests.scale_spec import one_block, write_spec

CUDA = """#include <cuda_fp16.h>
// typo_kernel appears in this comment only
extern "C" __global__ void scale(float* y, const float* x, int n) { }
template <int B> __global__ void tiled(float* y) { }
__device__ float helper(float v) { return v; }
"""
C_SOURCE = """#include <math.h>
static void hidden(float* y) { }
void conv1d(float* y, const float* x, int n) { }
int main(void) { return 0; }
"""


def spec_for(tmp_path: Path, name: str, text: str, source: str = "k.cu",
             flags: str = "[]", params: str = ""):  # type: ignore[no-untyped-def]
    (tmp_path / source).write_text(text)
    return load_spec(write_spec(tmp_path, source, file="k.toml", name=name,
                                kernel=f"flags = {flags}", params=params,
                                launch=one_block(64, source), arrays=(("y", "output"),),
                                shapes=((None, 64),)))


def test_a_missing_kernel_is_named_with_the_kernels_the_file_defines(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, "typo_kernel", CUDA)
    with pytest.raises(KernelNotFound) as info:
        check_kernel(spec)
    assert str(info.value) == "no kernel named typo_kernel in k.cu (it defines: scale, tiled)"
    assert isinstance(info.value, InputError)


def test_every_command_that_takes_a_source_checks_it_first(tmp_path: Path) -> None:
    """bench, profile, tune, autotune, explain and triage all load their spec through
    api.load; a spec built in Python is checked the same way."""
    spec = spec_for(tmp_path, "typo_kernel", CUDA)
    for given in (tmp_path / "k.cu", tmp_path / "k.toml", spec):
        with pytest.raises(KernelNotFound, match="it defines: scale, tiled"):
            api.load(given)
    with pytest.raises(KernelNotFound):
        api.triage(tmp_path / "k.cu", tmp_path / "k.cu")
    with pytest.raises(KernelNotFound):
        api.explain(tmp_path / "k.cu")


def test_the_cpu_target_lists_what_its_shared_object_could_export(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, "conv2d", C_SOURCE, source="k.c")
    with pytest.raises(KernelNotFound, match=r"no kernel named conv2d in k\.c \(it defines: "
                                             r"conv1d\)$"):
        check_kernel(spec)
    empty = spec_for(tmp_path, "conv2d", "", source="k.c")
    with pytest.raises(KernelNotFound, match=r"\(it defines: no kernel\)"):
        check_kernel(empty)


@pytest.mark.parametrize(("text", "flags"), [
    (CUDA.replace("scale", "typo_kernel"), "[]"),  # defined: fine
    ('#include "kernels.cuh"\n' + CUDA, "[]"),  # a local header may define it
    ("#include <kernels.cuh>\n" + CUDA, '["-Iinclude"]'),  # so may one in an include folder
    ("#include KERNELS_HEADER\n" + CUDA, "[]"),  # a header named by a macro
    ("#define K(n) __global__ void typo_##n() {}\nK(kernel)\n" + CUDA, "[]"),  # pasted
    (CUDA + "__global__ void launcher() { typo_kernel<<<1, 1>>>(); }\n", "[]"),  # named
])
def test_where_other_code_could_define_the_kernel_the_build_decides(
        tmp_path: Path, text: str, flags: str) -> None:
    check_kernel(spec_for(tmp_path, "typo_kernel", text, flags=flags))


def test_a_template_is_checked_as_rendered_at_its_defaults(tmp_path: Path) -> None:
    template = "__global__ void {{ NAME }}(float* y, int n) { }\n"
    check_kernel(spec_for(tmp_path, "scale_v2", template, source="k.cu.j2",
                          params='NAME = "scale_v2"'))
    with pytest.raises(KernelNotFound, match="it defines: scale_v1"):
        check_kernel(spec_for(tmp_path, "scale_v2", template, source="k.cu.j2",
                              params='NAME = "scale_v1"'))


def test_the_compilers_first_error_lines_are_kept() -> None:
    log = ("k.cu(3): warning #177-D: variable \"q\" was declared but never referenced\n\n"
           "k.cu: In function 'k':\nk.cu(9): error: expected an expression\n"
           "    int x = ;\n            ^\n" + "".join(f"k.cu({i}): error: more\n"
                                                     for i in range(20))
           + "\n21 errors detected in the compilation of \"k.cu\".\n")
    excerpt = compiler_excerpt(log)
    lines = excerpt.splitlines()
    assert lines[0] == "k.cu: In function 'k':" and "expected an expression" in lines[1]
    assert len(lines) == 13 and lines[-1] == "... (13 more lines)"
    assert compiler_excerpt("") == "(the compiler said nothing)"
    assert compiler_excerpt("nvcc did not finish within 600 s") == (
        "nvcc did not finish within 600 s")


def test_a_kernel_file_that_is_not_there_is_an_input_error(tmp_path: Path) -> None:
    from pragma_ncu.infra.errors import SourceError

    with pytest.raises(SourceError, match="kernel file not found"):
        api.load(tmp_path / "none.cu")
    spec = spec_for(tmp_path, "scale", CUDA)
    (tmp_path / "k.cu").unlink()
    with pytest.raises(InputError, match="kernel.source"):
        api.load(spec)


@pytest.mark.parametrize("args", [["bench", "--kernel", "{d}"], ["tune", "--kernel", "{d}"],
                                  ["profile", "--kernel", "{d}"], ["init", "{d}"],
                                  ["explain", "{d}.cu"], ["triage", "{d}.cu", "{d}.cu"]])
def test_a_directory_given_as_the_kernel_says_it_is_a_directory(tmp_path: Path,
                                                                 args: list[str]) -> None:
    """Issue 35: a directory given as the kernel said "kernel file not found"."""
    from click.testing import CliRunner

    from pragma_ncu.cli.main import cli

    for folder in (tmp_path / "src", tmp_path / "src.cu"):
        folder.mkdir(exist_ok=True)
    result = CliRunner().invoke(cli, [a.format(d=tmp_path / "src") for a in args])
    assert result.exit_code == 2, result.output
    assert "is a directory, not a kernel file" in result.output
    assert "not found" not in result.output
