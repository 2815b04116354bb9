"""What a CUDA spec says beyond what every spec says: its sources are .cu files (and .cu.j2
templates), and it gives a [launch]."""

from __future__ import annotations

from pragma_ncu.backends.rules import SpecRules

RULES = SpecRules("cuda", (".cu",))
