"""The syntax tree of a C, C++ or CUDA source (tree-sitter's, as written: no preprocessor, no
include paths, no compiler) and the plain helpers every reader of it uses: a node's text and
lines, a walk in source order, the names and calls below a node, what an assignment writes,
containment, and the source's `#pragma` lines.

tree-sitter keeps going past what it cannot parse and gives every node its line. The CUDA
grammar is a superset of C++ (`__global__`, `__launch_bounds__`, `<<<...>>>`), so it reads `.cu`
and C++ sources; a `.c` file is read with the C grammar, where `new` or `class` are ordinary
names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from pragma_ncu.infra import sources
from pragma_ncu.infra.errors import DraftError

Node = Any  # a tree_sitter.Node; tree-sitter is imported only when a source is parsed
LOOPS = ("for_statement", "while_statement", "do_statement")
_PRAGMA = re.compile(r"#\s*pragma\s+(.*)$")
_PRAGMA_LINE = re.compile(rb"^[ \t]*#[ \t]*pragma\b[^\n]*", re.M)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
FUNCTION_SCOPES = ("function_definition", "lambda_expression")
# Calls that make threads wait on or exchange with one another (barriers, shuffles, votes).
SYNCING = ("__syncthreads", "__syncwarp", "__shfl", "__ballot", "__any", "__all", "__activemask",
           "__reduce", "this_thread_block", "tiled_partition", "grid_group", "__match")


def language_of(suffix: str) -> str:
    """"c" for a C source, "cuda" (a superset of C++) for everything else."""
    return "c" if suffix.lower() == ".c" else "cuda"


@cache
def _parser(language: str) -> Any:
    try:
        import importlib

        import tree_sitter

        grammar = importlib.import_module("tree_sitter_c" if language == "c"
                                          else "tree_sitter_cuda")
    except ImportError as exc:
        raise DraftError(f"reading C/CUDA sources needs tree-sitter ({exc}); "
                         "pip install tree-sitter tree-sitter-c tree-sitter-cuda") from None
    return tree_sitter.Parser(tree_sitter.Language(grammar.language()))


def syntax_tree(text: str, language: str = "cuda") -> Node:
    """The root node of `text`'s syntax tree (tree-sitter's, as written: no preprocessor)."""
    return _parser(language).parse(sources.encode(text)).root_node


def node_text(node: Node | None) -> str:
    return node.text.decode(errors="replace") if node is not None else ""


def walk(node: Node) -> Iterator[Node]:
    """`node` and everything below it, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def line_of(node: Node) -> int:
    return int(node.start_point[0]) + 1


def strip_comments(text: str) -> str:
    return _COMMENT.sub(" ", text).strip()



text = node_text  # the names the moves read them by
first_line = line_of


def last_line(node: Node) -> int:
    return int(node.end_point[0]) + 1


def compact(node: Node) -> str:
    """A node's text with every space and line break taken out (for patterns over code)."""
    return re.sub(r"\s+", "", text(node))


def call_names(node: Node | None) -> list[str]:
    if node is None:
        return []
    return [text(n.child_by_field_name("function")) for n in walk(node)
            if n.type == "call_expression"]


def identifiers(node: Node | None) -> set[str]:
    if node is None:
        return set()
    return {text(n) for n in walk(node) if n.type == "identifier"}


def mentions(node: Node | None, names: set[str] | frozenset[str]) -> bool:
    return node is not None and any(n.type == "identifier" and text(n) in names
                                    for n in walk(node))


def uses_builtin(node: Node, builtin: str) -> bool:
    """`node` reads `builtin` (threadIdx, blockIdx, gridDim, blockDim) in any dimension."""
    return any(n.type == "field_expression" and text(n.child_by_field_name("argument")) == builtin
               for n in walk(node))


def indentation(data: bytes, offset: int) -> str | None:
    """The whitespace before `offset` on its line, or None when code precedes it there."""
    start = data.rfind(b"\n", 0, offset) + 1
    prefix = data[start:offset].decode(errors="replace")
    return prefix if not prefix.strip() else None


def pragma_before(data: bytes, offset: int) -> str:
    """The `#pragma` on the line right above `offset` ("unroll 4"), or ""."""
    start = data.rfind(b"\n", 0, offset) + 1
    if data[start:offset].strip():
        return ""  # code before it on its line
    above = data[data.rfind(b"\n", 0, max(start - 1, 0)) + 1:max(start - 1, 0)].decode(
        errors="replace").strip()
    found = _PRAGMA.match(above)
    return found.group(1).strip() if found else ""


def masked(data: bytes) -> bytes:
    """`data` with its `#pragma` lines blanked (same length, so offsets hold): the grammar
    cannot read a pragma between a loop's header and its body, as in
    `for (...)` / `#pragma unroll` / `for (...)`, which CUDA code often has."""
    return _PRAGMA_LINE.sub(lambda m: b" " * len(m.group(0)), data)


def declarators(decl: Node) -> list[tuple[str, Node]]:
    """The names a declaration declares, each with its declarator."""
    out = []
    for d in decl.children_by_field_name("declarator"):
        inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        while inner is not None and inner.type != "identifier":
            inner = inner.child_by_field_name("declarator")
        if inner is not None:
            out.append((text(inner), d))
    return out


def assigned(node: Node) -> Node | None:
    """What an assignment (`=`, `+=`, ...) or an increment writes, None for other nodes."""
    if node.type == "assignment_expression":
        return node.child_by_field_name("left")
    if node.type == "update_expression":
        return node.child_by_field_name("argument")
    return None


def inside(node: Node, outer: Node) -> bool:
    """`node` lies within `outer` (or is it)."""
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def enclosing(node: Node, types: tuple[str, ...], stop: Node | None = None) -> list[Node]:
    """The ancestors of `node` of the given types, innermost first (up to `stop`)."""
    out = []
    n = node.parent
    while n is not None and n != stop:
        if n.type in types:
            out.append(n)
        n = n.parent
    return out


def statements(block: Node) -> list[Node]:
    """A compound statement's statements, comments left out."""
    return [c for c in block.named_children if c.type != "comment"]


def substituted(node: Node, replace: dict[int, str], names: dict[str, str] | None = None) -> str:
    """`node`'s text with the nodes whose ids are in `replace` written as given, and the
    identifiers named in `names` renamed (nested replacements: the outermost wins)."""
    edits: list[tuple[int, int, str]] = []
    for n in walk(node):
        new = replace.get(n.id)
        if new is None and names and n.type == "identifier":
            new = names.get(node_text(n))
        if new is not None and not any(s <= n.start_byte < e for s, e, _ in edits):
            edits.append((n.start_byte, n.end_byte, new))
    data, start = node.text, node.start_byte
    out, pos = [], 0
    for s, e, new in sorted(edits):
        out += [data[pos:s - start].decode(errors="replace"), new]
        pos = e - start
    out.append(data[pos:].decode(errors="replace"))
    return "".join(out)


def reads_first(stmts: list[Node], name: str) -> bool:
    """Whether `stmts`, run in order, read `name` before they set it (the value it has when
    they start is live). The first mention decides: a plain `name = e` (e not reading it) that
    runs unconditionally (a statement of its own, or a for loop's initializer) sets it; a for
    loop declaring its own `name` leaves it alone; any other mention reads it."""
    for s in stmts:
        init = s.child_by_field_name("initializer") if s.type == "for_statement" else None
        if init is not None and init.type == "declaration" and \
                name in {d for d, _ in declarators(init)}:
            continue
        setting = [s.named_children[0]] if s.type == "expression_statement" and \
            s.named_children else [init] if init is not None else []
        for n in walk(s):
            if n.type != "identifier" or node_text(n) != name:
                continue
            parent = n.parent
            return not (parent is not None and parent in setting and
                        parent.type == "assignment_expression" and
                        parent.child_by_field_name("left") == n and
                        node_text(parent.child_by_field_name("operator")) == "=" and
                        not mentions(parent.child_by_field_name("right"), {name}))
    return False
