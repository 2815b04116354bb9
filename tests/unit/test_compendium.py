"""The curated compendium (knowledge/) and its API: loading, name resolution, search, GPUs, docs."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from pragma_ncu.infra.errors import SpecError
from pragma_ncu.infra.resources import data_path
from pragma_ncu.knowledge.compendium import Compendium, load_curated, name_candidates
from pragma_ncu.knowledge.docs import main as docs_main
from pragma_ncu.knowledge.docs import render_all, stale_docs, write_docs
from pragma_ncu.knowledge.schema import BOTTLENECKS, MetricEntry

KNOWLEDGE = data_path("knowledge")

STALL_REASONS = ("barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss",
                 "lg_throttle", "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle",
                 "misc", "no_instruction", "not_selected", "selected", "short_scoreboard",
                 "sleeping", "tex_throttle", "wait")

# Metrics ncu collects by default (or that the diagnosis relies on), as ncu spells them.
NCU_METRICS = (
    "gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active", "gpc__cycles_elapsed.max",
    "sm__cycles_active.avg", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__bytes.sum.per_second", "launch__grid_size", "launch__block_size",
    "launch__thread_count", "launch__registers_per_thread",
    "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_config_size", "launch__waves_per_multiprocessor",
    "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps", "launch__occupancy_limit_blocks",
    "sm__maximum_warps_per_active_cycle_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.per_cycle_active", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "smsp__warps_eligible.avg.per_cycle_active", "smsp__warps_active.avg.per_cycle_active",
    "smsp__inst_executed.avg.per_cycle_active", "sm__inst_executed.avg.per_cycle_active",
    "sm__instruction_throughput.avg.pct_of_peak_sustained_active",
    "smsp__average_warp_latency_per_inst_issued.ratio",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
    "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "sm__sass_inst_executed_op_shared_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct", "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
    "smsp__inst_executed_op_global_red.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
)

PERF_EVENTS = ("cycles", "instructions", "cache-references", "cache-misses", "branches",
               "branch-misses", "task-clock", "topdown-retiring", "topdown-bad-spec",
               "topdown-fe-bound", "topdown-be-bound", "topdown-heavy-ops",
               "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound")


@pytest.fixture(scope="module")
def comp() -> Compendium:
    return Compendium.load()


def _entry(name: str, **changes: object) -> MetricEntry:
    values: dict[str, object] = dict(
        name=name, profiler="ncu", title=name, group="memory", unit="", meaning="m",
        hardware_unit="hw", indicates=(), reading="r", sources=("https://example.invalid/doc",))
    values.update(changes)
    return MetricEntry(**values)  # type: ignore[arg-type]


# --- curated content -----------------------------------------------------------------------


def test_every_curated_file_loads_and_is_non_empty() -> None:
    entries, strategies, gpus = load_curated(KNOWLEDGE)
    files = sorted(p.stem for p in (KNOWLEDGE / "metrics").glob("*.toml"))
    assert files == sorted({"speed_of_light", "memory", "occupancy_launch", "warp_stalls",
                            "scheduler_instructions", "tensor_core", "perf_topdown",
                            "cachegrind"})
    assert {e.group for e in entries} == set(files)
    assert strategies and gpus


def test_every_entry_has_a_real_source(comp: Compendium) -> None:
    for entry in comp.entries:
        assert entry.sources, entry.name
        assert all(s.startswith("https://") for s in entry.sources), entry.name


def test_enough_curated_entries_for_both_profilers(comp: Compendium) -> None:
    curated = [e for e in comp.entries if e.origin == "curated"]
    ncu = [e for e in curated if e.profiler == "ncu"]
    perf = [e for e in curated if e.profiler == "perf"]
    assert len(curated) >= 60
    assert len(ncu) >= 45 and len(perf) >= 15


def test_entries_are_substantive(comp: Compendium) -> None:
    for entry in comp.entries:
        assert len(entry.meaning) >= 40, entry.name
        assert len(entry.reading) >= 60, entry.name
        assert entry.title and entry.hardware_unit, entry.name


def test_every_bottleneck_has_a_strategy(comp: Compendium) -> None:
    for key in BOTTLENECKS:
        assert comp.strategies_for(key), key


def test_strategy_metrics_resolve_and_knobs_are_parameter_names(comp: Compendium) -> None:
    for strategy in comp.strategies:
        for metric in strategy.metrics:
            assert comp.lookup(metric) is not None, (strategy.bottleneck, metric)
        for knob in strategy.knobs:
            assert knob.isupper() and knob.replace("_", "").isalnum(), knob
        assert strategy.actions and strategy.sources, strategy.bottleneck


def test_related_metrics_resolve(comp: Compendium) -> None:
    for entry in comp.entries:
        for name in entry.related:
            assert comp.lookup(name) is not None, (entry.name, name)


def test_strategies_for_unknown_bottleneck_raises(comp: Compendium) -> None:
    with pytest.raises(SpecError, match="not_a_bottleneck"):
        comp.strategies_for("not_a_bottleneck")


# --- name resolution -----------------------------------------------------------------------


@pytest.mark.parametrize("metric", NCU_METRICS)
def test_default_ncu_metrics_resolve(comp: Compendium, metric: str) -> None:
    entry = comp.lookup(metric)
    assert entry is not None and entry.profiler == "ncu"
    assert not entry.family, f"{metric} fell through to the family {entry.name}"


@pytest.mark.parametrize("reason", STALL_REASONS)
def test_stall_reasons_resolve_in_both_forms(comp: Compendium, reason: str) -> None:
    counter = comp.lookup(f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio")
    sampled = comp.lookup(f"smsp__pcsamp_warps_issue_stalled_{reason}")
    not_issued = comp.lookup(f"smsp__pcsamp_warps_issue_stalled_{reason}_not_issued")
    assert counter is not None and counter.group == "warp_stalls"
    assert counter.name == f"smsp__average_warps_issue_stalled_{reason}_per_issue_active"
    assert sampled is counter and not_issued is counter


def test_pc_sampling_plural_spelling_resolves(comp: Compendium) -> None:
    plural = comp.lookup("smsp__pcsamp_warps_issue_stalled_no_instructions")
    assert plural is comp.lookup("smsp__pcsamp_warps_issue_stalled_no_instruction")


@pytest.mark.parametrize("event", PERF_EVENTS)
def test_perf_events_resolve(comp: Compendium, event: str) -> None:
    entry = comp.lookup(event)
    assert entry is not None and entry.profiler == "perf"


@pytest.mark.parametrize(("spelling", "name"), [
    ("cpu_core/topdown-retiring/", "topdown-retiring"),
    ("cpu_atom/cycles/u", "cycles"),
    ("cycles:u", "cycles"),
    ("instructions:ppp", "instructions"),
    ("tma_backend_bound", "topdown-be-bound"),
    ("cpu-cycles", "cycles"),
    ("llc-load-misses", "LLC-load-misses"),
])
def test_perf_spellings_are_normalized(comp: Compendium, spelling: str, name: str) -> None:
    entry = comp.lookup(spelling)
    assert entry is not None and entry.name == name


def test_suffixes_are_stripped_one_at_a_time() -> None:
    assert name_candidates("dram__bytes.sum.per_second") == [
        "dram__bytes.sum.per_second", "dram__bytes.sum", "dram__bytes"]
    assert name_candidates("x__y.avg.pct_of_peak_sustained_elapsed")[-1] == "x__y"
    # an unknown trailing part stops the stripping; the base before the first '.' is tried last
    assert name_candidates("x__y.sum.weird") == ["x__y.sum.weird", "x__y"]
    assert name_candidates("dram__bytes.sum [byte]")[0] == "dram__bytes.sum"


def test_all_rollups_of_a_metric_resolve_to_its_entry(comp: Compendium) -> None:
    base = comp.lookup("dram__throughput")
    assert base is not None and base.name == "dram__throughput"
    for suffix in (".avg.pct_of_peak_sustained_elapsed", ".max.pct_of_peak_sustained_active",
                   ".sum.per_second", ".avg.peak_sustained", ".min"):
        assert comp.lookup("dram__throughput" + suffix) is base, suffix


def test_aliases_and_display_names_resolve(comp: Compendium) -> None:
    achieved = comp.lookup("sm__warps_active")
    assert comp.lookup("Achieved Occupancy") is achieved
    assert comp.lookup("achieved_occupancy") is achieved
    assert comp.lookup("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed") is \
        comp.lookup("dram__throughput")


def test_family_matching_picks_the_longest_prefix() -> None:
    small = Compendium([
        _entry("sm__pipe_", family=True),
        _entry("sm__pipe_tensor", family=True),
        _entry("sm__pipe_tensor_op_hmma_cycles_active"),
    ])
    assert small.lookup("sm__pipe_fmaheavy_cycles_active.avg").name == "sm__pipe_"
    assert small.lookup("sm__pipe_tensor_op_imma_cycles_active.sum").name == "sm__pipe_tensor"
    exact = small.lookup("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    assert exact.name == "sm__pipe_tensor_op_hmma_cycles_active"
    assert small.lookup("sm__cycles_active.avg") is None


def test_family_aliases_act_as_prefixes() -> None:
    small = Compendium([_entry("l1tex__t_sectors_pipe_lsu_mem_local", family=True,
                               aliases=("l1tex__t_requests_pipe_lsu_mem_local",))])
    found = small.lookup("l1tex__t_requests_pipe_lsu_mem_local_op_st.sum")
    assert found is not None and found.name == "l1tex__t_sectors_pipe_lsu_mem_local"


def test_curated_families_catch_uncatalogued_metrics(comp: Compendium) -> None:
    for metric, family in [
        ("sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active", "sm__pipe_"),
        ("sm__pipe_tensor_op_xyz_cycles_active.avg", "sm__pipe_tensor"),
        ("smsp__average_warps_issue_stalled_future_reason_per_issue_active.ratio",
         "smsp__average_warps_issue_stalled_"),
        ("launch__grid_dim_x", "launch__"),
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum", "l1tex__t_"),
    ]:
        entry = comp.lookup(metric)
        assert entry is not None and entry.family and entry.name == family, metric


def test_unknown_metrics_resolve_to_none(comp: Compendium) -> None:
    assert comp.lookup("foo__bar.sum") is None
    assert comp.lookup("not-a-perf-event") is None
    assert comp.lookup("foo__bar") is None
    assert comp.lookup("dram__bytes.sum") == comp.lookup("dram__bytes")


def test_lookup_is_fast_for_hundreds_of_metrics(comp: Compendium) -> None:
    names = [f"{m}.{i}" for i in range(8) for m in NCU_METRICS] + [
        f"unknown__metric_{i}.sum" for i in range(200)]
    start = time.perf_counter()
    found = {name: entry for name in names if (entry := comp.lookup(name)) is not None}
    elapsed = time.perf_counter() - start
    assert len(found) >= len(NCU_METRICS)
    assert elapsed < 0.5, f"{len(names)} lookups took {elapsed:.3f}s"


# --- generated entries and bad files --------------------------------------------------------


def _write_generated(path: Path, entries: list[dict[str, object]], version: int = 1) -> Path:
    path.write_text(json.dumps({"version": version, "entries": entries}), encoding="utf-8")
    return path


def test_generated_entries_merge_and_curated_ones_win(tmp_path: Path, comp: Compendium) -> None:
    new = _entry("smsp__brand_new_counter", origin="curated").to_json()
    clash = _entry("dram__throughput", title="generated title").to_json()
    alias_clash = _entry("DRAM Throughput", title="generated alias").to_json()
    merged = Compendium.load(_write_generated(tmp_path / "c.json", [new, clash, alias_clash]))
    assert len(merged) == len(comp) + 1
    found = merged.lookup("smsp__brand_new_counter.sum")
    assert found is not None and found.origin == "generated"
    assert merged.lookup("dram__throughput").title == "DRAM throughput"
    assert merged.lookup("DRAM Throughput").origin == "curated"


def test_missing_generated_file_is_ignored(tmp_path: Path, comp: Compendium) -> None:
    assert len(Compendium.load(tmp_path / "absent.json")) == len(comp)


@pytest.mark.parametrize(("content", "field"), [
    ('{"version": 2, "entries": []}', "version"),
    ('{"version": 1, "entries": {}}', "entries"),
    ("not json", "(file)"),
    ('{"version": 1, "entries": [{"name": "x"}]}', "x.profiler"),
])
def test_bad_generated_file_raises(tmp_path: Path, content: str, field: str) -> None:
    path = tmp_path / "compendium.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        Compendium.load(path)
    assert info.value.field == field and str(path) in str(info.value)


@pytest.fixture
def knowledge_copy(tmp_path: Path) -> Path:
    root = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE, root)
    return root


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


_GOOD_ENTRY = '''
[[metric]]
name = "x__new"
profiler = "ncu"
title = "t"
group = "memory"
unit = ""
meaning = "m"
hardware_unit = "h"
indicates = []
reading = "r"
sources = ["https://example.invalid"]
'''


@pytest.mark.parametrize(("edit", "field"), [
    ("[[metric]\nname = ", "(syntax)"),
    (_GOOD_ENTRY.replace('reading = "r"\n', ""), "x__new.reading"),
    (_GOOD_ENTRY.replace('group = "memory"', 'group = "elsewhere"'), "x__new.group"),
    (_GOOD_ENTRY.replace("indicates = []", 'indicates = ["slow"]'), "x__new.indicates"),
    (_GOOD_ENTRY.replace('name = "x__new"', 'name = "dram__bytes"'), "dram__bytes.name"),
    (_GOOD_ENTRY + 'colour = "red"\n', "metric.colour"),
    ("\n[extra]\nkey = 1\n", "extra"),
])
def test_bad_metric_file_names_file_and_field(knowledge_copy: Path, edit: str, field: str) -> None:
    path = knowledge_copy / "metrics" / "memory.toml"
    _append(path, edit)
    with pytest.raises(SpecError) as info:
        Compendium.load(root=knowledge_copy)
    assert info.value.field == field
    assert info.value.source == str(path)


def test_bad_strategy_and_gpu_files_name_the_file(knowledge_copy: Path) -> None:
    strategies = knowledge_copy / "strategies.toml"
    _append(strategies, '\n[[strategy]]\nbottleneck = "slow"\nevidence = "e"\n'
                        'metrics = ["x"]\nactions = ["a"]\n')
    with pytest.raises(SpecError, match="strategies.toml"):
        Compendium.load(root=knowledge_copy)
    shutil.copy(KNOWLEDGE / "strategies.toml", strategies)
    _append(knowledge_copy / "hardware.toml", '\n[[gpu]]\nname = "X"\narch = "sm_90"\n'
                                              'sm_count = 0\n')
    with pytest.raises(SpecError, match="hardware.toml") as info:
        Compendium.load(root=knowledge_copy)
    assert info.value.field == "X.sm_count"


# --- search -------------------------------------------------------------------------------


def test_search_ranks_name_hits_above_text_hits() -> None:
    small = Compendium([
        _entry("a__mentions", meaning="this one only talks about latency in its text"),
        _entry("z__latency_counter"),
        _entry("b__titled", title="Latency of things"),
    ])
    assert [e.name for e in small.search("latency")] == [
        "z__latency_counter", "b__titled", "a__mentions"]


def test_search_needs_all_words_then_falls_back_to_any() -> None:
    small = Compendium([_entry("x__bank_conflicts"), _entry("x__bank_account"),
                        _entry("x__conflicts_only")])
    assert [e.name for e in small.search("bank conflicts")] == ["x__bank_conflicts"]
    fallback = [e.name for e in small.search("bank nothingmatches")]
    assert fallback == ["x__bank_account", "x__bank_conflicts"]
    assert small.search("") == [] and small.search("bank", limit=1)[0].name == "x__bank_account"


def test_search_on_the_curated_compendium(comp: Compendium) -> None:
    assert comp.search("long scoreboard")[0].name == \
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active"
    assert "bank_conflicts" in comp.search("bank conflicts")[0].name
    assert comp.search("topdown backend")[0].profiler == "perf"
    assert len(comp.search("memory", limit=3)) == 3


def test_suggest_offers_close_names(comp: Compendium) -> None:
    assert "dram__throughput" in comp.suggest("dram__throughputt.avg")
    assert any("long_scoreboard" in n for n in comp.suggest("stall_long_scoreboard_xyz"))


# --- GPUs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "name"), [
    ("NVIDIA H200", "H200"),
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("H100 SXM5", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"),
    ("nvidia l40s", "L40S"),
    ("sm_90", "H100 SXM"),
    ("sm_90a", "H100 SXM"),
    ("8.0", "A100 SXM 80GB"),
])
def test_gpu_matching_is_tolerant(comp: Compendium, query: str, name: str) -> None:
    spec = comp.gpu(query)
    assert spec is not None and spec.name == name


@pytest.mark.parametrize("query", ["NVIDIA H100 NVL", "NVIDIA A100-SXM4-40GB",
                                   "NVIDIA A100 80GB PCIe", "sm_100", "Tesla V100", ""])
def test_gpus_we_have_no_numbers_for_do_not_match(comp: Compendium, query: str) -> None:
    assert comp.gpu(query) is None


def test_gpu_specs_are_consistent(comp: Compendium) -> None:
    assert {g.name for g in comp.gpus} == {"H100 SXM", "H100 PCIe", "H200", "A100 SXM 80GB",
                                           "L40S", "RTX 4090"}
    for g in comp.gpus:
        v = g.values
        assert g.provenance == "datasheet" and g.sources
        assert v["max_warps_per_sm"] * 32 == v["max_threads_per_sm"]
        assert v["max_smem_per_block_bytes"] < v["smem_per_sm_bytes"]
        assert v["dram_gbps"] > 500 and v["fp32_tflops"] > 10 and v["l2_bytes"] > 2**24
        assert v["bf16_tensor_tflops"] > v["fp32_tflops"]


# --- rendered documents --------------------------------------------------------------------


def test_committed_metric_docs_match_the_knowledge(comp: Compendium) -> None:
    stale = stale_docs(comp, data_path("metric_docs"))
    assert stale == [], ("metric_docs/ is out of date; run `python -m pragma_ncu.knowledge.docs`"
                         f": {stale}")


def test_docs_cover_every_curated_entry(comp: Compendium) -> None:
    docs = render_all(comp)
    assert set(docs) == {f"{e.group}.md" for e in comp.entries}
    for entry in comp.entries:
        assert f"`{entry.name}`" in docs[f"{entry.group}.md"], entry.name


def test_drifted_docs_are_detected(tmp_path: Path, comp: Compendium) -> None:
    assert docs_main(["--check", "--out", str(tmp_path)]) == 1
    write_docs(comp, tmp_path)
    assert docs_main(["--check", "--out", str(tmp_path)]) == 0
    page = tmp_path / "memory.md"
    page.write_text(page.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    assert stale_docs(comp, tmp_path) == ["memory.md"]
