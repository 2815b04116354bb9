"""What a kernel's memory traffic is made of, for the detectors and the roofline: how close the
DRAM traffic runs to the practical copy ceiling, the unused parts of the sectors it fetches, the
local-memory (spill) traffic, and so the share of the DRAM bytes the work itself needs."""

from __future__ import annotations

from pragma_ncu.backends.cuda.diagnosis.signals import Signals

PRACTICAL_DRAM = 0.85  # a large copy reaches ~85-88% of ncu's DRAM peak (H200: 4.1-4.2 of 4.8 TB/s)


def dram_ceiling_fraction(sig: Signals, ceiling_gbps: float | None) -> float | None:
    """Achieved DRAM bandwidth as a fraction of the practical ceiling: the measured copy
    ceiling when known, else PRACTICAL_DRAM of ncu's peak."""
    dram_bytes, duration = sig.get("dram_bytes"), sig.get("duration_ns")
    if ceiling_gbps and dram_bytes and duration:
        return dram_bytes / duration / ceiling_gbps
    return sig.val("dram") / PRACTICAL_DRAM if sig.has("dram") else None


def useful_dram_share(sig: Signals) -> float:
    """The share of the DRAM traffic the kernel needs: not the unused parts of sectors, not
    local-memory (spill) traffic, where the report tells them (1.0 where it cannot)."""
    return (1 - dram_waste(sig)) * (1 - local_fraction(sig))


def dram_waste(s: Signals) -> float:
    """The fraction of DRAM bytes that are unused parts of sectors: the global waste that got
    past L1 (a sector reused from L1 is fetched from DRAM once)."""
    waste = global_waste(s)
    if waste is None:
        return 0.0
    return waste[0] * (1 - s.val("l1_hit_rate"))


def global_waste(sig: Signals) -> tuple[float, str, float] | None:
    """(fraction of fetched global sector bytes unused, metric, bytes used per sector) over
    loads and stores, weighted by their sectors (or instructions) where known."""
    parts = []
    for op in ("ld", "st"):
        used = sig.get(f"global_{op}_bytes_per_sector")
        if used is None:
            continue
        weight = sig.get(f"global_{op}_sectors")
        parts.append((1 - min(used, 32.0) / 32.0, weight, op, used))
    if not parts:
        return None
    if all(w is not None for _, w, _, _ in parts) and sum(w or 0 for _, w, _, _ in parts) > 0:
        total = sum(w or 0.0 for _, w, _, _ in parts)
        waste = sum(x * (w or 0.0) for x, w, _, _ in parts) / total
    else:
        waste = max(x for x, _, _, _ in parts)
    worst = max(parts, key=lambda p: p[0] * (p[1] or 1.0))
    return waste, sig.readings[f"global_{worst[2]}_bytes_per_sector"].metric, worst[3]


def global_waste_share(sig: Signals) -> float:
    found = global_waste(sig)
    return found[0] if found else 0.0


def local_fraction(sig: Signals) -> float:
    """Local-memory traffic as a share of local + global traffic at L1 (bytes, else
    instructions)."""
    local = sig.get("local_bytes")
    sectors = (sig.get("global_ld_sectors") or 0.0) + (sig.get("global_st_sectors") or 0.0)
    if local is not None and sectors > 0:
        return local / (local + 32.0 * sectors)
    if local is not None and sig.get("dram_bytes"):
        return local / (local + (sig.get("dram_bytes") or 0.0))
    li, gi = sig.get("local_instructions"), sig.get("global_instructions")
    if li is not None and gi is not None and li + gi > 0:
        return li / (li + gi)
    return 0.0
