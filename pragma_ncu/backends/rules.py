"""What a target asks of a spec beyond what every spec says: its `SpecRules`, applied by the
one validator (`spec.file`). A target's own rules live in its folder (`backends/<name>/rules.py`
for a built-in one), this noun at the bottom so that the spec layer can read them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpecRules:
    """The sources a target takes (by suffix; a `.j2` template of one too), whether the spec
    must give a [launch] (a C function has no launch geometry), the dtypes its arguments may
    have (None: all; or, with `c_types_only`, those C has a portable type for) and why, and,
    when it refuses C++ template arguments, why."""

    target: str
    suffixes: tuple[str, ...]
    launch_required: bool = True
    dtypes: tuple[str, ...] | None = None
    c_types_only: bool = False
    dtypes_reason: str = ""
    template_args_refused: str = ""
