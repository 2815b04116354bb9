"""The package's layers, in one table, and the checker that holds the code to them.

`LAYERS` is the one place the layers are written down: `tests/unit/test_architecture.py`
checks every module's references against it and checks that ARCHITECTURE.md shows the same
table (`tools/architecture_table.py` writes that table from this one).

Rules the checker enforces:
- a module refers only to modules of its own layer or of lower ones (a higher number);
- the packages do not import each other in a cycle. A package is a top-level module or
  subpackage of `pragma_ncu` (`backends/` is one: a backend spans the layers, its worker side
  layer 7, its diagnosis rules layer 4, its session layer 2, and is held to each of them module
  by module, but nothing below the registry may import it back);
- inside a package, the modules do not import each other in a circle either.

What counts as a reference: every import statement, at module level or in a function (a
deferred import is still a dependency); `importlib.import_module` of a name the code spells
out (an f-string's `{__name__}` is the importer, its other parts any one part: the registry's
`f"{__name__}.{name}.target"` refers to every target's `target`); and a string that names a
module whole ("pragma_ncu.backends.cpu.worker": `python -m MODULE`, `--side MODULE`, a data
package for importlib.resources), docstrings aside. All of them count for the layers, those
under `if TYPE_CHECKING:` included (an annotation naming a higher layer's type is still an
upward dependency). For cycles and circles, every import counts but strings (another process,
or data): module-level, function-local, importlib and TYPE_CHECKING ones. A function-local
import counts as a module-level one does, so that moving an import into a function cannot hide
a circle; an annotation naming another module's type is a dependency on it as much (a circle
of annotations is two modules that cannot be read, or moved, one without the other).
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "pragma_ncu"


@dataclass(frozen=True)
class Layer:
    number: int
    name: str
    owns: str  # what lives there, in a few words
    modules: tuple[str, ...]  # patterns of module names below `pragma_ncu.` (see `matches`)


# Top to bottom. Within a backend (backends/<target>/...) each module has the layer of its role;
# the patterns below name those roles. The first pattern that matches decides.
LAYERS: tuple[Layer, ...] = (
    Layer(1, "cli", "click commands: parse, one api call, print",
          ("__main__", "cli", "cli.**")),
    Layer(2, "api, loop, triage, report, backends' registry",
          "the library API, the closed loop, regression triage, all rendering; the backend "
          "registry, each target's Target and loop-facing session",
          ("", "api", "api.**", "loop", "loop.**", "triage", "triage.**", "report", "report.**",
           "backends", "backends.base", "backends.*.target", "backends.*.session")),
    Layer(3, "conductor", "deciding the next round from the measurements and the profile",
          ("conductor", "conductor.**")),
    Layer(4, "diagnose, backends' diagnosis rules",
          "profile + compendium -> ranked findings; each collector's rules",
          ("diagnose", "diagnose.**", "backends.*.diagnosis", "backends.*.diagnosis.**")),
    Layer(5, "search, profile, results, backends' evaluators and collectors",
          "the parameter search; the profile model and ncu's report readers; what bench and "
          "profile return for every target; each target's "
          "evaluator, collector, normalizer, profiling, bench and doctor checks",
          ("search", "search.**", "profile", "profile.**",
           "backends.results", "backends.*.evaluator", "backends.*.profiling",
           "backends.*.collect", "backends.*.collect.**", "backends.*.ceilings",
           "backends.*.bench", "backends.*.doctor")),
    Layer(6, "pool, coder, knowledge, draft",
          "workers: one (the runner, the parent side of a worker) or many, and the ceilings "
          "measured through them; LLM rewrites; the metric compendium; `init`'s drafting",
          ("pool", "pool.**", "coder", "coder.**", "knowledge", "knowledge.**",
           "draft", "draft.**")),
    Layer(7, "worker, build, syntax, backends' builds and worker sides",
          "the child process (serve, verify/time/re-verify, references); compiling and its "
          "cache, work orders (build and evaluate requests); C/C++/CUDA source read through "
          "one syntax layer; each target's compiler and device side",
          ("worker", "worker.**", "build", "build.**", "syntax", "syntax.**",
           "backends.*.build", "backends.*.worker", "backends.*.worker.**")),
    Layer(8, "spec, measure, infra: the nouns every stage shares",
          "the spec, its validator and Python description, expressions, dtypes and kernel "
          "templates; the built-in targets and what each asks of a spec; measurements, "
          "statistics, round records and their traces, the roofline, the ceilings' figures "
          "and caches; toolchain discovery, "
          "kernel sources, the run store, the LLM client, progress events, the log's format "
          "and files",
          ("spec", "spec.**", "targets", "targets.**", "backends.*.abi", "measure",
           "measure.**", "infra.toolchain", "infra.sources",
           "infra.store", "infra.llm", "infra.progress", "infra.logs")),
    Layer(9, "infra's base, targets' packages",
          "typed exceptions; the ranges of numeric options; the one reader of environment "
          "variables; shipped data; a target's package itself (its docstring, and data files "
          "such as peaks.c)",
          ("infra", "infra.errors", "infra.bounds", "infra.settings", "infra.resources",
           "backends.*")),
)


LayerLookup = Callable[[str], Layer]
PackageLookup = Callable[[str], str]


def matches(module: str, pattern: str) -> bool:
    """Whether a dotted module name fits a pattern: part by part (`*` is one part: "backends.*"
    is a target's package, not what is below it), a last part `**` standing for any parts
    below ("loop.**": every module of the loop package)."""
    parts, want = module.split(".") if module else [], pattern.split(".") if pattern else []
    if want and want[-1] == "**":
        want = want[:-1]
        if len(parts) <= len(want):
            return False
        parts = parts[:len(want)]
    return len(parts) == len(want) and all(map(fnmatch.fnmatchcase, parts, want))


def layer_of(module: str) -> Layer:
    """The layer of `module` (a dotted name below `pragma_ncu`, "" for the package itself);
    KeyError when no pattern covers it (every module must have a layer)."""
    for layer in LAYERS:
        if any(matches(module, pattern) for pattern in layer.modules):
            return layer
    raise KeyError(f"pragma_ncu.{module} has no layer in tests/architecture.py LAYERS")


def package_of(module: str) -> str:
    """The package a module counts in for cycles: its top-level name below `pragma_ncu` ("" for
    the package's own __init__)."""
    return module.split(".")[0]


MODULE, LOCAL, TYPING, DYNAMIC, STRING = "module", "local", "typing", "dynamic", "string"


@dataclass(frozen=True)
class Import:
    module: str  # the importer, below `pragma_ncu.`
    target: str  # the imported module, below `pragma_ncu.` ("" for the package)
    line: int
    how: str = MODULE  # MODULE (at import time), LOCAL (in a function), TYPING (under
    # `if TYPE_CHECKING:`), DYNAMIC (importlib.import_module of a name the code spells out),
    # STRING (a string naming the module: `python -m MODULE`, `--side MODULE`, a data package)

    @property
    def typing_only(self) -> bool:
        return self.how == TYPING

    @property
    def at_import(self) -> bool:
        """Whether it runs when the importer is imported (not in a function, not typing)."""
        return self.how == MODULE


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package at `root` (the folder holding __init__.py), by dotted name
    below the package ("" for its __init__)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(root: Path, package: str = PACKAGE) -> Iterator[Import]:
    """Every reference to one of the package's own modules, in every module under `root`:
    import statements, `importlib.import_module` of a name spelled out (an f-string's
    unknown parts match any module there), and strings that name a module whole."""
    known = modules(root)
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        how = _placement(tree)
        is_init = path.name == "__init__.py"
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(node, name, is_init, package, known):
                    yield Import(name, target, node.lineno, how.get(node.lineno, MODULE))
            elif isinstance(node, ast.Call) and _is_import_module(node):
                for target in _dynamic(node.args[0] if node.args else None, name, package,
                                       known):
                    yield Import(name, target, node.lineno, DYNAMIC)
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in docstrings):
                target = _named(node.value, package, known)
                if target is not None:
                    yield Import(name, target, node.lineno, STRING)


def _placement(tree: ast.Module) -> dict[int, str]:
    """The lines of imports that do not run at import time: TYPING under `if TYPE_CHECKING:`,
    LOCAL in a function body."""
    lines: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import | ast.ImportFrom):
                    lines.setdefault(sub.lineno, LOCAL)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                for sub in ast.walk(child):
                    if hasattr(sub, "lineno"):
                        lines[sub.lineno] = TYPING
    return lines


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes (prose, not references)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                     ast.Constant):
                found.add(id(body[0].value))
    return found


def _is_import_module(node: ast.Call) -> bool:
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == "import_module") or (
        isinstance(f, ast.Name) and f.id in ("import_module", "__import__"))


def _dynamic(arg: ast.expr | None, name: str, package: str,
             known: dict[str, Path]) -> Iterator[str]:
    """The modules an import_module argument can name: a string, or an f-string whose
    `{__name__}` is the importer and whose other parts may be any one part."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        target = _named(arg.value, package, known)
        if target is not None:
            yield target
        return
    if not isinstance(arg, ast.JoinedStr):
        return  # a name chosen at run time (a spec's reference, `--side MODULE`)
    pattern = "".join(
        part.value if isinstance(part, ast.Constant) else
        (f"{package}.{name}" if name else package) if _is_dunder_name(part) else "*"
        for part in arg.values)
    below = _below(pattern, package)
    if below is None:
        return
    yield from (m for m in known if m and matches(m, below))


def _is_dunder_name(part: ast.expr) -> bool:
    return (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name)
            and part.value.id == "__name__")


def _named(text: str, package: str, known: dict[str, Path]) -> str | None:
    """The module a string names whole ("pragma_ncu.backends.cpu.worker"), or None: a
    string that is no dotted name, or names nothing below the package."""
    if not _DOTTED.fullmatch(text):
        return None
    below = _below(text, package)
    if not below:
        return None
    found = _existing(below, known)
    return found or None


_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_init: bool, package: str,
             known: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            target = _below(alias.name, package)
            if target is not None:
                yield _existing(target, known)
    else:
        base = _absolute(node, name, is_init, package)
        target = _below(base, package)
        if target is None:
            return
        for alias in node.names:  # `from pkg import module` imports the module
            sub = f"{target}.{alias.name}" if target else alias.name
            yield sub if sub in known else _existing(target, known)


def _absolute(node: ast.ImportFrom, name: str, is_init: bool, package: str) -> str:
    if not node.level:
        return node.module or ""
    here = [package, *name.split(".")] if name else [package]
    if not is_init:
        here = here[:-1]
    here = here[: len(here) - (node.level - 1)]
    return ".".join(here + ([node.module] if node.module else []))


def _below(dotted: str, package: str) -> str | None:
    if dotted == package:
        return ""
    if dotted.startswith(package + "."):
        return dotted[len(package) + 1:]
    return None


def _existing(target: str, known: dict[str, Path]) -> str:
    """`target`, or the nearest enclosing module that exists (an attribute of a module)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


@dataclass(frozen=True)
class Violation:
    importer: str
    imported: str
    line: int
    importer_layer: Layer
    imported_layer: Layer

    def __str__(self) -> str:
        return (f"pragma_ncu.{self.importer} (layer {self.importer_layer.number}, "
                f"{self.importer_layer.name}) imports pragma_ncu.{self.imported} (layer "
                f"{self.imported_layer.number}, {self.imported_layer.name}) at line {self.line}")


def upward(found: Iterable[Import], layer: LayerLookup | None = None) -> list[Violation]:
    """The imports from a lower layer (a higher number) into a higher one."""
    look = layer or layer_of
    out = []
    for imp in found:
        mine, theirs = look(imp.module), look(imp.target)
        if theirs.number < mine.number:
            out.append(Violation(imp.module, imp.target, imp.line, mine, theirs))
    return out


RUNS = (MODULE, LOCAL, DYNAMIC, TYPING)  # the references that make a dependency for cycles


def cycles(found: Iterable[Import], package: PackageLookup | None = None
           ) -> list[tuple[str, ...]]:
    """The import cycles between packages (strongly connected sets of more than one), each
    sorted. Every import counts, in a function too (a deferred import is still a dependency)
    and under TYPE_CHECKING (an annotation is one too); a string naming a module to another
    process (`python -m MODULE`) imports nothing here. The package itself ("") is no party:
    its __init__ is the door to everything (the errors, the API on first use), not a layer
    anything imports to reach another."""
    group = package or package_of
    edges: dict[str, set[str]] = {}
    for imp in found:
        if imp.how not in RUNS:
            continue
        a, b = group(imp.module), group(imp.target)
        if a != b and a and b:
            edges.setdefault(a, set()).add(b)
            edges.setdefault(b, set())
    return sorted(tuple(sorted(c)) for c in _strongly_connected(edges) if len(c) > 1)


def circles(found: Iterable[Import], package: PackageLookup | None = None
            ) -> list[tuple[str, ...]]:
    """The import cycles between the modules of one package, each sorted. They count as
    `cycles` does, function-local imports included: moving an import into a function only
    hides a circle until that function runs (and makes the order of imports matter)."""
    group = package or package_of
    inside = [imp for imp in found if imp.module != imp.target
              and group(imp.module) == group(imp.target)]
    return cycles(inside, lambda module: module)


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    out.append(comp)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on.add(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in on:
                low[node] = min(low[node], index[child])
    return out


def markdown_table(layers: Sequence[Layer] = LAYERS) -> str:
    """The layer table as ARCHITECTURE.md shows it."""
    rows = ["| layer | name | owns | modules |", "| --- | --- | --- | --- |"]
    for layer in layers:
        mods = ", ".join(f"`{m}`" if m else "`pragma_ncu` (package)" for m in layer.modules)
        rows.append(f"| {layer.number} | {layer.name} | {layer.owns} | {mods} |")
    return "\n".join(rows) + "\n"


