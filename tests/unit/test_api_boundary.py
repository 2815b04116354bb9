"""The Python API fails like a library: arguments checked against the annotations at the call
(an ArgumentError naming the function, the argument and what it takes: an InputError and a
TypeError), and every error type exported from `pragma_ncu` and documented there."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import pragma_ncu
from pragma_ncu import api
from pragma_ncu.api.arguments import checked
from pragma_ncu.infra.errors import ArgumentError, InputError, PragmaError

PUBLIC = ("autotune", "autotune_shapes", "bench", "ceilings", "default_out", "explain", "init",
          "llm_config", "load", "moves", "profile", "shapes_of", "triage", "tune")


def test_explain_42_names_the_argument_and_what_it_takes():
    with pytest.raises(ArgumentError) as caught:
        api.explain(42)  # type: ignore[arg-type]
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, InputError)
    assert str(caught.value) == ("explain(): argument 'report' takes str | Path | Profile, "
                                 "not int 42")


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_function_checks_its_first_argument(name):
    function = getattr(api, name)
    assert hasattr(function, "__wrapped__"), f"api.{name} is not @checked"
    required = [p for p in inspect.signature(function).parameters.values()
                if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD] or [None]
    first = next(iter(inspect.signature(function).parameters))
    with pytest.raises(ArgumentError, match=f"{name}\\(\\): argument '{first}' takes"):
        function(*[object() for _ in required])


@pytest.mark.parametrize(("call", "words"), [
    (lambda: api.triage("a.json", 3), "argument 'new' takes str | Path, not int 3"),
    (lambda: api.tune(options=api.TuneOptions(rounds="5")),
     "field 'rounds' takes int, not str '5'"),
    (lambda: api.tune("k.cu", {"rounds": 5}), "argument 'options' takes TuneOptions"),
    (lambda: api.bench("k.cu", shapes="small"), "'shapes' takes a sequence of str | Shape"),
    (lambda: api.bench("k.cu", timeout=True), "'timeout' takes float, not bool True"),
    (lambda: api.bench("k.cu", params={"BLOCK": [1]}), "'params' takes a dict of str to"),
    (lambda: api.tune("k.cu", progress="quiet"), "'progress' takes a callable"),
    (lambda: api.bench("k.cu", bogus=1), "bench(): got an unexpected keyword argument"),
    (lambda: api.AutotuneOptions(budget="20"),  # type: ignore[arg-type]
     "AutotuneOptions(): field 'budget' takes int, not str '20'"),
])
def test_wrong_arguments_fail_at_the_call(call, words):
    with pytest.raises(ArgumentError, match=re.escape(words)):
        call()


def _sample(path: Path, size: int = 1, scale: float = 1.0, names: Sequence[str] = (),
            flags: dict[str, int] | None = None, hook: Callable[[str], None] | None = None,
            other: Path | None = None) -> tuple[object, ...]:
    return path, size, scale, names, flags, hook, other


def test_the_check_itself():
    sample = checked(_sample)
    assert sample("a/b")[0] == Path("a/b")  # a path may be a str: it arrives as a Path
    assert sample(Path("x"), other="y")[6] == Path("y")
    assert sample(Path("x"), 3, 2)[2] == 2  # an int is a float here, as Python's typing says
    assert sample(Path("x"), names=["a", "b"], flags={"a": 1}, hook=print)[3] == ["a", "b"]
    for bad in ({"size": 1.5}, {"size": True}, {"names": "ab"}, {"names": [1]},
                {"flags": {"a": "1"}}, {"hook": 3}, {"other": 3}):
        with pytest.raises(ArgumentError, match=f"'{next(iter(bad))}'"):
            sample(Path("x"), **bad)
    with pytest.raises(ArgumentError, match="missing a required argument: 'path'"):
        sample()


def test_a_path_argument_given_as_str_works_through_the_api(tmp_path):
    with pytest.raises(InputError, match="no such report"):
        api.explain(str(tmp_path / "missing.json"), spec=str(tmp_path / "s.toml"))


def test_the_error_types_are_exported_and_documented():
    names = [n for n in pragma_ncu.__all__ if n.endswith("Error") or n == "KernelFailure"]
    assert {"PragmaError", "InputError", "ToolchainError", "NoGPUError", "KernelFailure",
            "ArgumentError", "ReportError", "TriageError", "StoreError",
            "UsageError"} <= set(names)
    for name in names:
        error = getattr(pragma_ncu, name)
        assert issubclass(error, PragmaError), name
        assert f"`{name}`" in (pragma_ncu.__doc__ or ""), f"{name} is not in the docstring"
    assert pragma_ncu.UsageError is api.UsageError and "ExitStatus" in pragma_ncu.__all__
