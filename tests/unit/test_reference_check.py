"""A spec's reference is checked before anything runs (issue 35, case 1): a reference that is
missing, lacks its function, does not parse, raises, or returns what the spec's outputs are
not is bad input (exit 2) naming the file and the function, from every command that uses it,
with and without a GPU, for CUDA and C/C++ kernels alike; no run is stored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pragma_ncu import api
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import InputError, ReferenceCheckError
from pragma_ncu.spec.file import load_spec
from pragma_ncu.worker.inputs import drawn
from pragma_ncu.worker.reference import check_reference
from tests.scale_spec import LAUNCH, write_spec

CUDA = ('extern "C" __global__ void scale(const float* x, float* y, int n) {\n'
        '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2 * x[i];\n}\n')
C = "void scale(const float* x, float* y, int n) { for (int i = 0; i < n; i++) y[i] = 2 * x[i]; }\n"
GOOD = "import numpy as np\n\n\ndef scale(x, n):\n    return 2 * x\n"


def kernel(tmp_path: Path, reference: str | None = GOOD, *, target: str = "cuda",
           function: str = "reference.py:scale", dtype: str = "fp32",
           library: str = "numpy") -> Path:
    """A kernel, its spec and (unless None) its reference file; the kernel's path."""
    source = "scale.cu" if target == "cuda" else "scale.c"
    (tmp_path / source).write_text(CUDA if target == "cuda" else C)
    write_spec(tmp_path, source, dtype=dtype, launch=LAUNCH if target == "cuda" else "",
               shapes=(("big", 100000), ("odd", 37)),
               tail=f'[reference]\nfunction = "{function}"\nlibrary = "{library}"')
    if reference is not None:
        (tmp_path / "reference.py").write_text(reference)
    return tmp_path / source


BROKEN = [
    (None, "reference.py:scale", "no file"),
    (GOOD, "reference.py:scael", "defines no function scael (its functions: scale)"),
    ("def scale(x, n)\n    return 2 * x\n", "reference.py:scale", "reference.py:1: syntax error"),
    ("def scale(x, n):\n    raise ValueError('not yet')\n", "reference.py:scale",
     "the reference raised ValueError('not yet') (called at shape odd: n=37)"),
    ("def scale(x, n):\n    return x[:-1]\n", "reference.py:scale",
     "reference output 'y' has 36 elements, expected 37"),
    ("def scale(x, n):\n    return {'z': x}\n", "reference.py:scale",
     "returned no value for ['y']"),
    ("def scale(x, n):\n    return (x, x)\n", "reference.py:scale",
     "returned 2 arrays, expected 1"),
    ("def scale(x, n):\n    return None\n", "reference.py:scale",
     "the reference returned None for y"),
    ("import numpy as np\n\ndef scale(x, n):\n    return np.array(['a'] * n)\n",
     "reference.py:scale",
     "reference output 'y' is not numeric"),
    ("def scale(x, m):\n    return x\n", "reference.py:scale", "unexpected keyword argument 'n'"),
    ("import nosuchmodule\n\ndef scale(x, n):\n    return x\n", "reference.py:scale",
     "No module named 'nosuchmodule'"),
]


@pytest.mark.parametrize(("reference", "function", "said"), BROKEN)
def test_a_broken_reference_is_bad_input_naming_its_file_and_function(
        tmp_path: Path, reference: str | None, function: str, said: str) -> None:
    path = kernel(tmp_path, reference, function=function)
    with pytest.raises(ReferenceCheckError) as info:
        api.load(path)
    message = str(info.value)
    assert isinstance(info.value, InputError)
    assert said in message and f"reference {function}" in message, message
    assert str(tmp_path / "scale.toml") in message and "\n" not in message


def test_a_good_reference_passes_for_half_and_bfloat16_inputs(tmp_path: Path) -> None:
    for dtype in ("fp16", "bf16", "fp32", "fp64"):
        api.load(kernel(tmp_path, dtype=dtype))


def test_it_is_called_at_the_smallest_shape_on_the_inputs_a_worker_draws(
        tmp_path: Path) -> None:
    seen = tmp_path / "seen.npy"
    kernel(tmp_path, f"import numpy as np\n\ndef scale(x, n):\n    np.save({str(seen)!r}, x)\n"
                     "    return 2 * x\n")
    spec = load_spec(tmp_path / "scale.toml")
    check_reference(spec)
    task = spec.resolve(spec.shape_named("odd"))
    assert np.array_equal(np.load(seen), drawn(task.args, 0)["x"].astype(np.float32))


def test_what_the_reference_prints_stays_off_stdout(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    kernel(tmp_path, "def scale(x, n):\n    print('hello')\n    return 2 * x\n")
    check_reference(load_spec(tmp_path / "scale.toml"))
    out, err = capsys.readouterr()
    assert out == "" and "hello" in err


def test_a_torch_reference_is_read_not_run(tmp_path: Path) -> None:
    """It runs on the GPU with the worker's Python: here only its file is checked."""
    api.load(kernel(tmp_path, "import torch\n\ndef scale(x, n):\n    return 2 * x\n",
                    library="torch"))
    with pytest.raises(ReferenceCheckError, match="defines no function scale"):
        api.load(kernel(tmp_path, "import torch\n\ndef other(x, n):\n    return x\n",
                        library="torch"))


def test_bench_without_a_gpu_checks_the_reference(tmp_path: Path) -> None:
    """Issue 35's probe: a missing reference file was never checked without a GPU (exit 0)."""
    path = kernel(tmp_path, None)
    result = CliRunner().invoke(cli, ["bench", "--kernel", str(path)])
    assert result.exit_code == 2, result.output
    assert f"no file {tmp_path / 'reference.py'}" in result.output


@pytest.mark.parametrize("command", [
    ["tune", "--no-llm"], ["autotune"], ["profile"], ["bench"],
])
def test_every_command_refuses_it_before_a_store_or_a_worker(tmp_path: Path,
                                                             command: list[str]) -> None:
    """Issue 35's probe on the CPU: `tune` said "the original kernel fails verification"
    (exit 1) and left a failed run in .pragma-ncu/runs.sqlite."""
    path = kernel(tmp_path, "def scale(x, n):\n    return x[:3]\n", target="cpu")
    store = tmp_path / "state" / "runs.sqlite"
    extra = ["--store", str(store)] if command[0] == "tune" else []
    result = CliRunner().invoke(cli, [*command, "--kernel", str(path), *extra],
                                catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "reference reference.py:scale: reference output 'y' has 3 elements" in result.output
    assert not store.parent.exists()
