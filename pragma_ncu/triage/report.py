"""What triage says: the two sides, the matched kernels, and for each matched kernel the duration
verdict, the causes ranked by evidence, the metric, rule and source-line changes behind them and a
written diagnosis. Every noun is frozen; `TriageReport.to_json` is the `--format json` output."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pragma_ncu.diagnose.findings import Evidence, LowerPrecision
from pragma_ncu.infra.errors import ExitStatus, InputError
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.profile.launches import Launches
from pragma_ncu.profile.profiles import KernelProfile, Profile
from pragma_ncu.triage.groups import KernelGroup
from pragma_ncu.triage.match import GroupMatch

REGRESSION, IMPROVEMENT, UNCHANGED = "regression", "improvement", "unchanged"
UNDECIDED = "undecided"  # the noise swamps the difference: too noisy to decide (exit 0)
VERDICTS = (REGRESSION, IMPROVEMENT, UNDECIDED, UNCHANGED)
ADDED, REMOVED = "added", "removed"
EXIT_OK, EXIT_REGRESSION, EXIT_INPUT = ExitStatus.OK, ExitStatus.VERDICT, ExitStatus.INPUT
TIMING_SCHEMA = 1


class TriageError(InputError):
    """The inputs cannot be compared (unreadable side, no common kernel, no duration, ...);
    the CLI exits 2 with this message."""


@dataclass(frozen=True)
class Timing:
    """Repeated timing runs of one kernel on one side; each run is a TimingStats over many
    launches (from a `timing.json` beside a profile, or from `bench` runs made now)."""

    kernel: str
    runs: tuple[TimingStats, ...]
    origin: str = ""  # where the runs came from: a file, or "measured now"

    @property
    def median_us(self) -> float:
        """The median of the runs' medians."""
        return statistics.median(r.median_us for r in self.runs)

    @property
    def noise_us(self) -> float:
        """The larger of the widest within-run IQR and the spread of the run medians: a
        conservative noise figure that covers both launch-to-launch and run-to-run drift."""
        medians = [r.median_us for r in self.runs]
        return max(max(r.iqr_us for r in self.runs), max(medians) - min(medians))

    def pooled(self) -> TimingStats:
        """One TimingStats for all runs, its IQR replaced by `noise_us` (for stats.beats)."""
        first = self.runs[0]
        return TimingStats(
            median_us=self.median_us, mean_us=statistics.fmean(r.mean_us for r in self.runs),
            min_us=min(r.min_us for r in self.runs), max_us=max(r.max_us for r in self.runs),
            p10_us=min(r.p10_us for r in self.runs), p90_us=max(r.p90_us for r in self.runs),
            iqr_us=self.noise_us, stdev_us=max(r.stdev_us for r in self.runs),
            reps=sum(r.reps for r in self.runs), mode=first.mode,
            launches_per_sample=first.launches_per_sample)

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "origin": self.origin, "median_us": self.median_us,
                "noise_us": self.noise_us, "runs": [asdict(r) for r in self.runs]}


def timing_from_json(data: dict[str, Any], origin: str = "") -> Timing:
    """Inverse of Timing.to_json (also reads the entries of a `timing.json` file)."""
    fields = TimingStats.__dataclass_fields__
    runs = tuple(TimingStats(**{k: v for k, v in r.items() if k in fields})
                 for r in data["runs"])
    if not runs:
        raise ValueError("a timing entry with no runs")
    return Timing(str(data["kernel"]), runs, origin or str(data.get("origin", "")))


@dataclass(frozen=True)
class Side:
    """One side of the comparison (BASE or NEW): its launches and, when known, repeated
    timings."""

    label: str  # as the user gave it
    kind: str  # "ncu-rep", "profile-json", "csv-folder", "kernel", "run"
    profile: Profile  # every launch; light (names, duration, launch) when read as `launches`
    timings: tuple[Timing, ...] = ()
    notes: tuple[str, ...] = ()
    launches: Launches | None = None  # the reader of full launch profiles, for light ones

    def full(self, kernels: Sequence[KernelProfile]) -> dict[int, KernelProfile]:
        """The complete profiles of these launches, by index (read now for a light side)."""
        if self.launches is None or self.launches.complete:
            return {k.index: k for k in kernels}
        return self.launches.full([k.index for k in kernels])

    def timing_for(self, kernel: KernelProfile) -> Timing | None:
        """The timing of `kernel`: by name, or the only timing of a one-kernel profile."""
        for t in self.timings:
            if t.kernel in (kernel.name, kernel.mangled):
                return t
        if len(self.timings) == 1 and len(self.profile.kernels) == 1:
            return self.timings[0]
        return None

    @property
    def device(self) -> str:
        for k in self.profile.kernels:
            name = k.metrics.get("device__attribute_display_name")
            if name is not None and isinstance(name.value, str) and name.value:
                return name.value
        return str(self.profile.collection.get("device") or "")

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind, "reader": self.profile.reader,
                "report": self.profile.report, "ncu_version": self.profile.ncu_version,
                "device": self.device, "launches": len(self.profile.kernels),
                "timings": [t.to_json() for t in self.timings], "notes": list(self.notes)}


@dataclass(frozen=True)
class KernelMatch:
    """A kernel of BASE paired with one of NEW, and what paired them."""

    base: KernelProfile
    new: KernelProfile
    how: str  # e.g. "mangled name", "name + launch", "position (--match order)"

    def to_json(self) -> dict[str, Any]:
        return {"how": self.how, **{side: {"index": k.index, "name": k.name, "mangled": k.mangled}
                                    for side, k in (("base", self.base), ("new", self.new))}}


@dataclass(frozen=True)
class DurationChange:
    """How the kernel's time changed, on what basis, and the verdict against the threshold."""

    base_us: float  # the values compared: timing medians, launch medians, or ncu's duration
    new_us: float
    delta_pct: float  # (new - base) / base; on "launches", the Hodges-Lehmann ratio - 1
    basis: str  # "timing" (timing.json runs on both sides), "launches" (the group's launches
    #             on each side as samples) or "ncu" (too few launches: threshold alone)
    verdict: str  # REGRESSION, IMPROVEMENT, UNCHANGED or UNDECIDED
    noise_pct: float | None = None  # the noise margin, % of base (timing basis only)
    beyond_noise: bool | None = None  # None without a noise estimate
    ncu_base_us: float | None = None  # ncu's median gpu__time_duration.sum, for reference
    ncu_new_us: float | None = None
    note: str = ""
    ci_low_pct: float | None = None  # the change's confidence interval ("launches" basis)
    ci_high_pct: float | None = None
    launches_base: int = 1  # the sample sizes
    launches_new: int = 1


@dataclass(frozen=True)
class Cause:
    """A bottleneck class as an explanation of the change. `rise` is the change of the time the
    cause accounts for (its diagnose score x the duration), as a share of the longer duration;
    `score` adds the support of the metrics and ncu rules related to it by the compendium."""

    bottleneck: str
    title: str
    score: float
    rise: float
    share_base: float  # the diagnose score (estimated share of time) on each side, 0 if absent
    share_new: float
    metric_support: float  # 0..1: how far the cause's related metrics moved
    rule_support: float  # -1..1: its ncu rules that appeared (+) or vanished (-)
    summary: str  # the finding's own explanation (NEW's, else BASE's)
    actions: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()  # the metric values that finding rests on
    on: str = "NEW"  # the side whose finding gave summary and evidence


@dataclass(frozen=True)
class MetricDelta:
    """A metric that moved, with the compendium entry that says what it means and the cause
    it supports. `relevance` ranks it: how far it moved x how strongly it relates to a cause
    that explains the change."""

    metric: str
    title: str
    unit: str
    base: float
    new: float
    change_pct: float | None  # None when base is 0
    relevance: float
    supports: str  # the bottleneck class it is most relevant to


@dataclass(frozen=True)
class ConfigChange:
    """A fact of the launch, the build or the machine that differs (block size, registers,
    shared memory, sectors per request, clocks, ...)."""

    label: str
    metric: str
    base: float
    new: float
    unit: str = ""


@dataclass(frozen=True)
class RuleChange:
    """An ncu rule result (OPT/WRN) present on one side only."""

    section: str
    rule: str
    change: str  # "appeared" or "vanished"
    kind: str
    title: str
    speedup: float | None  # ncu's estimated speedup on the side where it is present
    causes: tuple[str, ...] = ()  # the bottleneck classes the rule speaks to


@dataclass(frozen=True)
class LineShift:
    """A source line whose share of the sampled stalls moved."""

    location: str  # file:line (NEW's line when it has one)
    text: str
    base_share: float  # share of the hot lines' stall samples, 0..1
    new_share: float
    stall: str  # the line's top stall reason (NEW's when present)

    @property
    def shift(self) -> float:
        return self.new_share - self.base_share


@dataclass(frozen=True)
class KernelTriage:
    """Everything triage says about one matched kernel."""

    match: KernelMatch
    duration: DurationChange
    class_base: str  # diagnose's classification of each side
    class_new: str
    causes: tuple[Cause, ...]
    metrics: tuple[MetricDelta, ...]
    config: tuple[ConfigChange, ...]
    rules: tuple[RuleChange, ...]
    lines: tuple[LineShift, ...]
    diagnosis: str
    checks: tuple[str, ...]
    missing: tuple[str, ...] = ()  # what one side lacks (metrics, source counters, timing)
    unassessed: tuple[str, ...] = ()  # causes NEW's collection lacks the metrics to assess
    collect_sections: tuple[str, ...] = ()  # the ncu sections that would collect them
    # an FP32 GEMM-like kernel on SIMT pipes: the same math on tensor cores at a lower precision
    lower_base: tuple[LowerPrecision, ...] = ()
    lower_new: tuple[LowerPrecision, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return plain({"match": self.match.to_json(), "name": self.match.new.name,
                "duration": asdict(self.duration), "verdict": self.duration.verdict,
                "bottleneck": {"base": self.class_base, "new": self.class_new},
                "top_cause": self.causes[0].bottleneck if self.causes else None,
                "causes": [asdict(c) for c in self.causes],
                "metrics": [asdict(m) for m in self.metrics],
                "config": [asdict(c) for c in self.config],
                "rules": [asdict(r) for r in self.rules],
                "lines": [{**asdict(s), "shift": s.shift} for s in self.lines],
                "diagnosis": self.diagnosis, "checks": self.checks, "missing": self.missing,
                "lower_precision": {"base": [asdict(p) for p in self.lower_base],
                                    "new": [asdict(p) for p in self.lower_new]}})


def plain(value: Any) -> Any:
    """`value` with tuples turned into lists, recursively: what JSON gives back."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def group_json(group: KernelGroup) -> dict[str, Any]:
    """One side's kernel group as --format json shows it."""
    return {"name": group.name, "signature": group.signature, "launch": group.config.label(),
            "launches": group.count, "total_us": group.total_us, "median_us": group.median_us,
            "first_launch": group.first_index}


@dataclass(frozen=True)
class GroupTriage:
    """One kernel group of the application: its verdict from the launches of both sides, and
    for a changed group (or one asked for by name) the explanation, read on a representative
    launch of each side."""

    match: GroupMatch
    duration: DurationChange
    detail: KernelTriage | None = None
    evidence: str = ""  # the top cause's evidence in a few words

    @property
    def name(self) -> str:
        return self.match.new.name

    @property
    def verdict(self) -> str:
        return self.duration.verdict

    @property
    def delta_us(self) -> float:
        """Device time the application gained (+) or saved (-) in this group."""
        return self.match.new_total_us - self.match.base_total_us

    @property
    def top_cause(self) -> Cause | None:
        """The cause that explains the change: for a regression (or an unchanged group) the
        best-ranked one, for an improvement the one whose share of the time fell most."""
        causes = self.detail.causes if self.detail else ()
        if self.verdict == IMPROVEMENT:
            relief = min(causes, key=lambda c: (c.rise, c.bottleneck), default=None)
            return relief if relief is not None and relief.rise < 0 else None
        return causes[0] if causes and causes[0].score > 0 else None

    def to_json(self, total_delta_us: float, base_total_us: float) -> dict[str, Any]:
        detail = self.detail.to_json() if self.detail else {}
        top = self.top_cause
        return plain({**{k: v for k, v in detail.items() if k != "match"},
                      "name": self.name, "how": self.match.how, "verdict": self.verdict,
                      "swapped": self.match.swapped,
                      "base": group_json(self.match.base), "new": group_json(self.match.new),
                      **({"swap": {"base": [group_json(g) for g in self.match.base_groups],
                                   "new": [group_json(g) for g in self.match.new_groups],
                                   "base_us": self.match.base_total_us,
                                   "new_us": self.match.new_total_us}}
                         if self.match.swapped else {}),
                      "delta_us": self.delta_us,
                      "share_of_change": self.delta_us / total_delta_us if total_delta_us
                      else None,
                      "pct_of_app": 100 * self.delta_us / base_total_us if base_total_us
                      else None,
                      "duration": asdict(self.duration),
                      "top_cause": top.bottleneck if top else None, "evidence": self.evidence,
                      "representative": detail.get("match")})


SWAPPED = "swapped"


@dataclass(frozen=True)
class Change:
    """One row of the ranking of what moved the application's GPU time: a paired group that
    regressed or improved, a swap (whatever its verdict), or a group on one side only."""

    kind: str  # REGRESSION, IMPROVEMENT, SWAPPED, ADDED or REMOVED
    delta_us: float  # device time it added (+) or saved (-)
    paired: GroupTriage | None = None
    one_side: KernelGroup | None = None  # an added or removed group

    @property
    def name(self) -> str:
        if self.paired is not None:
            return self.paired.name
        assert self.one_side is not None
        return self.one_side.name


@dataclass(frozen=True)
class TriageReport:
    """The comparison of two sides, kernel group by kernel group; `kernels` are the matched
    groups: first those that moved the total (regressions, improvements, swaps) by the time
    they added or saved, largest first, then those too noisy to decide, then the unchanged
    (largest first). `changes()` ranks them with the groups on one side only. `exit_code` is
    what the CLI exits with: a group too noisy to decide never fails the gate."""

    base: Side
    new: Side
    threshold_pct: float
    kernels: tuple[GroupTriage, ...]
    removed: tuple[KernelGroup, ...] = ()  # groups of BASE without a partner on NEW
    added: tuple[KernelGroup, ...] = ()
    notes: tuple[str, ...] = ()
    one_side_causes: dict[str, str] = field(default_factory=dict)  # signature -> top cause
    device_word: str = "GPU"  # how the sides' target names its device ("GPU", "CPU")
    # signature -> the lower-precision ceiling of an FP32 GEMM-like kernel on SIMT pipes, for
    # the kernels on one side only (an explained pair's are its detail's lower_base, lower_new)
    lower_precision: dict[str, tuple[LowerPrecision, ...]] = field(default_factory=dict)

    def count(self, verdict: str, swaps: bool = True) -> int:
        """Paired groups with this verdict (`swaps=False`: swaps left out)."""
        return sum(1 for k in self.kernels if k.verdict == verdict and
                   (swaps or not k.match.swapped))

    def changed(self, verdict: str) -> tuple[GroupTriage, ...]:
        return tuple(k for k in self.kernels if k.verdict == verdict)

    @property
    def swaps(self) -> tuple[GroupTriage, ...]:
        return tuple(k for k in self.kernels if k.match.swapped)

    def changes(self) -> tuple[Change, ...]:
        """Everything that moved the application's GPU time, in one ranking, most time first:
        the paired groups that regressed or improved beyond the noise and the threshold, the
        swaps, and the groups on one side only. Those too noisy to decide and the unchanged
        are not in it."""
        rows = [Change(SWAPPED if k.match.swapped else k.verdict, k.delta_us, paired=k)
                for k in self.kernels if k.match.swapped or k.verdict in (REGRESSION,
                                                                          IMPROVEMENT)]
        rows += [Change(ADDED, g.total_us, one_side=g) for g in self.added]
        rows += [Change(REMOVED, -g.total_us, one_side=g) for g in self.removed]
        return tuple(sorted(rows, key=lambda c: (-abs(c.delta_us), c.name)))

    @property
    def removed_us(self) -> float:
        """Device time of the kernels on BASE only."""
        return sum(g.total_us for g in self.removed)

    @property
    def added_us(self) -> float:
        """Device time of the kernels on NEW only."""
        return sum(g.total_us for g in self.added)

    @property
    def base_total_us(self) -> float:
        """Device time of every launch of BASE (matched and removed groups)."""
        return sum(k.match.base_total_us for k in self.kernels) + self.removed_us

    @property
    def new_total_us(self) -> float:
        return sum(k.match.new_total_us for k in self.kernels) + self.added_us

    @property
    def launch_counts(self) -> tuple[int, int]:
        return (sum(k.match.base_count for k in self.kernels) + sum(g.count for g in
                                                                     self.removed),
                sum(k.match.new_count for k in self.kernels) + sum(g.count for g in self.added))

    @property
    def one_side_net_us(self) -> float:
        """Device time of the kernels on NEW only, less that of the kernels on BASE only."""
        return self.added_us - self.removed_us

    @property
    def one_side_regressed(self) -> bool:
        """The kernels on one side only cost NEW more than the threshold of BASE's whole GPU
        time. A kernel replaced by another (a different GEMM, a cast added, another softmax)
        pairs with nothing, so no group can show what it lost: the application's time can."""
        tb = self.base_total_us
        return tb > 0 and 100 * self.one_side_net_us / tb > self.threshold_pct

    @property
    def regressed(self) -> bool:
        return self.count(REGRESSION) > 0 or self.one_side_regressed

    @property
    def exit_code(self) -> int:
        return EXIT_REGRESSION if self.regressed else EXIT_OK

    def _one_side_json(self, g: KernelGroup) -> dict[str, Any]:
        return {**group_json(g), "top_cause": self.one_side_causes.get(g.signature),
                "lower_precision": [asdict(p) for p in self.lower_precision.get(g.signature, ())]}

    def to_json(self) -> dict[str, Any]:
        tb, tn = self.base_total_us, self.new_total_us
        nb, nn = self.launch_counts
        return {"verdict": REGRESSION if self.regressed else "ok", "exit_code": self.exit_code,
                "threshold_pct": self.threshold_pct, "base": self.base.to_json(),
                "new": self.new.to_json(),
                "totals": {"base_us": tb, "new_us": tn, "delta_us": tn - tb,
                           "delta_pct": 100 * (tn - tb) / tb if tb else None,
                           "launches_base": nb, "launches_new": nn},
                "device_word": self.device_word,
                "summary": {**{v: self.count(v) for v in VERDICTS}, SWAPPED: len(self.swaps),
                            ADDED: len(self.added), REMOVED: len(self.removed)},
                "changes": [{"kind": c.kind, "name": c.name, "delta_us": c.delta_us,
                             "pct_of_base": 100 * c.delta_us / tb if tb else None,
                             "verdict": c.paired.verdict if c.paired else c.kind}
                            for c in self.changes()],
                "one_side": {"added_us": self.added_us, "removed_us": self.removed_us,
                             "net_us": self.one_side_net_us,
                             "net_pct_of_base": 100 * self.one_side_net_us / tb if tb else None,
                             "regressed": self.one_side_regressed},
                "kernels": [k.to_json(tn - tb, tb) for k in self.kernels],
                ADDED: [self._one_side_json(g) for g in self.added],
                REMOVED: [self._one_side_json(g) for g in self.removed],
                "notes": list(self.notes)}
