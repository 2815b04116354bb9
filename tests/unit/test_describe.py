"""A task described in Python (`pragma_ncu.spec.describe`) is the TaskSpec its TOML twin gives, goes
through the same validator, and works with the library's entry points."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pragma_ncu.backends.cuda.bench import run_bench
from pragma_ncu.backends.cuda.worker import worker_command
from pragma_ncu.infra.errors import SpecError
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.pool.runner import Runner
from pragma_ncu.spec.describe import Arg, task_spec
from pragma_ncu.spec.file import load_spec
from pragma_ncu.worker.reference import load_function

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
LLAMA = {"llama-7b": {"T": 4096, "d": 11008}, "llama-13b": {"T": 4096, "d": 13824},
         "llama-70b": {"T": 2048, "d": 28672}, "odd": {"T": 37, "d": 1001}}


def silu_and_mul(**overrides: object):  # type: ignore[no-untyped-def]
    kwargs: dict = dict(
        args=[Arg.output("out", "fp16", ["T", "d"]),
              Arg.input("x", "fp16", ["T", "2 * d"], init={"dist": "normal", "mean": 0.0,
                                                          "std": 1.0}),
              Arg.scalar("d", "int32", "d")],
        shapes=LLAMA, launch={"grid": ["T"], "block": ["BLOCK"], "shared_mem": "0"},
        params={"BLOCK": {"default": 256, "values": [64, 128, 256, 512, 1024]}},
        flags=["-O3"], tolerance={"fp16": (1e-2, 1e-2)},
        reference="reference.py:silu_and_mul")
    kwargs.update(overrides)
    return task_spec(EXAMPLES / "silu_and_mul.cu", **kwargs)


def test_the_python_description_is_the_toml_spec() -> None:
    toml = load_spec(EXAMPLES / "silu_and_mul.toml", EXAMPLES / "silu_and_mul.cu")
    assert silu_and_mul() == toml


def test_inouts_inits_tolerances_and_metrics_too() -> None:
    toml = load_spec(EXAMPLES / "fused_add_rmsnorm.toml", EXAMPLES / "fused_add_rmsnorm.cu")
    normal = {"dist": "normal", "mean": 0.0, "std": 1.0}
    built = task_spec(
        EXAMPLES / "fused_add_rmsnorm.cu",
        args=[Arg.inout("input", "bf16", ["T", "H"], init=normal),
              Arg.inout("residual", "bf16", ["T", "H"], init=normal),
              {"name": "weight", "dtype": "bf16", "shape": ["H"], "role": "input",
               "init": {"dist": "uniform", "low": 0.5, "high": 1.5}},  # a plain table works too
              Arg.scalar("eps", "fp32", 1e-6), Arg.scalar("H", "int32", "H")],
        shapes=[{"name": "llama-7b", "T": 4096, "H": 4096},
                {"name": "llama-13b", "T": 4096, "H": 5120},
                {"name": "llama-70b", "T": 4096, "H": 8192}, {"name": "odd", "T": 37, "H": 1001}],
        launch={"grid": ["T"], "block": ["BLOCK"], "shared_mem": "0"},
        params={"BLOCK": {"default": 256, "values": [64, 128, 256, 512, 1024]}}, flags=["-O3"],
        tolerance={"bf16": {"atol": 1e-2, "rtol": 1e-2}},
        reference="reference.py:fused_add_rmsnorm")
    assert built == toml


def test_bad_fields_are_the_validators_errors() -> None:
    with pytest.raises(SpecError, match=r"task_spec\(.*silu_and_mul.cu\): field 'args\[0\].role'"):
        silu_and_mul(args=[Arg("out", "fp16", "outptu", ("T",))])
    with pytest.raises(SpecError, match="a value for 'd'"):
        silu_and_mul(shapes={"small": {"T": 4}})
    with pytest.raises(SpecError, match="<fill>"):
        silu_and_mul(shapes={"draft": {"T": "<fill>", "d": 1}})
    with pytest.raises(SpecError, match="reference.library"):
        silu_and_mul(reference_library="jax")


def test_a_module_function_is_imported_by_the_worker_from_its_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "refs"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "act.py").write_text("def silu_and_mul(x, d):\n    return x[:, :d]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from refs.act import silu_and_mul as fn  # type: ignore[import-not-found]

    spec = silu_and_mul(reference=fn, reference_library="torch")
    assert spec.reference.function == "refs.act:silu_and_mul"
    assert spec.reference.base_dir == tmp_path.resolve() and spec.reference.library == "torch"
    monkeypatch.delitem(sys.modules, "refs.act")
    monkeypatch.delitem(sys.modules, "refs")
    loaded = load_function(spec.reference.function, str(spec.reference.base_dir))
    assert loaded.__code__.co_code == fn.__code__.co_code


def test_what_another_process_cannot_import_is_refused_at_once() -> None:
    def local(x, d):  # type: ignore[no-untyped-def]
        return x

    for bad in (lambda x, d: x, local, print):
        with pytest.raises(SpecError, match="module-level function of a .py file"):
            silu_and_mul(reference=bad)


def test_a_function_of_the_script_being_run_is_loaded_by_its_path(tmp_path: Path) -> None:
    script = tmp_path / "tune_it.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from pragma_ncu.spec.describe import Arg, task_spec

        def ref(x, n):
            return 2 * x + 1

        if __name__ == "__main__":
            spec = task_spec({str(EXAMPLES / "faults" / "scale.cu")!r},
                             args=[Arg.input("x", "fp32", ["n"]), Arg.output("y", "fp32", ["n"]),
                                   Arg.scalar("n", "int32", "n")],
                             shapes={{"small": {{"n": 1000}}}},
                             launch={{"grid": ["ceil_div(n, 256)"], "block": ["256"]}},
                             reference=ref)
            print(spec.reference.function, spec.reference.base_dir)
        """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.stdout.split() == ["tune_it.py:ref", str(tmp_path.resolve())]
    loaded = load_function("tune_it.py:ref", str(tmp_path))  # as the worker does: no rerun
    assert loaded(3, 1) == 7


@pytest.mark.toolchain
def test_the_description_goes_to_run_bench(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("PRAGMA_NCU_CACHE", str(tmp_path / "cache"))
    spec = silu_and_mul()
    settings = load_settings()
    with Runner(worker_command(settings), timeout_s=60) as runner:
        report = run_bench(spec, spec.shapes, settings, runner)
    assert report.build.ok and report.device is None  # compiled; timing needs a GPU
    assert report.build.resources is not None and report.build.resources.registers > 0
