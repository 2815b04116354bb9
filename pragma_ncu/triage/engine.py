"""triage(): two sides in, a TriageReport out: match the kernels, then for each pair decide the
duration verdict and explain the change (diagnose on both sides, compared)."""

from __future__ import annotations

from pragma_ncu.diagnose.engine import diagnose_in
from pragma_ncu.profile.model import KernelProfile
from pragma_ncu.triage import evidence
from pragma_ncu.triage.compare import duration_change
from pragma_ncu.triage.explain import (
    Knowledge,
    metric_deltas,
    rank_causes,
    what_to_check,
    write_diagnosis,
)
from pragma_ncu.triage.match import Matching, match_by_order, match_kernels
from pragma_ncu.triage.model import KernelMatch, KernelTriage, Side, TriageError, TriageReport

DEFAULT_THRESHOLD_PCT = 5.0


def triage(base: Side, new: Side, knowledge: Knowledge, *,
           threshold_pct: float = DEFAULT_THRESHOLD_PCT, kernel: str | None = None,
           by_order: bool = False) -> TriageReport:
    """Compare every kernel BASE and NEW have in common. `kernel` keeps only kernels of that
    name (or part of it), or pairs two names as "OLD=NEW"; `by_order` pairs kernels by
    position instead of by name. Raises TriageError when nothing can be compared."""
    base_name, _, new_name = (kernel or "").partition("=")
    kb = select(base, base_name or None)
    kn = select(new, (new_name or base_name) or None)
    matching = match_by_order(kb, kn) if by_order or "=" in (kernel or "") else \
        match_kernels(kb, kn)
    if not matching.pairs:
        raise TriageError(_no_common_kernel(kb, kn))
    kernels = tuple(triage_kernel(m, base, new, knowledge, threshold_pct)
                    for m in matching.pairs)
    return TriageReport(base, new, threshold_pct, kernels,
                        _names(matching.unmatched_base), _names(matching.unmatched_new),
                        side_notes(base, new, matching))


def select(side: Side, name: str | None) -> list[KernelProfile]:
    """The side's kernels named `name` (exactly, or as part of the signature); all without a
    name. TriageError lists the names seen when none matches."""
    kernels = list(side.profile.kernels)
    if not kernels:
        raise TriageError(f"{side.label}: the profile holds no kernel")
    if name is None:
        return kernels
    chosen = [k for k in kernels if name in (k.name, k.mangled) or name in k.display_name]
    if not chosen:
        seen = ", ".join(sorted({k.name for k in kernels}))
        raise TriageError(f"no kernel matches {name!r} in {side.label}; it holds: {seen}")
    return chosen


def triage_kernel(m: KernelMatch, base: Side, new: Side, knowledge: Knowledge,
                  threshold_pct: float) -> KernelTriage:
    """The verdict and the explanation of one matched kernel."""
    d = duration_change(m, base.timing_for(m.base), new.timing_for(m.new), threshold_pct)
    db = diagnose_in(base.profile, m.base, knowledge)
    dn = diagnose_in(new.profile, m.new, knowledge)
    moves = evidence.movements(m.base, m.new, knowledge)
    rules = evidence.rule_changes(m.base, m.new)
    causes, relations = rank_causes(db, dn, d.base_us, d.new_us, moves, rules, knowledge)
    config = evidence.config_changes(m.base, m.new)
    lines = evidence.line_shifts(m.base, m.new)
    text = write_diagnosis(m.new.name, d, db.classification, dn.classification, causes,
                           config, rules, threshold_pct)
    missing = evidence.coverage(m.base, m.new) + _timing_gaps(m, base, new)
    return KernelTriage(m, d, db.classification, dn.classification, causes,
                        metric_deltas(moves, causes, relations), config, rules, lines, text,
                        what_to_check(d.verdict, causes, lines, knowledge), missing)


def _timing_gaps(m: KernelMatch, base: Side, new: Side) -> tuple[str, ...]:
    have = (base.timing_for(m.base) is not None, new.timing_for(m.new) is not None)
    if all(have):
        return ()
    lacking = " and ".join(s for s, h in zip(("BASE", "NEW"), have, strict=True) if not h)
    return (f"no repeated timing on {lacking} (timing.json): the verdict rests on one ncu "
            "launch per side",)


def side_notes(base: Side, new: Side, matching: Matching) -> tuple[str, ...]:
    """Differences between the sides that qualify every comparison."""
    notes = [f"BASE: {n}" for n in base.notes] + [f"NEW: {n}" for n in new.notes]
    if base.device and new.device and base.device != new.device:
        notes.append(f"different GPUs: BASE ran on {base.device}, NEW on {new.device}; "
                     "durations include the hardware difference")
    vb, vn = base.profile.ncu_version, new.profile.ncu_version
    if vb and vn and vb != vn:
        notes.append(f"different ncu versions ({vb} vs {vn}): only metrics both collected "
                     "are compared")
    if matching.unmatched_base or matching.unmatched_new:
        notes.append(f"unmatched kernels: {len(matching.unmatched_base)} on BASE, "
                     f"{len(matching.unmatched_new)} on NEW (listed below, not compared)")
    return tuple(notes)


def _names(kernels: tuple[KernelProfile, ...]) -> tuple[str, ...]:
    return tuple(f"#{k.index} {k.name}" for k in kernels)


def _no_common_kernel(base: list[KernelProfile], new: list[KernelProfile]) -> str:
    def names(ks: list[KernelProfile]) -> str:
        return ", ".join(sorted({k.name for k in ks})[:8])

    return (f"no kernel in common: BASE has {names(base)}; NEW has {names(new)}. If the "
            "kernel was renamed, pair it with --kernel OLD=NEW or --match order")
