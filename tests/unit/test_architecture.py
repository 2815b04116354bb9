"""The layers of ARCHITECTURE.md hold: no module imports from a layer above its own, the
packages import each other in no cycle, every module has a layer, and ARCHITECTURE.md shows
the table the check uses (tests/architecture.py). The checker is itself tested on synthetic
packages with an upward import and a cycle."""

from __future__ import annotations

import ast
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


def test_no_import_circle_inside_a_package() -> None:
    assert arch.circles(arch.imports(arch.ROOT / "pragma_ncu")) == []


# What the command line may import: the API (every command's function and the types its
# options and results name), the rendering, and the errors' exit statuses (issue 37).
CLI_MAY_IMPORT = ("", "api", "api.**", "report", "report.**", "infra.errors", "cli", "cli.**")


def cli_reaching_past_the_api(found: list[arch.Import]) -> list[str]:
    return [f"pragma_ncu.{i.module} -> pragma_ncu.{i.target} (line {i.line})" for i in found
            if arch.matches(i.module, "cli.**") and i.how != arch.STRING
            and not any(arch.matches(i.target, p) for p in CLI_MAY_IMPORT)]


def test_the_cli_goes_through_the_api() -> None:
    """ARCHITECTURE.md: a command parses, calls one api function and prints. It imports the
    api, the report layer and infra.errors, nothing else of the package."""
    found = cli_reaching_past_the_api(list(arch.imports(arch.ROOT / "pragma_ncu")))
    assert not found, "the CLI reaches past the API:\n" + "\n".join(found)


def environment_reads(root: Path) -> list[str]:
    """Every read of the process environment (os.environ, os.getenv, `from os import
    environ`) outside infra/settings.py, the one reader."""
    out = []
    for name, path in arch.modules(root).items():
        if name == "infra.settings":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv",
                                                                 "environb") \
                    and isinstance(node.value, ast.Name) and node.value.id == "os":
                out.append(f"pragma_ncu.{name} line {node.lineno}: os.{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                    a.name in ("environ", "getenv", "environb") for a in node.names):
                out.append(f"pragma_ncu.{name} line {node.lineno}: from os import ...")
    return out


def test_only_the_settings_read_the_environment() -> None:
    found = environment_reads(arch.ROOT / "pragma_ncu")
    assert not found, "read the environment outside infra/settings.py:\n" + "\n".join(found)


def test_the_cli_and_environment_checks_find_what_they_forbid(tmp_path: Path) -> None:
    pkg = package(tmp_path, {
        "cli/__init__.py": "", "cli/main.py": ("from pragma_ncu import api\n"
                                               "from pragma_ncu.search import space\n"),
        "search/__init__.py": "", "search/space.py": "import os\nX = os.environ['HOME']\n",
        "infra/__init__.py": "", "infra/settings.py": "import os\nY = os.getenv('A')\n",
        "pool/__init__.py": "", "pool/ray.py": "from os import getenv\n",
        "api/__init__.py": "",
    })
    assert cli_reaching_past_the_api(list(arch.imports(pkg))) == [
        "pragma_ncu.cli.main -> pragma_ncu.search.space (line 2)"]
    assert sorted(environment_reads(pkg)) == [
        "pragma_ncu.pool.ray line 1: from os import ...",
        "pragma_ncu.search.space line 2: os.environ"]


def test_a_targets_package_is_only_its_docstring() -> None:
    """Its package module sits at the bottom layer (a data package for importlib.resources
    refers to it from any layer), so it must hold nothing that could reach up."""
    for name, path in arch.modules(arch.ROOT / "pragma_ncu").items():
        if arch.matches(name, "backends.*") and path.name == "__init__.py":
            body = ast.parse(path.read_text()).body
            assert all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
                       for n in body), f"pragma_ncu/{name.replace('.', '/')}/__init__.py"


def test_the_worker_names_no_target() -> None:
    """The worker serves whichever side its command line names (`--side MODULE`): nothing in
    worker/ refers to a target's modules, by import or by string."""
    named = [f"pragma_ncu.{i.module} -> pragma_ncu.{i.target} (line {i.line})"
             for i in arch.imports(arch.ROOT / "pragma_ncu")
             if (i.module == "worker" or arch.matches(i.module, "worker.**"))
             and (i.target == "backends" or i.target.startswith("backends."))]
    assert not named, named


def test_only_a_targets_folder_names_it() -> None:
    """A target is one folder and one registration: outside backends/<name>/, only the
    registry (its `target` module, on first use)
    refer to a target's modules; everything else goes through the Target contract."""
    known = arch.modules(arch.ROOT / "pragma_ncu")
    folders = {name for name, path in known.items()
               if arch.matches(name, "backends.*") and path.name == "__init__.py"}
    assert {"backends.cuda", "backends.cpu"} <= folders
    allowed = {("backends", arch.DYNAMIC)}
    named = [f"pragma_ncu.{i.module} -> pragma_ncu.{i.target} (line {i.line})"
             for i in arch.imports(arch.ROOT / "pragma_ncu")
             for folder in folders
             if (i.target == folder or i.target.startswith(folder + "."))
             and not (i.module == folder or i.module.startswith(folder + "."))
             and (i.module, i.how) not in allowed]
    assert not named, named


def test_above_the_backends_nothing_branches_on_a_target_name() -> None:
    """The API, the loop, triage, report and the conductor ask a target (or a collector, or
    a source's suffix) what it does; none compares anything with a built-in target's name."""
    from pragma_ncu.targets import BUILTIN

    found = []
    for name, path in arch.modules(arch.ROOT / "pragma_ncu").items():
        if arch.layer_of(name).number not in (2, 3) or name.startswith("backends"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(
                    isinstance(c, ast.Constant) and c.value in BUILTIN
                    for c in (node.left, *node.comparators)):
                found.append(f"pragma_ncu.{name} line {node.lineno}")
    assert not found, found


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
        "search/space.py": "import pragma_ncu.spec.model\n",  # 5 -> 8: fine
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
    assert "pragma_ncu.spec (layer 8, spec, measure, infra: the nouns every stage shares) " \
           "imports pragma_ncu.search.space (layer 5" in text
    assert "pragma_ncu.loop.rounds (layer 2" in text and "at line 2" in text


def test_the_checker_finds_a_cycle_between_packages_of_every_kind(tmp_path: Path) -> None:
    """Issue 37: a cycle through imports that run, one closed by an annotation only, and one
    through a backend's module of a lower layer (the spec reading a target's rules while the
    backend imports the spec: the circle the per-target packages used to hide)."""
    pkg = package(tmp_path, {
        "search/__init__.py": "", "profile/__init__.py": "",
        "search/space.py": "from pragma_ncu.profile import read\n",
        "profile/read.py": "from pragma_ncu.search.space import Space\n",  # search <-> profile
        "coder/__init__.py": "", "knowledge/__init__.py": "",
        "coder/x.py": "from pragma_ncu.knowledge import y\n",
        "knowledge/y.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                           "    from pragma_ncu.coder import x\n"),  # coder <-> knowledge
        "spec/__init__.py": "", "backends/__init__.py": "", "backends/cuda/__init__.py": "",
        "spec/model.py": "from pragma_ncu.backends.cuda import rules\n",
        "backends/cuda/rules.py": "",
        "backends/cuda/session.py": "from pragma_ncu.spec.model import TaskSpec\n",
        "infra/__init__.py": "", "infra/errors.py": "",  # one way only: no cycle
        "draft/__init__.py": "", "draft/x.py": "from pragma_ncu.infra import errors\n",
    })
    assert arch.cycles(arch.imports(pkg)) == [("backends", "spec"), ("coder", "knowledge"),
                                              ("profile", "search")]


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


def test_the_checker_reads_strings_and_importlib(tmp_path: Path) -> None:
    pkg = package(tmp_path, {
        "worker/__init__.py": "",
        "worker/serve.py": 'SIDE = "pragma_ncu.backends.cuda.session"\n',  # 7 -> 2: upward
        "backends/__init__.py": "", "backends/cuda/__init__.py": "",
        "backends/cuda/session.py": "", "backends/cuda/target.py": "",
        "spec.py": ('import importlib\n'
                    'def rules(name):\n'  # 8 -> 2, through a name made at run time
                    '    return importlib.import_module(f"pragma_ncu.backends.{name}.target")\n'),
        "search/__init__.py": "",
        "search/space.py": ('"""pragma_ncu.backends.cuda.target says so."""\n'  # prose
                            'X = "-m pragma_ncu.worker.serve"\n'),  # no module by itself
    })
    found = arch.upward(arch.imports(pkg))
    assert sorted((v.importer, v.imported) for v in found) == [
        ("spec", "backends.cuda.target"), ("worker.serve", "backends.cuda.session")]


def test_the_checker_finds_a_circle_inside_a_package(tmp_path: Path) -> None:
    pkg = package(tmp_path, {
        "loop/__init__.py": "",
        "loop/rounds.py": "def f():\n    from pragma_ncu.loop import moves\n",  # local
        "loop/moves.py": "from pragma_ncu.loop.rounds import f\n",
        "search/__init__.py": "",
        "search/table.py": "from pragma_ncu.search import vllm\n",
        "search/vllm.py": "from pragma_ncu.search.table import X\n",
        "report/__init__.py": "",  # an annotation closes it: a circle too (issue 37)
        "report/a.py": "from pragma_ncu.report import b\n",
        "report/b.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                        "    from pragma_ncu.report import a\n"),
        "triage/__init__.py": "",  # one way only: no circle
        "triage/x.py": "from pragma_ncu.triage import y\n", "triage/y.py": "",
        "api/__init__.py": "", "api/z.py": 'M = "pragma_ncu.api.w"\n',  # a string: no import
        "api/w.py": "from pragma_ncu.api import z\n",
    })
    found = list(arch.imports(pkg))
    assert arch.circles(found) == [("loop.moves", "loop.rounds"), ("report.a", "report.b"),
                                   ("search.table", "search.vllm")]
    assert arch.cycles(found) == []  # one package each: no cycle between packages
