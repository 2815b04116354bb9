"""A parameter passed to the compiler as -DNAME=value that the kernel also declares as a name is
refused before anything is compiled, naming both and the line (issue 35, case 3): nvcc's only
word was `expected an identifier ... int 256 = blockDim.x`. An `#ifndef` knob of the file, a
plain use of a macro, a template argument and a jinja2 variable are not -D clashes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu import api
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import InputError, ParamNameClash
from tests.scale_spec import LAUNCH, write_spec

PROBE = """extern "C" __global__ void scale(const float* x, float* y, int n) {
    int block_size = blockDim.x;
    int i = blockIdx.x * block_size + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""


def write(tmp_path: Path, source: str, params: str, *, name: str = "scale.cu",
          kernel: str = "", launch: str = LAUNCH) -> Path:
    (tmp_path / name).write_text(source)
    write_spec(tmp_path, name, kernel=kernel, params=params, launch=launch)
    return tmp_path / name


def test_the_probe_says_the_parameter_is_a_macro_and_where_the_kernel_declares_it(
        tmp_path: Path) -> None:
    path = write(tmp_path, PROBE, "block_size = { default = 256, values = [128, 256] }",
                 launch='[launch]\ngrid = ["ceil_div(n, block_size)"]\nblock = ["block_size"]')
    result = CliRunner().invoke(cli, ["bench", "--kernel", str(path)])
    assert result.exit_code == 2, result.output
    assert ("parameter block_size is passed to nvcc as -Dblock_size=256, and the kernel also "
            "declares or uses block_size as a name at scale.cu:2 (int block_size = "
            "blockDim.x;): rename one") in result.output
    assert "expected an identifier" not in result.output  # nothing was compiled


@pytest.mark.parametrize(("source", "param", "line"), [
    (PROBE.replace("int n)", "int count)").replace("i < n", "i < count"), "count", 1),
    (PROBE, "x", 1),  # an argument, and threadIdx.x: both would become 256
    (PROBE.replace("2.0f * x[i]", "fminf(x[i], 1.0f)"), "fminf", 4),  # a call
    ("struct P { int lanes; };\n" + PROBE, "lanes", 1),  # a field
])
def test_declarations_members_and_calls_clash(tmp_path: Path, source: str, param: str,
                                              line: int) -> None:
    path = write(tmp_path, source, f"{param} = 4")
    with pytest.raises(ParamNameClash) as info:
        api.load(path)
    assert isinstance(info.value, InputError) and info.value.line == line
    assert f"-D{param}=4" in str(info.value)


def test_the_c_compiler_is_named_for_a_cpu_kernel(tmp_path: Path) -> None:
    source = "void scale(const float* x, float* y, int n) { int unroll = 4; (void)unroll; }\n"
    path = write(tmp_path, source, "unroll = 2", name="scale.c", launch="")
    with pytest.raises(ParamNameClash, match="passed to the C/C.. compiler as -Dunroll=2"):
        api.load(path)


@pytest.mark.parametrize(("source", "params", "kernel"), [
    # an #ifndef knob: meant to be a macro, whatever the file does with it
    ("#ifndef BLOCK\n#define BLOCK 256\n#endif\n" + PROBE.replace("block_size", "BLOCK"),
     "BLOCK = 256", ""),
    # a plain use of a macro the command line defines
    (PROBE.replace("int block_size = blockDim.x;", "const int stride = VEC * 2;"), "VEC = 4", ""),
    # a C++ template argument is not passed as -D
    ("template <int block_size> __global__ void scale(const float* x, float* y, int n) {"
     " int b = block_size; }\n", "block_size = 256", 'template_args = ["block_size"]'),
])
def test_macros_meant_as_macros_pass(tmp_path: Path, source: str, params: str,
                                     kernel: str) -> None:
    api.load(write(tmp_path, source, params, kernel=kernel))


def test_a_jinja2_variable_is_no_macro(tmp_path: Path) -> None:
    source = PROBE.replace("int block_size = blockDim.x;",
                           "int block_size = {{ block_size }};")
    api.load(write(tmp_path, source, "block_size = 256", name="scale.cu.j2"))
