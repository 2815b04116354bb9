"""What ARCHITECTURE.md says of the commands holds: every command of the command line is a
function of `pragma_ncu.api` first (the click command parses, makes that one call and prints),
all rendering (tables, Markdown, HTML) lives under report/, and what the API returns renders the
same for every target."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import click
import pytest

from pragma_ncu import api
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import InputError
from tests import architecture as arch

PACKAGE = arch.ROOT / "pragma_ncu"
# Each command of the tree (by its path) and the API functions it calls.
COMMANDS = {
    "init": ("init",), "bench": ("bench",), "autotune": ("autotune", "autotune_shapes"),
    "ceilings": ("ceilings",), "doctor": ("doctor",), "knowledge show": ("knowledge",),
    "knowledge search": ("knowledge_search",), "knowledge build": ("knowledge_build",),
    "profile": ("profile",), "explain": ("explain",), "triage": ("triage",),
    "tune": ("tune",), "trace": ("trace", "runs"), "config convert": ("convert_table",),
    "moves": ("moves",),
}
RENDERERS = ("tabulate",)  # what draws a table (jinja2 also renders kernels and prompts)


def commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            found.update(commands(command, path + " "))
        else:
            found[path] = command
    return found


def test_every_command_is_listed_with_its_api_functions() -> None:
    assert set(commands(cli)) == set(COMMANDS)


@pytest.mark.parametrize(("path", "functions"), sorted(COMMANDS.items()))
def test_each_command_calls_its_api_functions(path: str, functions: tuple[str, ...]) -> None:
    command = commands(cli)[path]
    module = inspect.getmodule(command.callback)
    assert module is not None
    called = {node.func.attr for node in ast.walk(ast.parse(inspect.getsource(module)))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "api"}
    for name in functions:
        assert hasattr(getattr(api, name), "__wrapped__"), f"api.{name} is not @checked"
        assert name in called, f"`pragma-ncu {path}` does not call api.{name}"


def test_only_report_renders() -> None:
    """Outside report/ nothing imports a table renderer."""
    found = []
    for name, path in arch.modules(PACKAGE).items():
        if name == "report" or name.startswith("report."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                    node.module or ""]
                found += [f"{name}: {n}" for n in names if n.split(".")[0] in RENDERERS]
    assert not found, found


def test_the_api_answers_for_the_machine_the_runs_and_the_compendium(tmp_path: Path) -> None:
    entry = api.knowledge("dram__throughput.avg.pct_of_peak_sustained_elapsed")
    assert entry.entry.name.startswith("dram__throughput") and entry.strategies
    assert any(e.name.startswith("dram__") for e in api.knowledge_search("dram throughput"))
    with pytest.raises(InputError, match="no compendium entry"):
        api.knowledge("no__such_metric")
    with pytest.raises(InputError, match="no run store at"):
        api.runs(store=tmp_path / "none.sqlite")
    assert not (tmp_path / "none.sqlite").exists()
