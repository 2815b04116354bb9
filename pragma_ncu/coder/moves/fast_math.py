"""fast_math: nvcc's fast-math options as a knob, `-use_fast_math` or only its arithmetic parts.

Called for when the FMA/ALU or special-function pipes are the limit, or the schedulers are
(issue-bound), in a kernel that calls single-precision functions fast math replaces: the
precise `sinf`, `expf`, `powf`, ... run long FMA sequences (range reduction, polynomials) where
`-use_fast_math` issues one or two special-function instructions; a division by a float and
`sqrtf` become approximations too. The parts: `ftz=true -prec-div=false -prec-sqrt=false`
(arithmetic only, precise functions) and `use_fast_math` (everything). The error grows, so a
point is kept only where verification passes at the spec's tolerance at every shape. "" (no
flag) is the build as it was.
"""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves.base import Applied, Knob, Move, Node, Refused, Subject

NAME = "fast_math"
KNOB = "PNCU_FAST_MATH"
FLAG = "-{}"  # nvcc takes its long options with one dash
VALUES = ("", "ftz=true -prec-div=false -prec-sqrt=false", "use_fast_math")
FLOAT_FUNCS = frozenset({"sinf", "cosf", "tanf", "sincosf", "expf", "exp10f", "logf", "log2f",
                         "log10f", "powf", "sqrtf", "tanhf", "sinhf", "coshf", "asinf", "acosf",
                         "atanf", "atan2f", "erff", "log1pf", "expm1f", "normcdff"})
GENERIC_FUNCS = frozenset({"sin", "cos", "tan", "exp", "log", "log2", "log10", "pow", "sqrt",
                           "tanh", "sinh", "cosh", "atan2", "erf"})
ALREADY = ("use_fast_math", "-ftz=true", "--ftz=true", "prec-div=false")


def apply(subject: Subject) -> Applied | Refused:
    flags = " ".join(subject.spec.flags)
    if any(a in flags for a in ALREADY) or any(
            p.flag and "fast_math" in p.flag for p in subject.spec.params):
        return Refused(NAME, "the build uses fast math already")
    found = sorted({name for f in subject.reached() for name in _math(f)})
    if not found:
        return Refused(NAME, "the kernel calls no single-precision function, float division "
                             "or square root that fast math would change")
    return Applied(NAME, (Knob(KNOB, VALUES, "", FLAG),),
                   sites=(f"nvcc options for {', '.join(found)}",))


def _math(function: Node) -> set[str]:
    """The calls and divisions fast math changes in a function (a generic `exp` counts only
    in a function that names no double)."""
    double = "double" in ts.text(function)
    out = set()
    for n in ts.walk(ts.body(function)):
        if n.type == "call_expression":
            name = ts.text(n.child_by_field_name("function"))
            if name in FLOAT_FUNCS or (name in GENERIC_FUNCS and not double):
                out.add(name)
        elif n.type == "binary_expression" and ts.text(n.child_by_field_name(
                "operator")) == "/" and _single(n):
            out.add("float division")
    return out


def _single(division: Node) -> bool:
    """A division whose operands show they are floats: an `f` literal or a float function."""
    for c in ts.walk(division):
        if c.type == "number_literal" and ts.text(c).lower().endswith("f") and \
                not ts.text(c).lower().startswith("0x"):
            return True
        if c.type == "call_expression" and ts.text(c.child_by_field_name("function")) in \
                FLOAT_FUNCS:
            return True
    return False


MOVE = Move(
    NAME, ("compute_fma", "compute_sfu", "instruction_issue"),
    "builds with fast math (-use_fast_math or its arithmetic parts) where precise "
    "single-precision functions, divisions or square roots load the pipes", apply,
    knobs=(KNOB,),
    never="never keeps a point that fails verification at the spec's tolerance")
