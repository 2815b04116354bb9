"""Triage on reports users make themselves: the five planted regression pairs recorded on an
H200 as applications under ncu's default set and under `--set full` (CSV pages), not by our
own collection. The strided pair must name the access pattern under the default set (which has
no sector counts) and uncoalesced access first under the full set."""

from __future__ import annotations

import pytest

from pragma_ncu.infra.settings import load_settings
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.triage.engine import triage
from pragma_ncu.triage.load import read_side
from tests.corpus_eval import FIXTURES

PAIRS = FIXTURES / "pairs"


@pytest.fixture(scope="module")
def reports():
    settings, knowledge = load_settings(), Compendium.load()
    out = {}
    for coll in ("default", "full"):
        base = read_side(str(PAIRS / coll / "base"), "BASE", settings)
        new = read_side(str(PAIRS / coll / "new"), "NEW", settings)
        out[coll] = {k.name: k.detail for k in triage(base, new, knowledge).kernels}
    return out


def test_the_default_set_names_the_access_pattern_of_a_strided_regression(reports):
    strided = reports["default"]["scale_2d"]
    assert strided.duration.verdict == "regression"
    assert strided.causes[0].bottleneck == "uncoalesced_access"
    assert "wavefronts per request" in strided.causes[0].summary
    assert strided.class_new != "none"


@pytest.mark.parametrize(("kernel", "cause"), [
    ("scale_2d", "uncoalesced_access"), ("scale_fp16", "memory_latency"),
    ("pair_swap", "occupancy_shared"), ("fma_chains", "register_spills"),
    ("chains", "warp_divergence"),
])
def test_the_full_set_names_each_planted_cause_first(reports, kernel, cause):
    found = reports["full"][kernel]
    assert found.duration.verdict == "regression"
    assert found.causes[0].bottleneck == cause


@pytest.mark.parametrize(("kernel", "cause"), [
    ("pair_swap", "occupancy_shared"), ("scale_fp16", "latency_bound"),
])
def test_the_default_set_names_what_it_can_see(reports, kernel, cause):
    """Occupancy is in the default set; the latency of scalar loads shows as latency-bound
    (the default set has no stall reasons to call it memory latency)."""
    assert reports["default"][kernel].causes[0].bottleneck == cause
