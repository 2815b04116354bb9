"""Issue 4, acceptance 3 on the conductor's side: every profiler metric a decision states is
cited with its compendium entry, for decisions taken over every recorded H200 profile."""

from __future__ import annotations

import pytest

from pragma_ncu.backends.cuda.diagnosis import diagnose
from pragma_ncu.conductor.analysis import DELTAS, is_metric
from pragma_ncu.conductor.rules import decide
from pragma_ncu.conductor.situation import Policy, Situation
from pragma_ncu.conductor.state import KEY_METRICS, with_profile
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.measure.records import KernelState
from tests.fakes.tune import FIXTURES, load_profile

PROFILES = sorted(p.name for p in (FIXTURES / "profiles").iterdir()
                  if (p / "profile.json.gz").is_file())


@pytest.fixture(scope="module")
def compendium() -> Compendium:
    return Compendium.load()


def test_every_metric_the_conductor_can_show_has_an_entry(compendium: Compendium) -> None:
    missing = [m for m in (*KEY_METRICS, *DELTAS) if compendium.lookup(m) is None]
    assert missing == []


def _state(round_: int, objective: float, fraction: float) -> KernelState:
    return KernelState(round_, "v", "k", "h", {"BLOCK": 256}, {"s": objective}, {"s": 0.5},
                       objective, True, ceiling_fraction=fraction)


@pytest.mark.parametrize("name", PROFILES)
def test_a_decision_cites_every_metric_it_states(name: str, compendium: Compendium) -> None:
    kernel = load_profile(name)
    d = diagnose(kernel, compendium, None)
    best = with_profile(_state(1, 80.0, 0.6), kernel, d)
    before = with_profile(_state(0, 100.0, 0.5), kernel, d)
    before = KernelState(**{**before.__dict__, "metrics": {
        k: v * 1.25 for k, v in before.metrics.items()}})  # so every delta is stated
    s = Situation(1, best, before, best, True, "25% faster, beyond the 1% noise", 1.25, d, ())
    decision = decide(s, Policy(), compendium)
    stated = {m for b in decision.analysis for m in b.values if is_metric(m)}
    cited = {c.metric for c in decision.citations}
    assert stated, "a decision over a profile states metric values"
    assert stated <= cited, f"uncited: {sorted(stated - cited)}"
    for b in decision.analysis:
        assert {compendium.lookup(m).name for m in b.values if is_metric(m)} <= set(b.cites)


def test_without_the_compendium_only_the_diagnosis_citations_remain(
        compendium: Compendium) -> None:
    kernel = load_profile("silu_and_mul")
    d = diagnose(kernel, compendium, None)
    best = with_profile(_state(1, 80.0, 0.6), kernel, d)
    before = KernelState(**{**best.__dict__, "metrics": {
        k: v * 1.25 for k, v in best.metrics.items()}})
    s = Situation(1, best, before, best, False, "within noise", 1.0, d, ())
    with_c = decide(s, Policy(), compendium)
    without = decide(s, Policy())
    assert len(with_c.citations) > len(without.citations)
