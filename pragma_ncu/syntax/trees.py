"""Shared-memory tree reductions over a block's threads, the first reduction most kernels
write: each thread stores its value in its slot of a `__shared__` array, and a loop of
log2(B) steps, each ending at a barrier, combines pairs of slots until slot 0 holds the
block's result:

    buf[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {       halving: `s /= 2`, `s = s >> 1`,
        if (tid < s) buf[tid] += buf[tid + s];           a literal or #define start
        __syncthreads();
    }
    for (int s = 1; s < blockDim.x; s *= 2) {            interleaved (divergent warps,
        if (tid % (2 * s) == 0) buf[tid] += buf[tid + s];    conflicted banks): `s <<= 1`
        __syncthreads();
    }

The combine is a sum (`+=`, `buf[tid] = buf[tid] + buf[tid + s]`), a min or a max
(`fmaxf(buf[tid], buf[tid + s])`, `max`, ..., or a ternary that keeps the larger), as
`reductions.update_kind` reads it; `tid` is `threadIdx.x` or a name declared from it and never
changed (`holding`). The stride's values are worked out from the loop's header at a given
block size (`constant`), so that a tree is read only where it reduces exactly the slots
[0, width) into slot 0.

Also here, what a rewrite of such a tree needs to know of the code around it: where a thread
may leave before it (`leaves_before`) and whether it stands under a condition that differs
between a warp's lanes (`divergent_around`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pragma_ncu.syntax import tree as ts
from pragma_ncu.syntax.memory import address, bare, lane_dependent, lane_varying
from pragma_ncu.syntax.reductions import SUM, update_kind
from pragma_ncu.syntax.tree import Node

HALVING, INTERLEAVED = "halving", "interleaved"
BARRIER = "__syncthreads"
MOST_STEPS = 11  # a stride loop over at most 1024 threads ends within 10 steps
_COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "<<=": "<<", ">>=": ">>"}
_OPS = ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", "<=", ">", ">=", "==", "!=",
        "&&", "||")
_INT_SUFFIX = "uUlL"


@dataclass(frozen=True)
class Tree:
    """A tree reduction: its stride loop, the slot array, its form, the combine (SUM or the
    min/max function; "max"/"min" for a comparison written out), the update that combines two
    slots with its reads of the thread's slot (`own`) and of its partner's (`partner`), and
    the slots it reduces into slot 0 ([0, width))."""

    loop: Node
    array: str
    form: str
    combine: str
    update: Node
    own: tuple[Node, ...]
    partner: tuple[Node, ...]
    width: int

    def combined(self, mine: str, other: str) -> str:
        """The update as C text with the thread's slot written `mine` and its partner's
        `other` (`mine += other`, `mine = fmaxf(mine, other)`)."""
        names = {n.id: mine for n in self.own} | {n.id: other for n in self.partner}
        return ts.substituted(self.update, names)


def holding(fn_body: Node, builtin: str) -> set[str]:
    """The names declared as `builtin` (`threadIdx.x`, `blockIdx.x`; a cast allowed: `const
    int tid = (int)threadIdx.x;`), declared once and never changed."""
    count: dict[str, int] = {}
    out = set()
    for decl in (n for n in ts.walk(fn_body) if n.type == "declaration"):
        for name, d in ts.declarators(decl):
            count[name] = count.get(name, 0) + 1
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            if value is not None and d.child_by_field_name("declarator").type == "identifier" \
                    and ts.compact(bare(value)) == builtin:
                out.add(name)
    changed = {ts.text(t) for n in ts.walk(fn_body) if (t := ts.assigned(n)) is not None}
    return {name for name in out if count[name] == 1 and name not in changed}


def is_builtin(node: Node | None, builtin: str, names: set[str]) -> bool:
    """`node` is `builtin` (`threadIdx.x`) or one of the names holding it, casts and
    parentheses aside."""
    if node is None:
        return False
    n = bare(node)
    return ts.compact(n) == builtin or (n.type == "identifier" and ts.text(n) in names)


def constant(node: Node | None, values: Mapping[str, int]) -> int | None:
    """The value of an integer expression of literals and the names in `values` (`blockDim.x`
    among them, as written without spaces), with C's integer arithmetic; None where it reads
    anything else."""
    if node is None:
        return None
    kind = node.type
    if kind == "number_literal":
        return _literal(ts.text(node))
    if kind in ("identifier", "field_expression"):
        return values.get(ts.compact(node))
    if kind == "cast_expression" and any(word in ts.text(node.child_by_field_name("type"))
                                         for word in ("float", "double", "half")):
        return None  # arithmetic of another kind from here on
    if kind in ("parenthesized_expression", "cast_expression"):
        return constant(node.named_children[-1], values) if node.named_children else None
    if kind == "unary_expression":
        arg = constant(node.child_by_field_name("argument"), values)
        op = ts.text(node.child_by_field_name("operator"))
        return None if arg is None else {"-": -arg, "+": arg, "~": ~arg, "!": int(not arg)}.get(op)
    if kind == "binary_expression":
        op = ts.text(node.child_by_field_name("operator"))
        left = constant(node.child_by_field_name("left"), values)
        right = constant(node.child_by_field_name("right"), values)
        return None if left is None or right is None or op not in _OPS else \
            _arithmetic(op, left, right)
    return None


def _literal(text: str) -> int | None:
    digits = text.rstrip(_INT_SUFFIX).replace("'", "")
    try:
        return int(digits, 0) if not digits.startswith("0") or digits == "0" or \
            digits[:2].lower() in ("0x", "0b") else int(digits, 8)
    except ValueError:
        return None  # a floating-point literal


def _arithmetic(op: str, a: int, b: int) -> int | None:
    if op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates toward zero
        return q if op == "/" else a - q * b
    if op in ("<<", ">>"):
        return None if not 0 <= b < 64 else a << b if op == "<<" else a >> b
    tests = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b,
             "&&": bool(a and b), "||": bool(a or b)}
    if op in tests:
        return int(tests[op])
    return {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]


# --- the tree ------------------------------------------------------------------------------

def trees(fn_body: Node, threads: set[str], shared: set[str],
          values: Mapping[str, int]) -> tuple[list[Tree], list[str]]:
    """The tree reductions below `fn_body` (over `threadIdx.x` and the names in `threads`, in
    the `__shared__` arrays named in `shared`, the stride worked out with `values`), and why
    each other loop that looks like one (a barrier among its statements and a store to a
    shared array) is not, the innermost first (a loop around a tree looks like one too)."""
    found, why = [], []
    candidates = [n for n in ts.walk(fn_body) if n.type in ts.LOOPS and
                  _looks_like_one(n, shared)]
    for n in candidates:
        read = tree(n, threads, shared, values)
        if isinstance(read, str):
            outer = any(m != n and ts.inside(m, n) for m in candidates)
            why.append((outer, f"the loop at line {ts.first_line(n)} is no tree reduction: "
                               f"{read}"))
        else:
            found.append(read)
    return found, [reason for _, reason in sorted(why, key=lambda w: w[0])]


def _looks_like_one(loop: Node, shared: set[str]) -> bool:
    body = loop.child_by_field_name("body")
    if body is None or body.type != "compound_statement":
        return False
    return any(_is_barrier(s) for s in ts.statements(body)) and any(
        (t := ts.assigned(n)) is not None and _root(t) in shared for n in ts.walk(body))


def _root(node: Node) -> str:
    """The array an element (`a[i]`, `a[i][j]`) belongs to."""
    while node.type == "subscript_expression":
        node = node.child_by_field_name("argument")
    return ts.text(node) if node.type == "identifier" else ""


def _is_barrier(statement: Node) -> bool:
    return statement.type == "expression_statement" and bool(statement.named_children) and \
        statement.named_children[0].type == "call_expression" and \
        ts.text(statement.named_children[0].child_by_field_name("function")) == BARRIER


def tree(loop: Node, threads: set[str], shared: set[str],
         values: Mapping[str, int]) -> Tree | str:
    """The tree reduction `loop` is, or why it is none."""
    if loop.type != "for_statement":
        return "not a for loop"
    stride = _stride_name(loop)
    if stride is None:
        return "its header does not start one stride variable (`int s = blockDim.x / 2`)"
    body = loop.child_by_field_name("body")
    stmts = ts.statements(body)
    if len(stmts) != 2 or stmts[0].type != "if_statement" or not _is_barrier(stmts[1]) or \
            stmts[0].child_by_field_name("alternative") is not None:
        return "its body is not `if (...) <combine two slots>; __syncthreads();`"
    if any(ts.text(t) == stride for n in ts.walk(body) if (t := ts.assigned(n)) is not None):
        return f"its body changes the stride {stride}"
    update = _update(stmts[0])
    if update is None:
        return "the `if` does not hold one assignment"
    read = _slots(update, stride, threads, shared)
    if isinstance(read, str):
        return read
    array, combine, own, partner = read
    form = _form(stmts[0], stride, threads)
    if form is None:
        return (f"its test is neither `tid < {stride}` (halving) nor `tid % (2 * {stride}) == 0` "
                "(interleaved)")
    strides = _strides(loop, stride, values)
    if isinstance(strides, str):
        return strides
    width = _width(form, strides)
    if width is None:
        way = "halve from a power of two to 1" if form == HALVING else "double from 1"
        return (f"its strides at this block size ({', '.join(map(str, strides)) or 'none'}) do "
                f"not {way}: some slots would be skipped or combined twice")
    return Tree(loop, array, form, combine, update, own, partner, width)


def _stride_name(loop: Node) -> str | None:
    init = loop.child_by_field_name("initializer")
    if init is not None and init.type == "declaration":
        names = ts.declarators(init)
        return names[0][0] if len(names) == 1 and names[0][1].type == "init_declarator" \
            else None
    if init is not None and init.type == "assignment_expression" and \
            ts.text(init.child_by_field_name("operator")) == "=" and \
            init.child_by_field_name("left").type == "identifier":
        return ts.text(init.child_by_field_name("left"))
    return None


def _update(test: Node) -> Node | None:
    then = test.child_by_field_name("consequence")
    if then is not None and then.type == "compound_statement":
        inner = ts.statements(then)
        then = inner[0] if len(inner) == 1 else None
    if then is None or then.type != "expression_statement" or not then.named_children:
        return None
    update = then.named_children[0]
    return update if update.type == "assignment_expression" else None


def _slots(update: Node, stride: str, threads: set[str], shared: set[str]
           ) -> tuple[str, str, tuple[Node, ...], tuple[Node, ...]] | str:
    """(the array, the combine, the thread's slot's nodes, the partner's) of an update that
    combines `buf[tid]` with `buf[tid + s]` by a sum, min or max, or why it does not."""
    target = update.child_by_field_name("left")
    array, index = address(target)
    if array not in shared or not is_builtin(index, "threadIdx.x", threads):
        return ("it does not store to a __shared__ array at the thread's slot "
                f"({ts.text(target)})")
    own, partner = [target], []
    for n in ts.walk(update.child_by_field_name("right")):
        base, at = address(n) if n.type == "subscript_expression" else (None, None)
        if base is None and n.type == "identifier" and ts.text(n) == array and not (
                n.parent is not None and n.parent.type == "subscript_expression"):
            return f"it reads {array} otherwise than by element"
        if base != array:
            continue
        if is_builtin(at, "threadIdx.x", threads):
            own.append(n)
        elif _partner(at, stride, threads):
            partner.append(n)
        else:
            return f"it reads {ts.text(n)}, which is neither the thread's slot nor tid + {stride}"
    op = ts.text(update.child_by_field_name("operator"))
    kind = update_kind(update, ts.compact(target))
    if kind is None or op == "-=" or not partner or not _two_operands(update, kind, own,
                                                                       partner):
        return (f"it does not combine {ts.text(target)} with its partner by a sum, min or max "
                f"({ts.text(update)})")
    return array or "", kind, tuple(own), tuple(partner)


def _partner(index: Node | None, stride: str, threads: set[str]) -> bool:
    """`index` is `tid + s` or `s + tid`."""
    n = bare(index) if index is not None else None
    if n is None or n.type != "binary_expression" or \
            ts.text(n.child_by_field_name("operator")) != "+":
        return False
    sides = [n.child_by_field_name("left"), n.child_by_field_name("right")]
    return any(is_builtin(a, "threadIdx.x", threads) and bare(b).type == "identifier" and
               ts.text(bare(b)) == stride for a, b in (sides, sides[::-1]))


def _two_operands(update: Node, kind: str, own: list[Node], partner: list[Node]) -> bool:
    """The combine's operands are the thread's slot and its partner's and nothing else
    (`buf[tid] += 2 * buf[tid + s]` is no reduction)."""
    ids = {n.id for n in own}, {n.id for n in partner}
    def which(node: Node | None) -> int:
        b = bare(node) if node is not None else None
        return 0 if b is not None and b.id in ids[0] else 1 if b is not None and \
            b.id in ids[1] else -1
    right = bare(update.child_by_field_name("right"))
    op = ts.text(update.child_by_field_name("operator"))
    if kind == SUM:
        if op == "+=":
            return which(right) == 1
        return right.type == "binary_expression" and \
            [which(right.child_by_field_name(s)) for s in ("left", "right")] == [0, 1]
    if right.type == "call_expression":
        args = right.child_by_field_name("arguments").named_children
        return sorted(which(a) for a in args) == [0, 1]
    if right.type == "conditional_expression":  # update_kind read its test as a min or max
        parts = [right.child_by_field_name("consequence"),
                 right.child_by_field_name("alternative")]
        return sorted(which(p) for p in parts) == [0, 1]
    return False


def _form(test: Node, stride: str, threads: set[str]) -> str | None:
    """HALVING for `tid < s` (`s > tid`), INTERLEAVED for `tid % (2 * s) == 0` (`s * 2`, `s
    << 1`, `s + s`; `0 == ...`), else None."""
    clause = test.child_by_field_name("condition")
    cond = bare(clause.child_by_field_name("value") or clause.named_children[0])
    if cond.type != "binary_expression":
        return None
    op = ts.text(cond.child_by_field_name("operator"))
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    def named(n: Node, name: str) -> bool:
        return bare(n).type == "identifier" and ts.text(bare(n)) == name
    if (op == "<" and is_builtin(left, "threadIdx.x", threads) and named(right, stride)) or \
            (op == ">" and named(left, stride) and is_builtin(right, "threadIdx.x", threads)):
        return HALVING
    if op != "==":
        return None
    zero, other = (left, right) if ts.compact(bare(left)) == "0" else (right, left)
    other = bare(other)
    if ts.compact(bare(zero)) != "0" or other.type != "binary_expression" or \
            ts.text(other.child_by_field_name("operator")) != "%" or \
            not is_builtin(other.child_by_field_name("left"), "threadIdx.x", threads):
        return None
    doubled = ts.compact(bare(other.child_by_field_name("right")))
    forms = {f"2*{stride}", f"{stride}*2", f"{stride}<<1", f"{stride}+{stride}",
             f"(2*{stride})", f"({stride}*2)"}
    return INTERLEAVED if doubled in forms else None


def _strides(loop: Node, stride: str, values: Mapping[str, int]) -> list[int] | str:
    """The stride's values, one an iteration, worked out from the loop's header."""
    init = loop.child_by_field_name("initializer")
    start = init.child_by_field_name("right") if init.type == "assignment_expression" else \
        ts.declarators(init)[0][1].child_by_field_name("value")
    now = constant(start, values)
    if now is None:
        return (f"its first stride ({ts.text(start)}) is no number at this block size "
                "(blockDim.x, literals and #defines only)")
    condition, step = loop.child_by_field_name("condition"), loop.child_by_field_name("update")
    out: list[int] = []
    while True:
        going = constant(condition, {**values, stride: now})
        if going is None:
            return f"its condition ({ts.text(condition)}) is no number at this block size"
        if not going:
            return out
        out.append(now)
        nxt = _stepped(step, stride, {**values, stride: now})
        if nxt is None:
            return f"its step ({ts.text(step)}) does not work out to a number"
        if len(out) > MOST_STEPS:
            return f"its stride does not end within {MOST_STEPS} steps"
        now = nxt


def _stepped(step: Node | None, stride: str, values: Mapping[str, int]) -> int | None:
    if step is None or step.type != "assignment_expression" or \
            ts.text(step.child_by_field_name("left")) != stride:
        return None
    op = ts.text(step.child_by_field_name("operator"))
    right = constant(step.child_by_field_name("right"), values)
    if right is None:
        return None
    if op == "=":
        return right
    return _arithmetic(_COMPOUND[op], values[stride], right) if op in _COMPOUND else None


def _width(form: str, strides: list[int]) -> int | None:
    """The slots [0, width) the strides reduce into slot 0, None where they skip or repeat
    some (a halving from a power of two to 1; a doubling from 1)."""
    if not strides:
        return None
    top = max(strides)
    if top & (top - 1):
        return None
    want = [top >> k for k in range(top.bit_length())]
    return 2 * top if strides == (want if form == HALVING else want[::-1]) else None


# --- what stands around a tree -------------------------------------------------------------

def leaves_before(fn_body: Node, node: Node) -> Node | None:
    """The first statement before `node` in source order that can take a thread past it: a
    `return` or `goto` of the function (not of a lambda in it), or a `break` or `continue` of
    a loop (or switch) around `node`."""
    for n in ts.walk(fn_body):
        if n.start_byte >= node.start_byte:
            break
        if n.type in ("return_statement", "goto_statement") and \
                not ts.enclosing(n, ts.FUNCTION_SCOPES, fn_body):
            return n
        if n.type in ("break_statement", "continue_statement"):
            kinds = ts.LOOPS if n.type == "continue_statement" else (*ts.LOOPS, "switch_statement")
            target = next(iter(ts.enclosing(n, kinds, fn_body)), None)
            if target is not None and ts.inside(node, target):
                return n
    return None


def divergent_around(fn_body: Node, node: Node) -> Node | None:
    """The innermost statement around `node` whose condition can differ between a warp's
    lanes (it reads threadIdx.x or a name computed from it), None where every lane of a warp
    that reaches the enclosing code reaches `node`."""
    varying = lane_varying(fn_body)
    outer = node.parent
    while outer is not None and outer != fn_body:
        if outer.type in ("if_statement", *ts.LOOPS, "switch_statement",
                          "conditional_expression"):
            test = outer.child_by_field_name("condition")
            parts = [test] if outer.type != "for_statement" else \
                [outer.child_by_field_name(f) for f in ("initializer", "condition", "update")]
            if any(p is not None and lane_dependent(p, varying) for p in parts):
                return outer
        outer = outer.parent
    return None
