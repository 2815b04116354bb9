"""Python files the tests import by their path, not as a package's module: the scripts of
tools/ (`load_tool`), and any other file (`load_module`). Each call executes the file anew."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """The module of the file at `path`, named `name` (by default the file's stem)."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_tool(name: str) -> ModuleType:
    """tools/`name`.py as a module named `name`."""
    return load_module(ROOT / "tools" / f"{name}.py", name)
