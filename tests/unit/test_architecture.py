"""The layers of ARCHITECTURE.md hold: no module imports from a layer above its own, the
packages import each other in no cycle, every module has a layer, and ARCHITECTURE.md shows
the table the check uses (tests/architecture.py). The checker is itself tested on synthetic
packages with an upward import and a cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import architecture as arch

DOC = arch.ROOT / "ARCHITECTURE.md"
BEGIN, END = "<!-- layers: begin -->", "<!-- layers: end -->"


def test_every_module_has_a_layer() -> None:
    for name in arch.modules(arch.ROOT / "pragma_ncu"):
        arch.layer_of(name)


def test_no_import_points_up() -> None:
    found = arch.upward(arch.imports(arch.ROOT / "pragma_ncu"))
    assert not found, "imports from a lower layer into a higher one:\n" + "\n".join(
        map(str, found))


def test_no_import_cycle_between_packages() -> None:
    assert arch.cycles(arch.imports(arch.ROOT / "pragma_ncu")) == []


def test_architecture_md_shows_the_table_the_test_checks() -> None:
    text = DOC.read_text()
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == arch.markdown_table().strip(), (
        "ARCHITECTURE.md's layer table differs from tests/architecture.py: run "
        "python tools/architecture_table.py")


# --- the checker on packages made for it ---------------------------------------------------

def package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "pragma_ncu"
    for name, text in {"__init__.py": "", **files}.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_the_checker_finds_an_upward_import(tmp_path: Path) -> None:
    pkg = package(tmp_path, {
        "spec.py": "from pragma_ncu.search import space\n",  # layer 8 -> 5: upward
        "search/__init__.py": "",
        "search/space.py": "import pragma_ncu.spec\n",  # 5 -> 8: fine
        "loop/__init__.py": "",
        "loop/rounds.py": "def f():\n    from pragma_ncu.cli import main\n",  # local, 2 -> 1
        "cli/__init__.py": "", "cli/main.py": "",
    })
    found = arch.upward(arch.imports(pkg))
    assert [(v.importer, v.imported) for v in found] == [
        ("loop.rounds", "cli.main"), ("spec", "search.space")] or sorted(
        (v.importer, v.imported) for v in found) == [("loop.rounds", "cli.main"),
                                                      ("spec", "search.space")]
    text = "\n".join(sorted(map(str, found)))
    assert "pragma_ncu.spec (layer 8, spec and the nouns every stage shares) imports " \
           "pragma_ncu.search.space (layer 5" in text
    assert "pragma_ncu.loop.rounds (layer 2" in text and "at line 2" in text


def test_the_checker_finds_a_cycle_and_ignores_typing_only_imports(tmp_path: Path) -> None:
    pkg = package(tmp_path, {
        "search/__init__.py": "", "profile/__init__.py": "",
        "search/space.py": "from pragma_ncu.profile import read\n",
        "profile/read.py": "from pragma_ncu.search.space import Space\n",  # search <-> profile
        "coder/__init__.py": "", "knowledge/__init__.py": "",
        "coder/x.py": "from pragma_ncu.knowledge import y\n",
        "knowledge/y.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                           "    from pragma_ncu.coder import x\n"),
    })
    assert arch.cycles(arch.imports(pkg)) == [("profile", "search")]


def test_a_backend_is_held_to_each_of_its_modules_layers(tmp_path: Path) -> None:
    pkg = package(tmp_path, {
        "backends/__init__.py": "", "backends/cpu/__init__.py": "",
        "backends/cpu/worker.py": "from pragma_ncu.backends.cpu import session\n",  # 7 -> 2
        "backends/cpu/session.py": "from pragma_ncu.backends.cpu import worker\n",  # 2 -> 7
    })
    found = arch.upward(arch.imports(pkg))
    assert [(v.importer, v.imported) for v in found] == [("backends.cpu.worker",
                                                          "backends.cpu.session")]
    assert arch.layer_of("backends.cuda.diagnosis.signals").number == 4
    assert arch.layer_of("backends.toy.evaluator").number == 5


def test_a_module_without_a_layer_is_named() -> None:
    with pytest.raises(KeyError, match="pragma_ncu.nowhere has no layer"):
        arch.layer_of("nowhere")
