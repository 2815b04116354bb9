"""`explain` on CPU profiles: top-down categories from perf, the cycle-cost model on cachegrind's
simulated counts, citations from the shipped compendium, and GPU profiles left to the GPU path."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pragma_ncu.backends import diagnose_in
from pragma_ncu.backends.cpu import diagnosis as cpu
from pragma_ncu.backends.cpu.collect.cachegrind import parse
from pragma_ncu.backends.cpu.diagnosis import diagnose_cpu as diagnose
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.profile.profiles import KernelProfile, Metric, SourceLine, profile_from_json

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CG_UNITS = {"Ir": "inst", "I1mr": "miss", "ILmr": "miss", "Dr": "access", "Dw": "access",
            "D1mr": "miss", "D1mw": "miss", "DLmr": "miss", "DLmw": "miss", "Bc": "branch",
            "Bi": "branch", "Bcm": "mispredict", "Bim": "mispredict"}


@pytest.fixture(scope="module")
def comp() -> Compendium:
    return Compendium.load()


def kernel(metrics: dict[str, tuple[float, str]], hotspots: tuple[SourceLine, ...] = ()
           ) -> KernelProfile:
    return KernelProfile("saxpy", "saxpy", 0,
                         {n: Metric(n, v, u) for n, (v, u) in metrics.items()}, hotspots=hotspots)


def perf(**tma: float) -> KernelProfile:
    """A perf profile: hardware events per call plus the given top-down percentages."""
    metrics = {"cycles": (1e6, "cycle"), "instructions": (2e6, "inst"), "IPC": (2.0, "inst/cycle"),
               "branches": (2e5, "branch"), "branch-misses": (1e3, "miss"),
               "task-clock": (0.5, "msec")}
    metrics.update({f"tma_{name}": (value, "%") for name, value in tma.items()})
    return kernel(metrics)


def cachegrind(ir: float = 1e6, d1mr: float = 1e4, d1mw: float = 0.0, dlmr: float = 0.0,
               dlmw: float = 0.0, i1mr: float = 10.0, ilmr: float = 0.0, bcm: float = 100.0,
               bim: float = 0.0) -> KernelProfile:
    """A cachegrind profile with the derived rates the CPU normalizer adds."""
    counts = {"Ir": ir, "I1mr": i1mr, "ILmr": ilmr, "Dr": ir / 3, "Dw": ir / 10, "D1mr": d1mr,
              "D1mw": d1mw, "DLmr": dlmr, "DLmw": dlmw, "Bc": ir / 8, "Bi": ir / 1000,
              "Bcm": bcm, "Bim": bim}
    data = counts["Dr"] + counts["Dw"]
    rates = {"D1_miss_rate": ((d1mr + d1mw) / data, "ratio"),
             "LL_data_miss_rate": ((dlmr + dlmw) / data, "ratio"),
             "branch_mispredict_rate": ((bcm + bim) / (counts["Bc"] + counts["Bi"]), "ratio"),
             "D1_MPKI": (1000 * (d1mr + d1mw) / ir, "miss/kinst"),
             "LL_MPKI": (1000 * (dlmr + dlmw) / ir, "miss/kinst")}
    return kernel({**{n: (v, CG_UNITS[n]) for n, v in counts.items()}, **rates})


def values(d: Diagnosis, finding: int = 0) -> dict[str, float | str]:
    return {e.metric: e.value for e in d.findings[finding].evidence}


def assert_cited(d: Diagnosis) -> None:
    assert d.uncited == ()
    cited = {c.metric for c in d.citations}
    assert {e.metric for f in d.findings for e in f.evidence} <= cited
    assert all(c.source.startswith("https://") for c in d.citations)


# --- recognising a CPU profile -------------------------------------------------------------


def test_cpu_profiles_are_recognised_by_their_metric_names() -> None:
    assert cpu.is_cpu(perf(retiring=50))
    assert cpu.is_cpu(cachegrind())
    assert cpu.is_cpu(kernel({"task-clock": (1.0, "msec")}))
    assert not cpu.is_cpu(kernel({}))
    assert not cpu.is_cpu(kernel({"gpu__time_duration.sum": (1e3, "ns"), "cycles": (1.0, "")}))


def test_a_recorded_ncu_profile_stays_on_the_gpu_path(comp: Compendium) -> None:
    path = FIXTURES / "profiles" / "bank_conflicts" / "profile.json.gz"
    profile = profile_from_json(json.loads(gzip.decompress(path.read_bytes())))
    for k in profile.kernels:
        assert not cpu.is_cpu(k)
        d = diagnose_in(profile, k, comp)
        assert d.classification not in ("frontend_bound", "backend_memory", "backend_core",
                                        "bad_speculation", "retiring")
        assert d.roofline.duration_ns and d.roofline.duration_ns > 0


# --- top-down (perf) -----------------------------------------------------------------------


@pytest.mark.parametrize(("tma", "bottleneck", "words"), [
    ({"retiring": 70, "bad_speculation": 5, "frontend_bound": 5, "backend_bound": 20},
     "retiring", "Retiring (70% of slots)"),
    ({"retiring": 30, "bad_speculation": 45, "frontend_bound": 5, "backend_bound": 20},
     "bad_speculation", "Bad speculation (45% of slots)"),
    ({"retiring": 30, "bad_speculation": 5, "frontend_bound": 40, "backend_bound": 25},
     "frontend_bound", "Front-end bound (40% of slots)"),
])
def test_level1_names_the_dominant_category(comp: Compendium, tma: dict[str, float],
                                            bottleneck: str, words: str) -> None:
    d = diagnose(perf(**tma), comp)
    assert d.classification == bottleneck
    top = d.findings[0]
    assert words in top.title
    assert top.score == pytest.approx(max(tma.values()) / 100)
    assert values(d)[f"tma_{top.bottleneck}"] == max(tma.values())
    assert [f.score for f in d.findings] == sorted((f.score for f in d.findings), reverse=True)
    assert top.actions and d.guidance == ()
    assert d.roofline.duration_ns == pytest.approx(0.5e6)
    assert_cited(d)


def test_bad_speculation_shows_the_branch_miss_rate(comp: Compendium) -> None:
    d = diagnose(perf(retiring=30, bad_speculation=45, frontend_bound=5, backend_bound=20,
                      branch_mispredicts=40, machine_clears=5), comp)
    top = d.findings[0]
    assert "mostly branch mispredicts (40% of slots)" in top.title
    notes = {e.metric: e.note for e in top.evidence}
    assert notes["branch-misses"] == "0.50% of branches"
    assert values(d)["tma_branch_mispredicts"] == 40
    assert_cited(d)


@pytest.mark.parametrize(("memory", "core", "bottleneck", "side"), [
    (41, 14, "backend_memory", "memory"),
    (10, 45, "backend_core", "core"),
])
def test_level2_splits_back_end_into_memory_or_core(comp: Compendium, memory: float, core: float,
                                                    bottleneck: str, side: str) -> None:
    d = diagnose(perf(retiring=30, bad_speculation=5, frontend_bound=10, backend_bound=55,
                      memory_bound=memory, core_bound=core), comp)
    top = d.findings[0]
    assert d.classification == bottleneck
    assert top.title == f"Back-end bound: {side} (55% of slots)"
    assert "level-2 split" in top.summary
    assert values(d)["tma_memory_bound"] == memory and values(d)["tma_core_bound"] == core
    assert_cited(d)


def test_one_level2_part_is_enough_to_split(comp: Compendium) -> None:
    d = diagnose(perf(retiring=30, backend_bound=60, memory_bound=15), comp)
    assert d.classification == "backend_core"  # core = 60 - 15 = 45


def test_without_level2_cache_misses_decide_memory(comp: Compendium) -> None:
    k = perf(retiring=30, bad_speculation=5, frontend_bound=5, backend_bound=60)
    k.metrics.update({"LLC-load-misses": Metric("LLC-load-misses", 1e4, "miss"),
                      "L1-dcache-loads": Metric("L1-dcache-loads", 8e5, "access"),
                      "L1-dcache-load-misses": Metric("L1-dcache-load-misses", 8e4, "miss")})
    d = diagnose(k, comp)
    top = d.findings[0]
    assert d.classification == "backend_memory"
    assert top.title == "Back-end bound: memory (60% of slots)"
    assert "5.00 last-level misses per 1000 instructions" in top.summary
    notes = {e.metric: e.note for e in top.evidence}
    assert notes["L1-dcache-load-misses"] == "10.0% of L1-dcache-loads"
    assert notes["LLC-load-misses"] == "5.00 per 1000 instructions"
    assert_cited(d)


def test_without_level2_few_misses_mean_core(comp: Compendium) -> None:
    k = perf(retiring=30, backend_bound=60)
    k.metrics.update({"LLC-load-misses": Metric("LLC-load-misses", 100.0, "miss"),
                      "L1-dcache-loads": Metric("L1-dcache-loads", 8e5, "access"),
                      "L1-dcache-load-misses": Metric("L1-dcache-load-misses", 800.0, "miss")})
    d = diagnose(k, comp)
    assert d.classification == "backend_core"
    assert "core bound, since cache misses are few" in d.findings[0].summary


def test_without_level2_or_misses_memory_is_an_assumption(comp: Compendium) -> None:
    d = diagnose(perf(retiring=30, backend_bound=60), comp)
    assert d.classification == "backend_memory"
    assert "taken to be memory bound" in d.findings[0].summary


# --- the cost model (cachegrind) ------------------------------------------------------------


def test_last_level_misses_dominate(comp: Compendium) -> None:
    # retiring 250 k, L1->LL 12 x (20 k - 2 k) = 216 k, DRAM 200 x 2 k = 400 k (~46%)
    d = diagnose(cachegrind(ir=1e6, d1mr=2e4, dlmr=2e3), comp)
    top = d.findings[0]
    assert d.classification == "backend_memory"
    assert top.title.startswith("Data-cache misses, mostly last-level data misses (DRAM)")
    assert "dominate (~71% of estimated cycles)" in top.title
    assert "DLmr+DLmw = 2 k per call x 200 cycles" in top.summary
    assert "simulated by cachegrind" in top.summary and "model" in top.summary
    notes = {e.metric: e.note for e in top.evidence}
    assert notes["DLmr"] == "weight 200 cycles/miss (model)"
    assert values(d)["LL_MPKI"] == pytest.approx(2.0)
    assert top.score == pytest.approx((400e3 + 216e3) / (250e3 + 216e3 + 400e3 + 120 + 1500),
                                      abs=1e-4)
    assert_cited(d)


def test_l1_misses_served_by_the_last_level_are_named_apart(comp: Compendium) -> None:
    d = diagnose(cachegrind(ir=1e6, d1mr=1e5, dlmr=0.0), comp)
    top = d.findings[0]
    assert top.title.startswith("L1 data misses that hit the last-level cache dominate")
    assert "D1mr+D1mw-DLmr-DLmw = 100 k per call x 12 cycles" in top.summary


def test_mispredicts_dominate(comp: Compendium) -> None:
    d = diagnose(cachegrind(ir=1e6, d1mr=1e3, bcm=5e4), comp)
    top = d.findings[0]
    assert d.classification == "bad_speculation"
    assert top.title.startswith("Branch mispredicts dominate")
    assert "Bcm+Bim = 50 k per call x 15 cycles" in top.summary
    assert values(d)["Bcm"] == 5e4 and "branch_mispredict_rate" in values(d)
    assert_cited(d)


def test_instruction_count_dominates(comp: Compendium) -> None:
    d = diagnose(cachegrind(ir=1e7, d1mr=1e3, bcm=100.0), comp)
    top = d.findings[0]
    assert d.classification == "retiring"
    assert top.title.startswith("Executed instructions (retiring work) dominate")
    assert "fewer or wider (SIMD) instructions" in top.summary
    assert values(d)["Ir"] == 1e7
    assert any("vectoriz" in a for a in top.actions)
    assert_cited(d)


def test_instruction_cache_misses_dominate(comp: Compendium) -> None:
    d = diagnose(cachegrind(ir=1e6, d1mr=100.0, i1mr=3e4, ilmr=500.0), comp)
    top = d.findings[0]
    assert d.classification == "frontend_bound"
    assert top.title.startswith("Instruction-cache misses dominate")
    assert {"I1mr", "ILmr"} <= set(values(d))
    assert_cited(d)


def test_other_findings_say_their_share_without_dominating(comp: Compendium) -> None:
    d = diagnose(cachegrind(ir=1e6, d1mr=2e4, dlmr=2e3), comp)
    rest = d.findings[1:]
    assert rest and all("dominate" not in f.title and "estimated cycles" in f.title for f in rest)
    shares = sum(f.score for f in d.findings)
    assert shares <= 1.0 + 1e-6


def test_recorded_gather_run_blames_l1_misses(comp: Compendium) -> None:
    cg = parse(gzip.decompress((FIXTURES / "cpu" / "cachegrind.gather.out.gz").read_bytes())
               .decode())
    k = kernel({n: (float(v), CG_UNITS[n]) for n, v in cg.totals.items()})
    d = diagnose(k, comp)
    assert d.classification == "backend_memory"
    assert "L1 data misses that hit the last-level cache" in d.findings[0].title
    assert_cited(d)


def test_hotspots_put_the_kernels_own_file_first(comp: Compendium) -> None:
    lines = (SourceLine("stdlib.h", 3, 10, {}, 10.0), SourceLine("saxpy.c", 7, 5, {}, 5.0))
    k = kernel({"Ir": (1e6, "inst"), "D1mr": (10.0, "miss")}, hotspots=lines)
    d = diagnose(k, comp, ceiling_gbps=12.5, source_file="saxpy.c")
    assert [s.file for s in d.hotspots] == ["saxpy.c", "stdlib.h"]
    assert d.roofline.ceiling_gbps == 12.5 and d.roofline.duration_ns is None


# --- perf events without top-down -----------------------------------------------------------


def test_perf_events_without_topdown_use_the_cost_model(comp: Compendium) -> None:
    k = kernel({"cycles": (1e6, "cycle"), "instructions": (4e5, "inst"),
                "LLC-load-misses": (3e3, "miss"), "L1-dcache-loads": (2e5, "access"),
                "L1-dcache-load-misses": (1e4, "miss"), "branches": (5e4, "branch"),
                "branch-misses": (500.0, "miss")})
    d = diagnose(k, comp)
    top = d.findings[0]
    assert d.classification == "backend_memory"
    assert "measured by perf" in top.summary and "1 M cycles per call perf measured" in top.summary
    assert top.score == pytest.approx((3e3 * 200 + 7e3 * 12) / 1e6)
    assert_cited(d)


def test_nothing_to_read_gives_no_findings(comp: Compendium) -> None:
    d = diagnose(kernel({"task-clock": (2.0, "msec")}), comp)
    assert d.classification == "none" and d.findings == ()
    assert d.roofline.duration_ns == pytest.approx(2e6)
    assert [c.metric for c in d.citations] == ["task-clock"]
