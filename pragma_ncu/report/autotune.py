"""Tables for a parameter search: the winners, the re-test, where the points went."""

from __future__ import annotations

from tabulate import tabulate

from pragma_ncu.measure.roofline import MEMORY, shape_fraction
from pragma_ncu.search.results import Retest, SearchResult, Verdict
from pragma_ncu.search.space import point_key


def _pct_roofline(r: Retest, shape: str, result: SearchResult) -> str:
    """% of the attainable roofline at one shape: a same-size copy's time, or the FLOPs at the
    compute ceiling when the spec counts them, over the measured time."""
    at = r.at(shape)
    if at is None:
        return ""
    frac, binding = shape_fraction(at.median_us, at.copy_us, at.flops, result.compute)
    if frac is None:
        return ""
    return f"{100 * frac:.1f}" + (f" ({binding})" if binding != MEMORY else "")


def winners_table(result: SearchResult) -> str:
    """One row per shape and one for the general configuration."""
    rows = []
    for shape, v in result.per_shape:
        rows.append(_row(shape, v, shape, result))
    rows.append(_row("general (geo-mean)", result.general, None, result))
    headers = ["shape", "best configuration", "µs", "± noise %", "% roofline", "incumbent µs",
               "speedup", "decision"]
    return tabulate(rows, headers=headers, floatfmt=".2f")


def _row(label: str, v: Verdict, shape: str | None, result: SearchResult) -> list[object]:
    w, i = v.winner, v.incumbent
    if w is None:
        return [label, "-", None, None, "", None, None, v.reason]
    t, noise = _time_and_noise(w, shape)
    it = _time_and_noise(i, shape)[0] if i is not None and i.status == "ok" else None
    decision = ("new best" if v.accepted else
                "undecided: too noisy, keep incumbent" if v.undecided else "keep incumbent")
    pct = _pct_roofline(w, shape, result) if shape is not None else ""
    return [label, point_key(w.point), t, noise, pct, it, v.speedup, decision]


def undecided_lines(result: SearchResult) -> list[str]:
    """The verdicts the re-test could not decide, with their figures: the incumbent was kept
    for want of evidence, not because it was faster."""
    verdicts = [*result.per_shape, ("general (geo-mean)", result.general)]
    return [f"{label}: {v.reason}" for label, v in verdicts if v.undecided]


def _time_and_noise(r: Retest, shape: str | None) -> tuple[float | None, float | None]:
    """At one shape, or the geometric mean with the noisiest shape's noise."""
    if shape is None:
        return r.objective, max((s.noise_pct for s in r.shapes), default=None)
    at = r.at(shape)
    return (at.median_us, at.noise_pct) if at is not None else (None, None)


def retest_table(result: SearchResult) -> str:
    rows = []
    for r in sorted(result.retests, key=lambda r: r.objective or float("inf")):
        times = [f"{s.median_us:.2f}" for s in r.shapes]
        rows.append([point_key(r.point) + (" (incumbent)" if r.is_incumbent else ""),
                     r.status, r.objective, " / ".join(times) or r.message[:60]])
    return tabulate(rows, headers=["candidate", "status", "geo-mean µs",
                                   " / ".join(result.shapes) + " µs"], floatfmt=".2f")


def workers_lines(result: SearchResult) -> list[str]:
    """With many workers: the overall rate, each worker's share, and where the re-test ran."""
    if not result.workers:
        return []
    rate = result.points_per_s
    shares = ", ".join(
        f"{w.label} {w.evaluated} ({w.points_per_s:.2f}/s"
        + (f", {w.deaths} worker(s) died" if w.deaths else "")
        + (f", dropped: {w.dropped}" if w.dropped else "") + ")" for w in result.workers)
    where = result.retest_device
    lines = [f"{len(result.workers)} workers, {rate:.2f} points/s overall: {shares}"
             if rate is not None else f"{len(result.workers)} workers: {shares}"]
    if where is not None:
        lines.append(f"re-tested on {where.label} ({where.name}"
                     + (f" on {where.host}" if where.host else "") + ") alone")
    if result.calibration is not None:
        lines.append(result.calibration.summary())
    return lines


def shapes_table(results: list[SearchResult]) -> str:
    """Shapes tuned each on its own: one row per shape, with the worker that tuned it."""
    rows = []
    for r in results:
        shape = r.shapes[0]
        v = dict(r.per_shape)[shape]
        row = _row(shape, v, shape, r)
        where = r.retest_device.label if r.retest_device else ""
        rows.append([*row[:2], row[2], row[5], row[6], row[7], where,
                     f"{r.stats.evaluated} in {r.stats.wall_s:.0f} s"])
    return tabulate(rows, headers=["shape", "best configuration", "µs", "incumbent µs",
                                   "speedup", "decision", "worker", "evaluated"],
                    floatfmt=".2f")


def stats_lines(result: SearchResult) -> list[str]:
    s = result.stats
    pruned = ", ".join(f"{k} {v}" for k, v in sorted(s.pruned.items())) or "none"
    failed = ", ".join(f"{k} {v}" for k, v in sorted(s.failed.items())) or "none"
    reach = (f"{s.time_to_within_2pct_s:.1f} s" if s.time_to_within_2pct_s is not None
             else "n/a")
    return [
        f"space {s.space_size} points; strategy {result.strategy} (seed {result.seed}); "
        f"evaluated {s.evaluated}, verified at every shape {s.verified}",
        f"pruned by the hardware limits and restrictions: {pruned}; failed: {failed}",
        f"wall {s.wall_s:.1f} s (search {s.search_s:.1f} s, re-test {s.retest_s:.1f} s); "
        f"compile {s.compile_s:.1f} s summed over parallel jobs, {s.cache_hits} cached; "
        f"GPU {s.gpu_s:.1f} s; within 2% of the best after {reach}",
        *cache_lines(result),
        *workers_lines(result),
    ]


def cache_lines(result: SearchResult) -> list[str]:
    """What the run took from the measurement cache (none without it)."""
    use = result.cache
    if use is None:
        return []
    return [f"measurement cache {use.path}: {use.reused} measurements reused, {use.measured} "
            "measured now (--no-cache measures every point afresh)"]
