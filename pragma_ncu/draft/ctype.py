"""C and CUDA element types as spec dtypes.

A type name is first resolved through the file's own typedefs, `using` aliases and object-like
macros (`#define real float`, or a knob `#ifndef T` / `#define T float`), then read as:
- a C scalar type, in any word order (`unsigned long int`), or a fixed-width / CUDA name
  (`int32_t`, `size_t`, `__half`, `__nv_bfloat16`); `long` is 64 bits, as on Linux (LP64);
- a CUDA vector type (`float4`, `half2`, `uint2`, `longlong2`): its lane type, several lanes
  per element;
- a struct of the file whose members are all of one such type (`struct P { float f[16]; }`):
  that type, one lane per member value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pragma_ncu.syntax.facts import SourceFacts

_NAMED = {
    "float": "fp32", "double": "fp64", "half": "fp16", "__half": "fp16", "_Float16": "fp16",
    "__nv_bfloat16": "bf16", "nv_bfloat16": "bf16", "__bf16": "bf16", "bfloat16": "bf16",
    "int8_t": "int8", "uint8_t": "uint8", "int32_t": "int32", "uint32_t": "uint32",
    "int64_t": "int64", "uint64_t": "uint64", "size_t": "uint64", "ssize_t": "int64",
    "ptrdiff_t": "int64", "intptr_t": "int64", "uintptr_t": "uint64",
    "bool": "uint8", "_Bool": "uint8",
}
_NO_DTYPE = {"short", "int16_t", "uint16_t", "long double", "__half_raw", "__nv_fp8_e4m3",
             "__nv_fp8_e5m2", "char16_t", "char32_t", "wchar_t"}
_VECTOR = re.compile(r"(u?)(char|short|int|long|longlong|float|double)([1-4])")
_PAIRS = {"half2": ("fp16", 2), "__half2": ("fp16", 2), "__nv_bfloat162": ("bf16", 2),
          "nv_bfloat162": ("bf16", 2)}
_LANE = {"char": "int8", "int": "int32", "long": "int64", "longlong": "int64",
         "float": "fp32", "double": "fp64"}


@dataclass(frozen=True)
class ElementType:
    """What one array element or scalar is in spec terms; `dtype` None when it has none."""

    dtype: str | None
    lanes: int = 1  # spec elements per C element (float4: 4)
    via: str = ""  # how the name was resolved, for the draft's comment
    problem: str = ""  # why it has no dtype


def scalar_dtype(spelling: str) -> str | None:
    """A C scalar spelling in any word order ("long unsigned int") as a dtype, or None."""
    words = spelling.split()
    if not words:
        return None
    if len(words) == 1 and words[0] in _NAMED:
        return _NAMED[words[0]]
    unsigned = "unsigned" in words
    rest = [w for w in words if w not in ("signed", "unsigned")]
    longs, shorts = rest.count("long"), rest.count("short")
    base = [w for w in rest if w not in ("long", "short")]
    if base == ["char"] and not longs and not shorts:
        return "uint8" if unsigned else "int8"  # plain char is signed on x86 and in CUDA
    if base in ([], ["int"]) and not shorts:
        if longs == 0:
            return "uint32" if unsigned else "int32"
        if longs <= 2:
            return "uint64" if unsigned else "int64"
    if base == ["double"] and not longs:
        return "fp64"
    return None


def element_type(name: str, facts: SourceFacts,
                 templates: dict[str, str | None] | None = None) -> ElementType:
    """The spec dtype of the C type `name`; `templates` maps a kernel's template type
    parameters to their defaults (None: no default)."""
    seen: list[str] = []
    for _ in range(8):  # aliases of aliases, bounded
        if templates is not None and name in templates:
            default = templates[name]
            if default is None:
                return ElementType(None, via=f"template parameter {name}",
                                   problem=f"{name} is a template type parameter without a "
                                   "default")
            seen.append(f"{name} = {default}")
            name = default
            continue
        alias = dict(facts.aliases).get(name) or facts.macro(name)
        if alias and alias != name and re.fullmatch(r"[\w\s]+", alias):
            seen.append(f"{name} = {alias}")
            name = alias
            continue
        break
    via = ", ".join(seen)
    return _direct(" ".join(name.split()), facts, via)


def _direct(name: str, facts: SourceFacts, via: str) -> ElementType:
    dtype = scalar_dtype(name)
    if dtype is not None:
        return ElementType(dtype, 1, via)
    if name in _PAIRS:
        d, lanes = _PAIRS[name]
        return ElementType(d, lanes, via or f"{name}: {lanes} x {d}")
    vector = _VECTOR.fullmatch(name)
    if vector and vector.group(2) != "short":
        unsigned, lane, count = vector.groups()
        d = ("u" if unsigned else "") + _LANE[lane]
        return ElementType(d, int(count), via or f"{name}: {count} x {d}")
    struct = dict(facts.structs).get(name)
    if struct:
        return _struct(name, struct, facts, via)
    if name in _NO_DTYPE or (vector and vector.group(2) == "short"):
        return ElementType(None, via=via, problem=f"{name} has no spec dtype (16-bit integers, "
                           "long double and fp8 have none)")
    return ElementType(None, via=via, problem=f"{name} is not a type pragma-ncu knows (nor a "
                       "typedef, macro or struct of this file)")


def _struct(name: str, fields: tuple[tuple[str, int], ...], facts: SourceFacts,
            via: str) -> ElementType:
    if not all(n > 0 for _, n in fields):  # a pointer member (or one of unknown size)
        members: list[tuple[ElementType, int]] = []
    else:
        members = [(_direct(t, facts, ""), n) for t, n in fields]
    kinds = {m.dtype for m, _ in members}
    count = sum(m.lanes * n for m, n in members)
    if len(kinds) == 1 and None not in kinds:
        dtype = kinds.pop()
        return ElementType(dtype, count, via or f"struct {name}: {count} x {dtype}")
    return ElementType(None, via=via, problem=f"struct {name} mixes member types (or holds "
                       "pointers); a spec array has one element type")
