"""Headroom bounds a memory-side loss (diagnose/causality.py): a compute-bound kernel near its
FMA ceiling with a little scattered traffic is compute-bound first. Recorded on an NVIDIA H200
(driver 580.159.04, ncu 2025.3.1, 2026-11-24): the two best rounds of `tune --target 0.8` on
examples/roofline/poly_eval.cu (tests/fixtures/roofline/)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pragma_ncu.backends import diagnose_in
from pragma_ncu.diagnose.causality import MEMORY_LOSSES, rank
from pragma_ncu.diagnose.findings import Finding
from pragma_ncu.profile.profiles import profile_from_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "roofline"


@pytest.mark.parametrize("rnd, fma_busy", [(1, 0.75), (2, 0.88)])
def test_a_kernel_at_its_fma_ceiling_is_compute_bound_before_its_scattered_stores(
        knowledge, rnd, fma_busy):
    profile = profile_from_json(json.loads(gzip.decompress(
        (FIXTURES / f"poly_eval-round{rnd}.profile.json.gz").read_bytes())))
    (k,) = profile.kernels
    d = diagnose_in(profile, k, knowledge)
    assert d.classification == "compute_fma"
    scattered = next(f for f in d.findings if f.bottleneck == "uncoalesced_access")
    # 16 consecutive elements per thread: 4 of 32 bytes used per sector, but the FMA pipe
    # keeps the SMs busy, so removing the waste saves at most what the pipe leaves free.
    assert scattered.score <= 1 - fma_busy + 0.01
    assert [f.bottleneck for f in d.findings].index("compute_fma") == 0


def _f(name: str, score: float) -> Finding:
    return Finding(name, name, score, name + ".", ())


def test_a_memory_loss_is_capped_by_the_busiest_pipe_and_only_then():
    ranked = rank([_f("uncoalesced_access", 0.5), _f("compute_fma", 0.6)],
                  {"compute_fma": 0.9, "l2_bandwidth": 0.3})
    assert [f.bottleneck for f in ranked] == ["compute_fma", "uncoalesced_access"]
    assert ranked[1].score == pytest.approx(0.1) and "At most 10%" in ranked[1].summary
    # The same loss beside an idle pipe keeps its share and ranks first.
    ranked = rank([_f("uncoalesced_access", 0.5), _f("compute_fma", 0.3)], {"compute_fma": 0.3})
    assert ranked[0].bottleneck == "uncoalesced_access" and ranked[0].score == 0.5
    # Limits and non-memory losses are never capped by it.
    ranked = rank([_f("small_grid", 0.5), _f("compute_fma", 0.6)], {"compute_fma": 0.9})
    assert {f.bottleneck: f.score for f in ranked}["small_grid"] == 0.5
    assert "small_grid" not in MEMORY_LOSSES


def test_a_limit_at_its_ceiling_yields_to_a_loss_worth_fixing_but_not_to_small_findings():
    ranked = rank([_f("small_grid", 0.3), _f("memory_bandwidth", 0.7),
                   _f("occupancy_registers", 0.05)], {"memory_bandwidth": 0.9})
    assert [f.bottleneck for f in ranked] == ["small_grid", "memory_bandwidth",
                                              "occupancy_registers"]
