"""Specs are checked before anything runs: every shape resolves at the defaults, integer scalars
fit their types, dims are positive 64-bit integers, and the arrays fit in memory (the stated
limit when the spec is read, the device's once its worker said what it has)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from pragma_ncu.api.common import shapes_of
from pragma_ncu.infra.errors import InputError, SpecError
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.pool.runner import HostInfo, Runner
from pragma_ncu.spec.file import check_shapes, load_spec
from pragma_ncu.spec.model import MEMORY_LIMIT_BYTES, Memory, Shape
from pragma_ncu.worker.guards import GUARD_BYTES, worker_memory
from tests.scale_spec import scale_spec, write_spec


def text(n: int | str, n_type: str = "int32", name: str = "s") -> str:
    """The scale spec (no source line: scale.cu) with the scalar n in `n_type`, one shape."""
    return scale_spec(n_type=n_type, shapes=((name, n),))


def spec_at(tmp_path: Path, n: int | str, n_type: str = "int32", name: str = "s"):  # type: ignore[no-untyped-def]
    (tmp_path / "scale.cu").write_text('extern "C" __global__ void scale() {}\n')
    return load_spec(write_spec(tmp_path, n_type=n_type, shapes=((name, n),)))


def test_a_dimension_of_ten_to_the_twelve_is_refused_at_the_spec_check(tmp_path: Path) -> None:
    """Issue 25: it passed the spec check and the run failed later, blaming the kernel."""
    with pytest.raises(SpecError) as info:
        spec_at(tmp_path, 10**12, name="huge")
    message = str(info.value)
    assert "shapes[0] (huge): args.n" in message and "int32 holds" in message
    assert "1000000000000" in message and "\n" not in message


def test_arrays_beyond_the_stated_limit_are_refused_naming_the_largest(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        spec_at(tmp_path, 10**12, n_type="int64", name="huge")  # 2 x 4 TB of fp32
    message = str(info.value)
    assert "shapes[0] (huge)" in message and "args.x alone 3.6 TiB" in message
    assert "1.0 TiB" in message and "spec.MEMORY_LIMIT_BYTES" in message
    assert MEMORY_LIMIT_BYTES == 2**40


@pytest.mark.parametrize(("n_type", "n", "ok"), [
    ("int32", 2**31 - 1, True), ("int32", 2**31, False), ("uint32", 2**31, True),
    ("uint32", 2**32, False), ("int8", 127, True), ("int8", 128, False), ("uint8", 255, True),
    ("uint8", 256, False), ("int64", 2**38, True),  # 2**40: a grid beyond CUDA's 2**31 - 1
])
def test_integer_scalars_fit_their_type(tmp_path: Path, n_type: str, n: int, ok: bool) -> None:
    small = Memory(2**62, "a test")  # the range is what is checked here, not the memory
    (tmp_path / "scale.cu").write_text("")
    path = tmp_path / "scale.toml"
    path.write_text(text(1, n_type))
    spec = load_spec(path)
    shape = Shape("big", (("n", n),))
    if ok:
        check_shapes(spec, [shape], small)
    else:
        with pytest.raises(SpecError, match=f"args.n.*{n_type} holds"):
            check_shapes(spec, [shape], small)


@pytest.mark.parametrize("n", ["0", "-4", "9223372036854775808", "true", "1.5"])
def test_dims_are_positive_64_bit_integers(tmp_path: Path, n: str) -> None:
    with pytest.raises(SpecError, match=r"shapes\[0\]\.n.*a positive integer below 2\*\*63"):
        spec_at(tmp_path, n)


def test_a_worker_adds_its_guard_regions_and_input_copies(tmp_path: Path) -> None:
    spec = spec_at(tmp_path, 1 << 20)  # x and y: 4 MiB each
    exact = 2 * (4 << 20)
    check_shapes(spec, memory=Memory(exact, "arrays alone"))
    with_worker = worker_memory(exact + 4 * GUARD_BYTES + (4 << 20), "a small GPU")
    check_shapes(spec, memory=with_worker)  # x, y, their guards and x's copy: exactly
    with pytest.raises(SpecError, match=r"arrays within 12\.0 MiB \(the memory of a small GPU, "
                                        r"counting the worker's guard regions"):
        check_shapes(spec, memory=worker_memory(with_worker.limit - 1, "a small GPU"))


def test_a_shape_given_on_the_command_line_is_checked_too(tmp_path: Path) -> None:
    spec = spec_at(tmp_path, 1024)
    assert shapes_of(spec, ["n=2048"])[0].as_dict() == {"n": 2048}
    with pytest.raises(SpecError, match="shape n=4294967296: args.n"):
        shapes_of(spec, ["n=4294967296"])
    with pytest.raises(SpecError, match="positive integer"):
        shapes_of(spec, ["n=0"])


class Host:
    """A runner whose worker says it runs on a host with `memory_bytes` of memory."""

    def __init__(self, memory_bytes: int) -> None:
        self.info = HostInfo("test host", 2, 1 << 20, 1 << 15, memory_bytes, "x86_64", "6.0")

    def hello(self) -> HostInfo:
        return self.info


def test_the_devices_memory_is_checked_once_the_worker_said_it(tmp_path: Path) -> None:
    """A CPU kernel profiled on a host of 64 MiB: refused before anything is built."""
    from pragma_ncu.backends.cpu.profiling import profile_kernel

    (tmp_path / "scale.c").write_text("void scale(float* x, float* y, int n) {}\n")
    spec = load_spec(write_spec(tmp_path, "scale.c", launch="",
                                shapes=(("big", 16 << 20),)))  # 64 MiB per array
    runner = cast(Runner, cast(Any, Host(64 << 20)))
    with pytest.raises(SpecError, match=r"shapes\[0\] \(big\).*the memory of this host "
                                        r"\(test host\)") as info:
        profile_kernel(spec, spec.shapes[0], load_settings(), runner, tmp_path / "out")
    assert isinstance(info.value, InputError)
    assert not (tmp_path / "out").exists()


# --- issue 35: every number of a spec is finite and in range when the spec is read ----------

def _with(tmp_path: Path, old: str, new: str) -> Path:
    (tmp_path / "scale.cu").write_text('extern "C" __global__ void scale() {}\n')
    path = tmp_path / "scale.toml"
    path.write_text(text(1024).replace(old, new, 1))
    return path


@pytest.mark.parametrize(("old", "new", "field"), [
    ("[[args]]", "[tolerance]\nfp32 = { atol = nan, rtol = 1e-5 }\n[[args]]",
     "tolerance.fp32.atol"),
    ("[[args]]", "[tolerance]\nfp32 = { atol = 1e-5, rtol = inf }\n[[args]]",
     "tolerance.fp32.rtol"),
    ("[[args]]", "[tolerance]\nfp32 = { atol = -inf }\n[[args]]", "tolerance.fp32.atol"),
    ("[[args]]", "[tolerance]\nmax_bad_fraction = nan\n[[args]]", "tolerance.max_bad_fraction"),
    ("[launch]", "[params]\nBLOCK = nan\n[launch]", "params.BLOCK"),
    ("[launch]", "[params]\nBLOCK = { default = 256, values = [128, inf] }\n[launch]",
     "params.BLOCK.values"),
    ('block = ["256"]', "block = [inf]", "launch.block[0]"),
    ('value = "n"', "value = nan", "args[2].value"),
    ('role = "input"', 'role = "input"\ninit = { dist = "normal", mean = 0.0, std = inf }',
     "args[0].init.std"),
    ('role = "input"', 'role = "input"\ninit = { dist = "normal", mean = 0.0, std = -1.0 }',
     "args[0].init.std"),
    ('role = "input"', 'role = "input"\ninit = { dist = "uniform", low = 2.0, high = 1.0 }',
     "args[0].init.high"),
])
def test_every_number_of_a_spec_is_finite_and_in_range(tmp_path: Path, old: str, new: str,
                                                       field: str) -> None:
    """Issue 35: `atol = nan` passed, and the run blamed the kernel (exit 1 on the CPU; exit 0
    with nothing said for CUDA without a GPU)."""
    with pytest.raises(SpecError) as info:
        load_spec(_with(tmp_path, old, new))
    assert info.value.field == field, str(info.value)
    assert any(word in info.value.expected for word in ("finite", "[0, 1)", ">= 0", "above low")
               ), str(info.value)


def test_atol_nan_exits_2_before_anything_is_compiled(tmp_path: Path) -> None:
    """Issue 35's probe through the command: bad input (2), not "no GPU, checked" (0)."""
    from click.testing import CliRunner

    from pragma_ncu.cli.main import cli

    path = _with(tmp_path, "[[args]]", "[tolerance]\nfp32 = { atol = nan }\n[[args]]")
    result = CliRunner().invoke(cli, ["bench", "--kernel", str(tmp_path / "scale.cu"),
                                      "--spec", str(path)])
    assert result.exit_code == 2, result.output
    assert "tolerance.fp32.atol" in result.output and "nan" in result.output


# --- issue 35: a launch no GPU can run is refused without one ------------------------------

@pytest.mark.parametrize(("block", "grid", "field", "value"), [
    ('["100000"]', '["ceil_div(n, 256)"]', "launch.block", 100000),
    ('["32", "32", "2"]', '["1"]', "launch.block", 2048),
    ('["1", "1", "128"]', '["1"]', "launch.block[2]", 128),
    ('["256"]', '["1", "70000"]', "launch.grid[1]", 70000),
    ('["256"]', '["1", "1", "65536"]', "launch.grid[2]", 65536),
])
def test_a_launch_beyond_the_cuda_limits_is_bad_input(tmp_path: Path, block: str, grid: str,
                                                      field: str, value: int) -> None:
    path = _with(tmp_path, 'grid = ["ceil_div(n, 256)"]\nblock = ["256"]',
                 f"grid = {grid}\nblock = {block}")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.field == f"shapes[0] (s): {field}", str(info.value)
    assert info.value.got == value and "at most" in info.value.expected


def test_bench_without_a_gpu_refuses_a_block_of_100000_threads(tmp_path: Path) -> None:
    """Issue 35's probe: compiled and exit 0; now exit 2 naming the shape and the value, from
    the spec's default and from --param alike."""
    from click.testing import CliRunner

    from pragma_ncu.cli.main import cli

    path = _with(tmp_path, 'grid = ["ceil_div(n, 256)"]\nblock = ["256"]',
                 'grid = ["ceil_div(n, BLOCK)"]\nblock = ["BLOCK"]\n[params]\nBLOCK = 100000')
    kernel = str(tmp_path / "scale.cu")
    result = CliRunner().invoke(cli, ["bench", "--kernel", kernel, "--spec", str(path)])
    assert result.exit_code == 2, result.output
    assert "shapes[0] (s): launch.block" in result.output and "100000" in result.output
    path.write_text(path.read_text().replace("BLOCK = 100000", "BLOCK = 256"))
    result = CliRunner().invoke(cli, ["bench", "--kernel", kernel, "--spec", str(path),
                                      "--param", "BLOCK=4096"])
    assert result.exit_code == 2, result.output
    assert "threads per block at most 1024" in result.output
    assert "with BLOCK=4096" in result.output and "4096" in result.output
