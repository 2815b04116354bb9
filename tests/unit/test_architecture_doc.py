"""ARCHITECTURE.md says what the code does, and each of its claims is checked here against the
code: the package map lists exactly what pragma_ncu/ holds, the backend contract table names
every public part of `Target` (and which are abstract), each row of "where a change goes" names
files that exist and the thing its first one defines, and the API table each function with
what it returns. (The layer table is tests/unit/test_architecture.py's.)"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from pragma_ncu import api
from pragma_ncu.backends.base import Target

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "ARCHITECTURE.md").read_text()
PACKAGE = ROOT / "pragma_ncu"
TICKED = re.compile(r"`([^`]+)`")


def section(name: str) -> str:
    """The text between <!-- name: begin --> and <!-- name: end -->."""
    return DOC.split(f"<!-- {name}: begin -->", 1)[1].split(f"<!-- {name}: end -->", 1)[0]


def rows(name: str) -> list[list[str]]:
    """A table's body rows, cell by cell."""
    lines = [line for line in section(name).strip().splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def package_map() -> dict[str, list[str]]:
    """The map's top-level entries, each with the entries drawn below it."""
    block = DOC.split("## Package map", 1)[1].split("```", 2)[1]
    found: dict[str, list[str]] = {}
    for line in block.splitlines():
        top = re.match(r"^[├└]── (\S+)", line)
        nested = re.match(r"^│   (?:│   )?[│ ]*[├└]── (\S+)", line)
        if top:
            found[top[1]] = []
        elif nested:
            found[list(found)[-1]].append(nested[1])
    return found


def test_the_package_map_lists_what_the_package_holds() -> None:
    drawn = package_map()
    held = {p.name + ("/" if p.is_dir() else "") for p in PACKAGE.iterdir()
            if p.name != "__pycache__" and (p.is_dir() or p.suffix == ".py")}
    assert set(drawn) == held
    for top, below in drawn.items():
        for entry in below:
            assert list(PACKAGE.joinpath(top).rglob(entry.rstrip("/"))), f"{top}{entry}"


def test_the_contract_table_names_every_public_part_of_a_target() -> None:
    public = {name for name in (*dir(Target), *Target.__annotations__) if not name.startswith("_")}
    named: set[str] = set()
    for first, _ in rows("contract"):
        for tick in TICKED.findall(first):
            assert tick in public, f"Target has no {tick}"
            named.add(tick)
        abstract = {t for t in TICKED.findall(first) if f"`{t}` (abstract)" in first}
        assert abstract <= Target.__abstractmethods__
    assert Target.__abstractmethods__ == {"open", "diagnosis"}
    assert public == named, f"not in the table: {public - named}; gone: {named - public}"


def _paths(text: str) -> list[str]:
    return [t for t in TICKED.findall(text) if "/" in t]


def _exists(path: str) -> bool:
    pattern = re.sub(r"<[^>]+>", "*", path)
    return any(ROOT.glob(pattern)) if "*" in pattern else (ROOT / path).exists()


def _defines(path: Path, name: str) -> bool:
    """Whether the module (a folder: its __init__.py) binds `name` at its top level."""
    module = path / "__init__.py" if path.is_dir() else path
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            return True
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


@pytest.mark.parametrize("row", rows("where"), ids=lambda row: row[0])
def test_each_row_of_where_a_change_goes_names_what_is_there(row: list[str]) -> None:
    _, edit, defined = row
    paths = _paths(edit)
    assert paths, "a row names where to edit"
    for path in paths:
        assert _exists(path), path
    (name,) = TICKED.findall(defined)
    assert _defines(ROOT / paths[0], name), f"{paths[0]} does not define {name}"


@pytest.mark.parametrize("row", rows("api"), ids=lambda row: row[0])
def test_the_api_table_says_what_each_function_returns(row: list[str]) -> None:
    functions = [t for t in TICKED.findall(row[0].split("(")[0])]
    returns = TICKED.findall(row[1].split("(")[0])
    assert len(functions) == len(returns)
    for function, returned in zip(functions, returns, strict=True):
        assert function in api.__all__, function
        annotation = inspect.signature(getattr(api, function)).return_annotation
        assert returned in str(annotation), f"api.{function} returns {annotation}"
