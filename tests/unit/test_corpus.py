"""The diagnosis on the calibration corpus, recorded on an H200 three ways (ncu's default set,
`--set full`, `pragma-ncu profile`): 59 kernels, 21 causes, compound cases, two held-out sets.
See examples/corpus/README.md and docs/profiler.md."""

from __future__ import annotations

import pytest

from pragma_ncu.backends import diagnose_in
from tests.corpus_eval import COLLECTIONS, EXPECTED, collection, knowledge, verdicts

MIN_TOP1 = 0.9


@pytest.fixture(scope="module", params=COLLECTIONS)
def judged(request):
    return request.param, verdicts(request.param)


def test_the_corpus_covers_enough_kernels_and_causes():
    assert len(EXPECTED) >= 30
    assert len({e["cause"] for e in EXPECTED.values()}) >= 14
    assert {e["split"] for e in EXPECTED.values()} == {"calibration", "holdout", "holdout2"}


def test_top_finding_is_right_for_nine_kernels_in_ten(judged):
    name, found = judged
    wrong = [(v.kernel, v.expected, v.top) for v in found if not v.right]
    assert sum(v.right for v in found) / len(found) >= MIN_TOP1, wrong


def test_the_held_out_kernels_do_as_well(judged):
    """Kernels the detectors were not tuned on (holdout2 was recorded after the last change of
    a threshold) must not fare much worse than the calibration set."""
    name, found = judged
    held = [v for v in found if v.split == "holdout2"]
    assert sum(v.right for v in held) / len(held) >= 0.8, [(v.kernel, v.top) for v in held]


def test_no_kernel_is_said_to_have_no_bottleneck(judged):
    name, found = judged
    assert [v.kernel for v in found if v.top == "none"] == []


def test_the_default_set_says_what_it_could_not_assess_and_how_to():
    for v in verdicts("default"):
        gaps = {g.cause for g in v.diagnosis.not_assessed if not g.inferred}
        assert {"memory_latency", "warp_divergence", "register_spills"} <= gaps, v.kernel
        command = v.diagnosis.collect_command
        assert command.startswith("ncu ") and "--section WarpStateStats" in command
        assert "--section SourceCounters" in command and f"regex:{v.kernel}" in command


def test_our_collection_leaves_nothing_unassessed():
    for v in verdicts("ours"):
        assert [g.cause for g in v.diagnosis.not_assessed if not g.inferred] == [], v.kernel


@pytest.mark.parametrize(("kernel", "root", "symptoms"), [
    ("strided_small_grid", "small_grid", {"uncoalesced_access"}),
    ("reduce_few_blocks", "small_grid", {"memory_latency", "latency_bound"}),
    ("register_pressure", "occupancy_registers", {"memory_latency", "latency_bound"}),
    ("smem_occupancy", "occupancy_shared", {"memory_latency", "latency_bound"}),
    ("gather_random", "uncoalesced_access", {"l2_bandwidth", "memory_bandwidth"}),
    ("local_dyn", "local_memory", {"l2_bandwidth", "memory_latency"}),
    ("spill_arrays", "register_spills", {"l2_bandwidth", "memory_latency"}),
    ("tail_waves", "tail_effect", {"compute_fma"}),
])
@pytest.mark.parametrize("coll", ["full", "ours"])
def test_compound_cases_rank_the_root_cause_first(kernel, root, symptoms, coll):
    found = next(v for v in verdicts(coll) if v.kernel == kernel).diagnosis.findings
    order = [f.bottleneck for f in found]
    assert order[0] == root, order
    for symptom in symptoms & set(order):
        assert order.index(symptom) > 0


@pytest.mark.parametrize("kernel", ["bandwidth_ok", "copy_half", "rowsum_warp", "copy_float2"])
def test_a_healthy_memory_bound_kernel_is_called_at_the_roofline(kernel):
    """Judged against the copy ceiling measured on the same H200 (ours) and against a copy's
    practical fraction of ncu's DRAM peak when a report carries no ceiling (default, full)."""
    for coll in COLLECTIONS:
        d = next(v for v in verdicts(coll) if v.kernel == kernel).diagnosis
        assert d.classification == "memory_bandwidth"
        assert "at the roofline" in d.findings[0].title, (coll, d.findings[0].title)
        assert d.roofline.at_roofline and d.roofline.binding == "DRAM"


def test_the_measured_copy_ceiling_judges_the_roofline():
    profile, k = collection("ours")["copy_half"]
    assert profile.collection["ceiling_gbps"] > 4000  # measured on the H200 with the profile
    at = diagnose_in(profile, k, knowledge())
    assert "of the measured copy ceiling" in at.findings[0].title
    below = diagnose_in(profile, k, knowledge(), ceiling_gbps=2 * at.roofline.ceiling_gbps)
    assert "below the roofline" in below.findings[0].title


def test_a_compute_bound_kernel_at_its_peak_is_called_at_the_roofline():
    d = next(v for v in verdicts("full") if v.kernel == "fma_bound").diagnosis
    assert d.findings[0].title.endswith("at the roofline")
    assert d.roofline.at_roofline and d.roofline.binding == "FMA"


def test_evidence_names_the_metric_actually_read():
    """The default set has no sector counts: the uncoalesced finding must say it rests on the
    L1 wavefront ratio; the full set's must name the .ratio metric ncu's sections give."""
    default = next(v for v in verdicts("default") if v.kernel == "column_walk").diagnosis
    full = next(v for v in verdicts("full") if v.kernel == "column_walk").diagnosis
    assert "l1tex__data_pipe_lsu_wavefronts" in default.findings[0].evidence[0].metric
    assert full.findings[0].evidence[0].metric == \
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
    assert full.findings[0].evidence[0].value == pytest.approx(4.0)


def test_display_unit_pages_give_the_same_verdicts():
    for coll in ("default", "full"):
        assert [v.top for v in verdicts(coll, "raw_display")] == [v.top for v in verdicts(coll)]
