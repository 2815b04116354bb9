"""The built-in targets: the folders of `backends/` that are targets, by name, the first the
default. Adding one is its folder and its name here; the registry (`backends`) loads its
`target` module on first use, and the spec validator its `rules` module (what its specs may
say), which is why the list sits at the bottom, below the spec."""

from __future__ import annotations

import importlib
from functools import cache

from pragma_ncu.backends.rules import SpecRules

BUILTIN = ("cuda", "cpu")


@cache
def builtin_rules() -> tuple[SpecRules, ...]:
    """Each built-in target's spec rules (its `rules.RULES`), in BUILTIN's order."""
    return tuple(importlib.import_module(f"pragma_ncu.backends.{name}.rules").RULES
                 for name in BUILTIN)
