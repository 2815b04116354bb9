"""cache_policy: the default caching of global loads (`-Xptxas -dlcm=ca|cg`) as a knob.

Called for when L1 or L2 bandwidth is the limit in a kernel that loads through its pointer
parameters and has no shared memory (whose traffic would then be what keeps L1 busy): `ca`
caches global loads in L1 and L2, `cg` in L2 only, which keeps streaming loads from evicting
what L1 holds for reuse (a table read through the read-only path, say). "" (no option) is the
build as it was. The L1/shared split itself (the carveout) is left to the driver, which sizes
it per launch to the kernel's shared memory.
"""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves.base import Applied, Knob, Move, Refused, Subject

NAME = "cache_policy"
KNOB = "PNCU_LOAD_CACHE"
FLAG = "-Xptxas -dlcm={}"
VALUES = ("", "ca", "cg")


def apply(subject: Subject) -> Applied | Refused:
    if any("dlcm" in f for f in subject.spec.flags):
        return Refused(NAME, "the build sets the load cache policy already")
    if ts.shared_arrays(subject.tree):
        return Refused(NAME, "the kernel uses shared memory, whose traffic through L1 no load "
                             "cache policy changes")
    params = {p.name for p in ts.pointer_params(subject.kernel)}
    loads = [a for a in ts.accesses(ts.body(subject.kernel), params) if a.load]
    if not loads:
        return Refused(NAME, "the kernel loads nothing through its pointer parameters")
    roots = sorted({a.root for a in loads})
    return Applied(NAME, (Knob(KNOB, VALUES, "", FLAG),),
                   sites=(f"global loads of {', '.join(roots)}",))


MOVE = Move(
    NAME, ("l1_bandwidth", "l2_bandwidth"),
    "chooses where global loads are cached (-dlcm=ca: L1 and L2, cg: L2 only)", apply,
    knobs=(KNOB,),
    never="never sets the L1/shared carveout (the driver sizes it per launch)")
