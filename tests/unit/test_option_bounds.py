"""Every numeric option of every command, and every numeric argument of the API, is checked at
the boundary against one rule (`pragma_ncu.infra.bounds`): counts at least 1, fractions in
(0, 1], times above 0, all finite (issue 35, case 4: `tune --rounds -1`, `--budget 0`,
`--time-budget -5`, `--target -1` exited 0, the budgets saying "failed (build)" with nothing
built; `api.tune(budget=0)` and `-3` were taken)."""

from __future__ import annotations

import inspect
import types
import typing
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pragma_ncu import api
from pragma_ncu.api.arguments import _resolved
from pragma_ncu.backends.base import ProfileOptions
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.bounds import Bound
from pragma_ncu.infra.errors import ArgumentError, InputError

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "cpu" / "conv1d.cpp"


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix}{name} ")
    return found


def test_every_numeric_option_of_every_command_is_bounded() -> None:
    unbounded = [f"{name} {opt.opts[0]}" for name, command in _commands(cli)
                 for opt in command.params
                 if isinstance(opt.type, (click.types.IntParamType, click.types.FloatParamType))
                 and not isinstance(opt.type, click.types._NumberRangeBase)]
    assert unbounded == []


def _plain_number(hint: object) -> bool:
    """Whether `hint` takes an int or a float with no bound (a union's arms each)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(map(_plain_number, typing.get_args(hint)))
    return hint in (int, float)


def test_every_numeric_argument_of_the_api_is_bounded() -> None:
    loose = []
    for name in api.__all__:
        function = getattr(api, name)
        if inspect.isfunction(function):
            loose += [f"{name}({arg})" for arg, hint in _resolved(function).items()
                      if arg != "return" and _plain_number(hint)]
    for options in (api.AutotuneOptions, ProfileOptions):
        loose += [f"{options.__name__}.{field}" for field, hint in
                  _resolved(options.__init__).items() if _plain_number(hint)]
    assert loose == []


@pytest.mark.parametrize("option", [
    ["--rounds", "-1"], ["--budget", "0"], ["--time-budget", "-5"], ["--target", "-1"],
    ["--target", "1.5"], ["--target", "nan"], ["--patience", "0"], ["--seed", "-1"],
    ["--timeout", "inf"], ["--llm-timeout", "0"], ["--retest-rounds", "0"],
])
def test_tune_refuses_a_number_out_of_range(tmp_path: Path, option: list[str]) -> None:
    store = tmp_path / "state" / "runs.sqlite"
    result = CliRunner().invoke(cli, ["tune", "--kernel", str(KERNEL), "--no-llm", "--store",
                                      str(store), *option])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option[0]}'" in result.output
    assert "failed" not in result.output and not store.parent.exists()


@pytest.mark.parametrize(("command", "option"), [
    ("autotune", ["--budget", "0"]), ("autotune", ["--top-k", "0"]),
    ("autotune", ["--rounds", "0"]), ("autotune", ["--time-budget", "nan"]),
    ("bench", ["--budget-ms", "0"]), ("bench", ["--timeout", "-1"]),
    ("profile", ["--timeout", "0"]), ("autotune", ["--workers", "0"]),
])
def test_the_other_commands_refuse_them_too(command: str, option: list[str]) -> None:
    result = CliRunner().invoke(cli, [command, "--kernel", str(KERNEL), *option])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option[0]}'" in result.output


@pytest.mark.parametrize("arguments", [
    {"budget": 0}, {"budget": -3}, {"rounds": -1}, {"time_budget": -5.0}, {"target": -1.0},
    {"target": float("nan")}, {"patience": 0}, {"timeout": float("inf")}, {"seed": -1},
    {"retest_rounds": 0},
])
def test_the_api_refuses_them_naming_the_argument_and_the_range(
        tmp_path: Path, arguments: dict[str, float]) -> None:
    store = tmp_path / "state" / "runs.sqlite"
    with pytest.raises(ArgumentError) as info:
        api.tune(KERNEL, api.TuneOptions(store=store, **arguments))  # type: ignore[arg-type]
    (name, value), = arguments.items()
    assert isinstance(info.value, InputError)
    assert f"TuneOptions(): field {name!r} takes " in str(info.value)
    assert not store.parent.exists()


def test_options_objects_are_checked_when_made() -> None:
    with pytest.raises(ArgumentError, match=r"field 'budget' takes an integer >= 1 \(a count\)"):
        api.AutotuneOptions(budget=0)
    with pytest.raises(ArgumentError, match=r"field 'top_k'"):
        api.AutotuneOptions(top_k=-1)
    with pytest.raises(ArgumentError, match=r"'timeout_s' takes a finite number > 0"):
        ProfileOptions(timeout_s=0.0)
    with pytest.raises(ArgumentError, match=r"bench\(\): argument 'budget_ms'"):
        api.bench(KERNEL, budget_ms=-1.0)


def test_the_rules_are_the_bounds_the_cli_shows() -> None:
    """One definition: the click type is made from the same Bound the API checks."""
    from pragma_ncu.cli.common import bounded
    from pragma_ncu.infra import bounds

    for bound in (bounds.COUNT, bounds.FRACTION, bounds.SECONDS, bounds.SEED):
        kind = bounded(bound)
        assert isinstance(kind, click.types._NumberRangeBase)
        assert (kind.min, kind.max, kind.min_open) == (bound.low, bound.high, bound.low_open)
    assert str(bounds.FRACTION) == "a finite number in (0, 1] (a fraction)"
    assert isinstance(bounds.COUNT, Bound) and not bounds.COUNT.allows(True)


def test_the_edges_and_the_defaults_are_in_range() -> None:
    """tune's rounds 0 is the baseline alone; a fraction may be 1."""
    assert api.AutotuneOptions(budget=1, top_k=1, rounds=1, seed=0, timeout=0.5)
    assert ProfileOptions(timeout_s=0.1, repeats=0) and ProfileOptions()
    result = CliRunner().invoke(cli, ["tune", "--kernel", str(KERNEL), "--rounds", "0",
                                      "--target", "1", "--help"])
    assert result.exit_code == 0
