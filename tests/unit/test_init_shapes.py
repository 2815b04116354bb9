"""`init` reads the launch from the kernel's indexing (issue 35, case 8): one thread per element,
per 4 elements, a grid-stride loop, one thread per row, a block per row or per output column,
a warp per row, a 2-D tile; it says in the drafted spec and in its output which shape it
assumed, and where it cannot tell a count, a placeholder says what. Before, every launch was
drafted "one thread per element of out". The kernels are tests/fixtures/init_shapes/*.cu.

And one spec serves a second kernel of the same signature: `--kernel-name` runs the file's
kernel in place of the spec's, and the error where the spec's kernel is not in the file names
the file's one kernel of the spec's signature."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pragma_ncu import api
from pragma_ncu.cli.main import cli
from pragma_ncu.draft import draft_spec, write_draft
from pragma_ncu.infra.errors import KernelNotFound
from pragma_ncu.spec.file import parse_spec, placeholders

SHAPES = Path(__file__).resolve().parents[1] / "fixtures" / "init_shapes"

# kernel file -> (grid, block, the words of the shape init assumed)
EXPECTED = {
    "element.cu": (["ceil_div(n, BLOCK)"], ["BLOCK"], "one thread per element (i < n)"),
    "vector4.cu": (["ceil_div(n, BLOCK * 4)"], ["BLOCK"], "one thread per 4 elements (i < n)"),
    "grid_stride.cu": (["ceil_div(n, BLOCK)"], ["BLOCK"],
                       "a grid-stride loop over i < n: any grid covers it"),
    "row_thread.cu": (["ceil_div(rows, BLOCK)"], ["BLOCK"],
                      "one thread per row, looping over its work (row < rows)"),
    "row_block.cu": (["rows"], ["BLOCK"], "one block per output (row = blockIdx.x, row < rows: "
                     "the integer argument its threads do not stride over)"),
    "row_warp.cu": (["ceil_div(rows * 32, BLOCK)"], ["BLOCK"],
                    "one warp per row (warp < rows): 32 threads each"),
    "column_block.cu": (["cols"], ["256"], "one block per output (col = blockIdx.x, col < cols)"),
    "tile2d.cu": (["ceil_div(cols, TILE)", "ceil_div(rows, TILE)"], ["TILE", "TILE"],
                  "a 2-D tile: col over x (col < cols), row over y (row < rows)"),
    "flat_count.cu": (["ceil_div(rows * cols, BLOCK)"], ["BLOCK"],
                      "one thread per element (i < rows * cols)"),
    "opaque.cu": (["ceil_div(<fill: the value of total, which i stays below>, BLOCK)"],
                  ["BLOCK"], "one thread per element (i < total)"),
}
FILL = re.compile(r"<fill[^>]*>")


def test_every_fixture_is_covered() -> None:
    assert sorted(p.name for p in SHAPES.glob("*.cu")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_init_reads_the_launch_from_the_indexing(tmp_path: Path, name: str) -> None:
    shutil.copy(SHAPES / name, tmp_path / name)
    result = CliRunner().invoke(cli, ["init", str(tmp_path / name), "--reference", "none"])
    assert result.exit_code == 0, result.output
    grid, block, words = EXPECTED[name]
    text = (tmp_path / name).with_suffix(".toml").read_text()
    data = tomllib.loads(text)
    assert data["launch"]["grid"] == grid and data["launch"]["block"] == block
    assert words in text.split("[launch]")[1].splitlines()[1]  # the grid's comment says it
    (said,) = [line for line in result.output.splitlines() if line.startswith("launch: ")]
    assert words in said and said.endswith(f": grid {grid}, block {block}"), said
    assert ("launch.grid[0]" in placeholders(data)) == name.startswith("opaque")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_drafted_spec_loads_once_filled(tmp_path: Path, name: str) -> None:
    """Its placeholders filled (sizes of 64, values of 1.5), the spec loads and its launch
    covers the work at that shape."""
    shutil.copy(SHAPES / name, tmp_path / name)
    draft = draft_spec(tmp_path / name, reference=None)
    write_draft(draft)
    spec = parse_spec(_filled(tomllib.loads(draft.spec_text)), draft.spec_path,
                      tmp_path / name)
    launch = spec.resolve(spec.shapes[0]).launch
    assert min(launch.grid) >= 1 and launch.threads_per_block <= 1024


def _filled(data: Any) -> Any:
    """Every placeholder filled as a user might: array sizes and dims 64, values 1.5."""
    if isinstance(data, dict):
        return {k: (1.5 if k == "value" and isinstance(v, str) and FILL.fullmatch(v)
                    else _filled(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [_filled(v) for v in data]
    if isinstance(data, str) and FILL.search(data):
        return 64 if FILL.fullmatch(data) else FILL.sub("64", data)
    return data


# --- one spec, two kernels of the same signature --------------------------------------------

NAIVE = """extern "C" __global__ void naive_kernel(float* y, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""
EXPERT = """extern "C" __global__ void expert_kernel(float* y, const float* x, int n)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (i < n) y[i] = 2.0f * x[i];
    if (i + 1 < n) y[i + 1] = 2.0f * x[i + 1];
}
__global__ void other(float* y, int n) { }
"""


@pytest.fixture
def variants(tmp_path: Path) -> Path:
    (tmp_path / "naive.cu").write_text(NAIVE)
    (tmp_path / "expert.cu").write_text(EXPERT)
    write_draft(draft_spec(tmp_path / "naive.cu", reference=None))
    spec = tmp_path / "naive.toml"
    spec.write_text(spec.read_text().replace('shape = ["<fill>"]', 'shape = ["n"]')
                    .replace('n = "<fill>"', "n = 1000")
                    .replace("BLOCK = { default = 256 }",
                             "BLOCK = { default = 256, values = [128, 256] }"))
    return tmp_path


def test_a_spec_of_the_same_signature_names_the_variant_to_run(variants: Path) -> None:
    """Issue 35: "no kernel named naive_kernel in expert.cu", and nothing more."""
    result = CliRunner().invoke(cli, ["bench", "--kernel", str(variants / "expert.cu"),
                                      "--spec", str(variants / "naive.toml")])
    assert result.exit_code == 2, result.output
    assert ("no kernel named naive_kernel in expert.cu (it defines: expert_kernel, other); its "
            "one kernel of the spec's signature is expert_kernel: to run it with this spec, use "
            "--kernel-name expert_kernel") in result.output


@pytest.mark.parametrize("command", ["bench", "tune", "autotune", "profile"])
def test_kernel_name_runs_the_variant_with_the_spec(variants: Path, command: str) -> None:
    args = [command, "--kernel", str(variants / "expert.cu"), "--spec",
            str(variants / "naive.toml"), "--kernel-name", "expert_kernel"]
    if command == "tune":
        args += ["--store", str(variants / "store" / "runs.sqlite")]
    result = CliRunner().invoke(cli, args)
    assert "no kernel named" not in result.output, result.output
    if command in ("bench", "tune"):  # no GPU here: checked and compiled, exit 0
        assert result.exit_code == 0, result.output
        assert "expert_kernel" in result.output or command == "tune"
    else:  # autotune and profile need a GPU: the environment (3), after the spec checked out
        assert result.exit_code == 3, result.output


def test_the_api_takes_it_too(variants: Path) -> None:
    task = api.load(variants / "expert.cu", variants / "naive.toml", "expert_kernel")
    assert task.kernel_name == "expert_kernel" and task.source_path.name == "expert.cu"
    with pytest.raises(KernelNotFound, match="use --kernel-name expert_kernel"):
        api.load(variants / "expert.cu", variants / "naive.toml")
    with pytest.raises(KernelNotFound, match=r"no kernel named nope .*defines: expert_kernel"):
        api.load(variants / "expert.cu", variants / "naive.toml", "nope")
