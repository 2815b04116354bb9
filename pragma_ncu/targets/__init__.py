"""The built-in targets and what each asks of a spec, below the spec that reads it.

`BUILTIN` names the built-in targets (the folders of `backends/` that are targets), the first
the default; `BUILTIN_RULES` holds each one's `SpecRules` (`targets/<name>.py`: its sources by
suffix, whether `[launch]` is required and within which limits, its dtypes, template
arguments), which the one validator (`spec.file`) applies. Adding a built-in target is its
folder under `backends/`, its rules module here and its name in BUILTIN. The registry
(`backends`) loads a target's `target` module on first use; a target registered from outside
brings its rules with it (`spec.model.register_rules`)."""

from __future__ import annotations

from pragma_ncu.targets import cpu, cuda
from pragma_ncu.targets.rules import SpecRules

BUILTIN = ("cuda", "cpu")
BUILTIN_RULES: tuple[SpecRules, ...] = (cuda.RULES, cpu.RULES)
