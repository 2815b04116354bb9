"""The deterministic coder: new parameter ranges for the same source (a re-tune variant)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pragma_ncu.coder.variant import Variant
from pragma_ncu.spec.model import Param, ParamValue

REGISTER_CAP_FLAG = "-maxrregcount={}"


def params_table(params: Sequence[Param], defaults: dict[str, ParamValue]) -> dict[str, Any]:
    """`params` in the spec's TOML form, with `defaults` as the new default values."""
    table: dict[str, Any] = {}
    for p in params:
        default = defaults.get(p.name, p.default)
        if not p.values:
            table[p.name] = default
            continue
        entry: dict[str, Any] = {"default": default, "values": list(p.values)}
        if p.flag:
            entry["flag"] = p.flag
        table[p.name] = entry
    return table


def retuned(variant: Variant, params: Sequence[Param], best: dict[str, ParamValue],
            changes: Sequence[tuple[str, tuple[Any, ...]]], name: str, note: str) -> Variant:
    """`variant` with each (param, new values) change applied and the best point as the
    defaults, so the search's incumbent is the point to beat. A change naming an unknown
    parameter adds it as a register-cap flag parameter (the only knob the conductor adds)."""
    table = params_table(params, best)
    for pname, values in changes:
        entry = table.get(pname)
        if isinstance(entry, dict):
            default = entry["default"] if entry["default"] in values else values[0]
            table[pname] = {**entry, "values": list(values), "default": default}
        else:
            table[pname] = {"default": values[0], "values": list(values),
                            "flag": REGISTER_CAP_FLAG}
    return Variant(name, variant.filename, variant.source, {**variant.overlay, "params": table},
                   "retune", note)
