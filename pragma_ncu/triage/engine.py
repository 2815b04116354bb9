"""triage(): two sides in, a TriageReport out. The launches of each side are grouped by kernel
(pragma_ncu.triage.groups), the groups paired across builds (match), each pair judged from the
two samples of launch durations (compare), and each changed group explained on one
representative launch per side (diagnose on both, compared) rather than on every launch.
What is particular to a collector (a launch's duration, its diagnosis rules, what its own rule
results speak to) comes from the target that owns the side's recorded collector."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from pragma_ncu import backends
from pragma_ncu.backends import diagnose_in
from pragma_ncu.backends.base import Target, UsageError
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.triage import evidence
from pragma_ncu.triage.causes import (
    Knowledge,
    evidence_words,
    metric_deltas,
    rank_causes,
    what_to_check,
    write_diagnosis,
)
from pragma_ncu.triage.compare import call_change, group_change
from pragma_ncu.triage.groups import KernelGroup, group_launches
from pragma_ncu.triage.match import (
    GroupMatch,
    Matching,
    match_by_order,
    match_groups,
    with_swaps,
)
from pragma_ncu.triage.report import (
    IMPROVEMENT,
    REGRESSION,
    UNCHANGED,
    UNDECIDED,
    DurationChange,
    GroupTriage,
    KernelMatch,
    KernelTriage,
    Side,
    TriageError,
    TriageReport,
)

DEFAULT_THRESHOLD_PCT = 5.0
MAX_THRESHOLD_PCT = 1000.0  # a slowdown of 11x: beyond it no threshold is a gate
PAIRED_BY_NAME = "paired by --kernel OLD=NEW"
ONE_SIDE_EXPLAINED = 6  # kernels on one side only given their own top cause, costliest first


def check_threshold(threshold_pct: float) -> None:
    """A threshold is a finite percentage from 0 to MAX_THRESHOLD_PCT: at NaN no slowdown
    exceeds it, and a gate that can never fail is no gate."""
    if not (math.isfinite(threshold_pct) and 0 <= threshold_pct <= MAX_THRESHOLD_PCT):
        raise UsageError(f"threshold {threshold_pct!r}: expected a percentage from 0 to "
                         f"{MAX_THRESHOLD_PCT:g}", option="--threshold")


def triage(base: Side, new: Side, knowledge: Knowledge, *,
           threshold_pct: float = DEFAULT_THRESHOLD_PCT, kernel: str | None = None,
           by_order: bool = False) -> TriageReport:
    """Compare every kernel group BASE and NEW have in common. `kernel` keeps only kernels of
    that name (or part of it) and explains them whatever their verdict, or pairs two names as
    "OLD=NEW"; `by_order` pairs groups by order of first launch instead of by name. Raises
    TriageError when nothing can be compared, UsageError for a threshold that is not a
    percentage (check_threshold)."""
    check_threshold(threshold_pct)
    base_name, _, new_name = (kernel or "").partition("=")
    gb = timed(group_launches(select(base, base_name or None), reader(base).launch_duration_us),
               base)
    gn = timed(group_launches(select(new, (new_name or base_name) or None),
                              reader(new).launch_duration_us), new)
    if "=" in (kernel or ""):
        matching = match_by_order(gb, gn, PAIRED_BY_NAME)
    elif by_order:
        matching = match_by_order(gb, gn)
    else:
        matching = with_swaps(match_groups(gb, gn))
    if not matching.pairs:
        raise TriageError(_no_common_kernel(gb, gn))
    judged = [(m, judge(m, base, new, threshold_pct)) for m in matching.pairs]
    # Explained: every changed group, every swap (each side's bottleneck), whatever was named
    wanted = [(m, d) for m, d in judged if d.verdict != UNCHANGED or m.swapped or kernel]
    removed, added = costliest(matching.removed), costliest(matching.added)
    reps = [(m.base.representative(), m.new.representative()) for m, _ in wanted]
    # The complete profiles of every launch explained below, read in one go per side.
    full_b = _full(base, [b for b, _ in reps] + [g.representative() for g in removed])
    full_n = _full(new, [n for _, n in reps] + [g.representative() for g in added])
    details = explain_groups(wanted, reps, full_b, full_n, base, new, knowledge, threshold_pct)
    groups = sorted((_with_evidence(GroupTriage(m, d, details.get(id(m))), knowledge)
                     for m, d in judged), key=_rank)
    own = {**one_side_diagnoses(removed, base, full_b, knowledge),
           **one_side_diagnoses(added, new, full_n, knowledge)}
    lower = {sig: d.roofline.lower_precision for sig, d in own.items()
             if d.roofline.lower_precision}
    return TriageReport(base, new, threshold_pct, tuple(groups), matching.removed,
                        matching.added, side_notes(base, new, matching) + common_notes(groups),
                        {sig: d.classification for sig, d in own.items()},
                        reader(new).device_word, lower)


def judge(m: GroupMatch, base: Side, new: Side, threshold_pct: float) -> DurationChange:
    """A pair's verdict: a swap's from the call's time where it stood on each side, any other
    pair's from its groups' launches (or the sides' timing runs)."""
    if m.call_samples is not None:
        return call_change(*m.call_samples, threshold_pct)
    return group_change(m.base, m.new, base.timing_for(m.base.launches[0]),
                        new.timing_for(m.new.launches[0]), threshold_pct)


def timed(groups: Sequence[KernelGroup], side: Side) -> tuple[KernelGroup, ...]:
    """The groups whose collector measured no launch's duration (a CPU's) timed by the side's
    timing runs of their kernel, so that their time is the one measured, not 0."""
    out = []
    for g in groups:
        timing = side.timing_for(g.launches[0]) if not g.durations_us else None
        out.append(replace(g, timing_us=timing.median_us) if timing is not None else g)
    return tuple(out)


def reader(side: Side) -> Target:
    """The target that reads the side's profile: the one owning its collector."""
    return backends.for_collector(backends.collector_of(side.profile))


def costliest(groups: Sequence[KernelGroup], most: int = ONE_SIDE_EXPLAINED
              ) -> list[KernelGroup]:
    return sorted(groups, key=lambda g: -g.total_us)[:most]


def _full(side: Side, launches: Sequence[KernelProfile]) -> dict[int, KernelProfile]:
    return side.full(launches) if launches else {}


def one_side_diagnoses(groups: Sequence[KernelGroup], side: Side,
                       full: dict[int, KernelProfile], knowledge: Knowledge
                       ) -> dict[str, Diagnosis]:
    """What limits each kernel present on this side only (by its signature), from the launch
    nearest its median (its complete profile in `full`): a kernel that replaced another has no
    partner to compare with, but its own bottleneck says why it costs what it does."""
    return {g.signature: diagnose_in(side.profile, full[g.representative().index], knowledge)
            for g in groups}


def _with_evidence(g: GroupTriage, knowledge: Knowledge) -> GroupTriage:
    if g.detail is None:
        return g
    return replace(g, evidence=evidence_words(g.detail, g.top_cause, knowledge))


def _rank(g: GroupTriage) -> tuple[int, float, str]:
    """What moved the total first, most first: regressions, improvements and swaps by the time
    they added or saved; then those too noisy to decide and the unchanged, each by size."""
    if g.verdict in (REGRESSION, IMPROVEMENT) or g.match.swapped:
        return 0, -abs(g.delta_us), g.name
    return (1 if g.verdict == UNDECIDED else 2), -g.match.base_total_us, g.name


def explain_groups(pairs: Sequence[tuple[GroupMatch, DurationChange]],
                   reps: Sequence[tuple[KernelProfile, KernelProfile]],
                   full_b: dict[int, KernelProfile], full_n: dict[int, KernelProfile],
                   base: Side, new: Side, knowledge: Knowledge,
                   threshold_pct: float) -> dict[int, KernelTriage]:
    """The explanation of each pair (by the pair's id) under its verdict, on each group's
    launch nearest its median (`reps`), whose complete profiles are in `full_b` and `full_n`."""
    out = {}
    for (m, d), (b, n) in zip(pairs, reps, strict=True):
        detail = triage_kernel(KernelMatch(full_b[b.index], full_n[n.index], m.how), base, new,
                               knowledge, threshold_pct, d)
        out[id(m)] = replace(detail, diagnosis=swap_sentence(m) + detail.diagnosis) \
            if m.swapped else detail
    return out


def swap_sentence(m: GroupMatch) -> str:
    """What a swap is, before its diagnosis: the kernels of each side for the one call, and
    that the times compared are the call's."""
    def kernels(groups: Sequence[KernelGroup]) -> str:
        return " + ".join(g.name for g in groups)

    return (f"The library answered the same call with other kernels ({m.how}): BASE ran "
            f"{kernels(m.base_groups)}; NEW runs {kernels(m.new_groups)}. Times are the "
            "call's, all its kernels' launches at each place summed. ")


def select(side: Side, name: str | None) -> list[KernelProfile]:
    """The side's launches named `name` (exactly, or as part of the signature); all without a
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


def triage_kernel(match: KernelMatch, base: Side, new: Side, knowledge: Knowledge,
                  threshold_pct: float, change: DurationChange) -> KernelTriage:
    """The explanation of one matched kernel (one launch of each side) under verdict `change`."""
    db = diagnose_in(base.profile, match.base, knowledge)
    dn = diagnose_in(new.profile, match.new, knowledge)
    moves = evidence.movements(match.base, match.new, knowledge)
    rules = evidence.rule_changes(match.base, match.new, reader(new))
    causes, relations = rank_causes(db, dn, change.base_us, change.new_us, moves, rules, knowledge)
    config = evidence.config_changes(match.base, match.new)
    lines = evidence.line_shifts(match.base, match.new)
    text = write_diagnosis(match.new.name, change, db.classification, dn.classification, causes,
                           config, rules, threshold_pct)
    missing = evidence.coverage(match.base, match.new) + _timing_gaps(change)
    gaps = [g for g in dn.not_assessed if not g.inferred and g.cause != "source lines"]
    return KernelTriage(match, change, db.classification, dn.classification, causes,
                        metric_deltas(moves, causes, relations), config, rules, lines, text,
                        what_to_check(change.verdict, causes, lines, knowledge), missing,
                        tuple(g.cause for g in gaps),
                        tuple(dict.fromkeys(sec for g in gaps for sec in g.sections)),
                        db.roofline.lower_precision, dn.roofline.lower_precision)


def _timing_gaps(d: DurationChange) -> tuple[str, ...]:
    if d.basis != "ncu":
        return ()
    return (f"{d.note.split(':')[0]}: the verdict rests on ncu's durations against the "
            "threshold alone (more launches, or a timing.json, give a noise estimate)",)


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
    return tuple(notes)


def common_notes(groups: Sequence[GroupTriage]) -> tuple[str, ...]:
    """What applies to every kernel, said once: how the verdicts were reached when all rest
    on too few launches, and what every explained kernel could not compare."""
    notes = []
    basis = Counter(g.duration.basis for g in groups)
    if basis["ncu"]:
        few = "every kernel group" if basis["ncu"] == len(groups) else \
            f"{basis['ncu']} of {len(groups)} kernel groups"
        notes.append(f"{few}: too few launches for a confidence interval (one per side, or "
                     "fewer than 4): judged by ncu's durations against the threshold alone")
    explained = [g.detail for g in groups if g.detail is not None]
    shared = Counter(m for d in explained for m in set(d.missing))
    notes += [f"not compared, for every kernel explained: {m}" for m, n in sorted(shared.items())
              if n == len(explained) and len(explained) > 1 and "verdict rests" not in m]
    unexplained = [g for g in groups if unexplained_for_lack_of_metrics(g)]
    if unexplained:
        notes.append(f"{len(unexplained)} changed kernel group(s) cannot be explained from these "
                     "reports, which lack the metrics of their likely causes; collect them for "
                     f"those kernels alone: $ {collect_for(unexplained)}")
    return tuple(notes)


def unexplained_for_lack_of_metrics(triaged: GroupTriage) -> bool:
    """A changed group with no cause found where the NEW report lacks the metrics to look."""
    return (triaged.verdict in (REGRESSION, IMPROVEMENT) and triaged.detail is not None
            and triaged.top_cause is None and bool(triaged.detail.unassessed))


def collect_for(groups: Sequence[GroupTriage]) -> str:
    """The ncu command that profiles one launch of each of these kernels with the sections
    their explanation needs (kernels chosen by mangled name: template instantiations apart)."""
    sections = dict.fromkeys(("SpeedOfLight", "LaunchStats", "Occupancy"))
    for g in groups:
        assert g.detail is not None
        sections.update(dict.fromkeys(g.detail.collect_sections))
    names = sorted({g.match.new.signature for g in groups})
    parts = ["ncu", *(f"--section {s}" for s in sections), "--kernel-name-base mangled",
             f"-k regex:'^({'|'.join(re.escape(n) for n in names)})$'",
             f"--launch-count {len(names)}", "-o explain ./your_app"]
    return " ".join(parts)


def _no_common_kernel(base: Sequence[KernelGroup], new: Sequence[KernelGroup]) -> str:
    def names(gs: Sequence[KernelGroup]) -> str:
        return ", ".join(sorted({g.name for g in gs})[:8])

    return (f"no kernel in common: BASE has {names(base)}; NEW has {names(new)}. If the "
            "kernel was renamed, pair it with --kernel OLD=NEW or --match order")
