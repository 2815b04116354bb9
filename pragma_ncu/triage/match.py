"""Pairing the kernels of BASE with those of NEW.

By name, most specific first: the mangled symbol, then the demangled name, then the name without
template arguments. When a name occurs several times on a side (a program launching the same
kernel at several sizes), its launches are paired by launch configuration (grid and block
dimensions), then by NVTX range when the profile carries one, then in order of appearance.
Kernels left over are listed as unmatched; `--match order` pairs kernels by position instead,
for builds whose names changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pragma_ncu.profile.model import KernelProfile
from pragma_ncu.triage.model import KernelMatch

_GRID = ("launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z")
_BLOCK = ("launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z")
_TEMPLATE = re.compile(r"<.*>")


@dataclass(frozen=True)
class Matching:
    """The pairs, and the kernels of each side that found no partner."""

    pairs: tuple[KernelMatch, ...]
    unmatched_base: tuple[KernelProfile, ...]
    unmatched_new: tuple[KernelProfile, ...]


def launch_config(k: KernelProfile) -> tuple[float, ...] | None:
    """(grid x, y, z, block x, y, z), or (grid size, block size), or None when not collected."""
    dims = [k.value(n) for n in _GRID + _BLOCK]
    if all(d is not None for d in dims):
        return tuple(d for d in dims if d is not None)
    sizes = (k.value("launch__grid_size"), k.value("launch__block_size"))
    return (sizes[0], sizes[1]) if sizes[0] is not None and sizes[1] is not None else None


def nvtx_range(k: KernelProfile) -> str:
    """The NVTX range the launch ran in, when the profile carries one (string metrics whose
    names start with "nvtx"); "" otherwise."""
    parts = [str(m.value) for n, m in sorted(k.metrics.items())
             if n.lower().startswith("nvtx") and isinstance(m.value, str) and m.value]
    return "/".join(parts)


def base_name(k: KernelProfile) -> str:
    return _TEMPLATE.sub("", k.name).strip()


KEYS: tuple[tuple[str, Callable[[KernelProfile], str]], ...] = (
    ("mangled name", lambda k: k.mangled),
    ("name", lambda k: k.name),
    ("name without template arguments", base_name),
)


def match_kernels(base: Sequence[KernelProfile], new: Sequence[KernelProfile]) -> Matching:
    """Pair kernels by name (then launch, NVTX, order); see the module docstring."""
    left_b, left_n = list(base), list(new)
    pairs: list[KernelMatch] = []
    for label, key in KEYS:
        found = _match_by(left_b, left_n, label, key)
        pairs += found
        paired = {id(p.base) for p in found} | {id(p.new) for p in found}
        left_b = [k for k in left_b if id(k) not in paired]
        left_n = [k for k in left_n if id(k) not in paired]
    pairs.sort(key=lambda p: (p.base.index, p.new.index))
    return Matching(tuple(pairs), tuple(left_b), tuple(left_n))


def match_by_order(base: Sequence[KernelProfile], new: Sequence[KernelProfile]) -> Matching:
    """Pair the i-th kernel of BASE with the i-th of NEW, whatever their names."""
    n = min(len(base), len(new))
    pairs = tuple(KernelMatch(b, k, "position (--match order)")
                  for b, k in zip(base[:n], new[:n], strict=True))
    return Matching(pairs, tuple(base[n:]), tuple(new[n:]))


def _match_by(base: list[KernelProfile], new: list[KernelProfile], label: str,
              key: Callable[[KernelProfile], str]) -> list[KernelMatch]:
    groups_n: dict[str, list[KernelProfile]] = {}
    for k in new:
        if key(k):
            groups_n.setdefault(key(k), []).append(k)
    groups_b: dict[str, list[KernelProfile]] = {}
    for k in base:
        if key(k) in groups_n:
            groups_b.setdefault(key(k), []).append(k)
    pairs = []
    for name, members in groups_b.items():
        pairs += _pair_group(members, groups_n[name], label)
    return pairs


def _pair_group(base: list[KernelProfile], new: list[KernelProfile], label: str
                ) -> list[KernelMatch]:
    """Launches of one name: equal launch and NVTX, then equal NVTX, then equal launch, then
    in order."""
    if len(base) == 1 and len(new) == 1:
        return [KernelMatch(base[0], new[0], label)]
    nvtx = any(nvtx_range(k) for k in base + new)
    config = any(launch_config(k) is not None for k in base + new)
    passes: list[tuple[str, Callable[[KernelProfile], object]]] = []
    if nvtx and config:
        passes.append(("launch + NVTX", lambda k: (launch_config(k), nvtx_range(k))))
    if nvtx:
        passes.append(("NVTX", nvtx_range))
    if config:
        passes.append(("launch", launch_config))
    passes.append(("order", lambda k: 0))
    pairs: list[KernelMatch] = []
    left_b, left_n = list(base), list(new)
    for how, key in passes:
        for b in list(left_b):
            partner = next((n for n in left_n if key(n) == key(b)), None)
            if partner is not None:
                pairs.append(KernelMatch(b, partner, f"{label} + {how}"))
                left_b.remove(b)
                left_n.remove(partner)
    return pairs
