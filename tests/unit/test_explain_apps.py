"""`explain` on application reports (issue 27): one screen ranked by what fixing each kernel
group would save, on the applications recorded on an H200 (tests/fixtures/apps: the pipeline
pair, the PyTorch block pair, the 5,000-launch pair, examples/apps/); --kernel, --all,
Markdown and JSON; where a kernel's source is found, how to tune it."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pragma_ncu import api
from pragma_ncu.api.application import find_definitions
from pragma_ncu.cli.main import cli
from pragma_ncu.report.diagnosis import explain_text

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "fixtures" / "apps"
REPORTS = [APPS / app / side for app in ("pipeline", "torch_block", "many")
           for side in ("base", "new")]
IDS = [f"{p.parent.name}-{p.name}" for p in REPORTS]
ROW = re.compile(r"^  (\d+)\s+(.+?)\s{2,}(\d+)\s{2,}")


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["explain", *map(str, args)])


@pytest.fixture(scope="module", params=REPORTS, ids=IDS)
def explained(request: pytest.FixtureRequest) -> tuple[Path, str, dict[str, Any]]:
    text, data = run(request.param), run(request.param, "--format", "json")
    assert text.exit_code == 0 and data.exit_code == 0, text.output + data.output
    return request.param, text.output, json.loads(data.output)


def shown_groups(text: str) -> list[str]:
    """Each table row's kernel: the line below it where the table cut the name (or two read
    the same), else the table's cell."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = ROW.match(line)
        if m:
            below = lines[i + 1].strip()
            out.append(m.group(2) if below.startswith("cause:") else below)
    return out


def test_an_application_fits_one_screen_each_group_once(explained):
    _, text, data = explained
    lines = text.splitlines()
    assert len(lines) <= 60 and max(map(len, lines)) <= 100, text
    shown = shown_groups(text)
    assert len(shown) == min(10, len(data["application"]["groups"]))
    assert len(set(shown)) == len(shown), shown  # a group at most once, told apart
    assert lines[1].startswith("GPU time ") and f"{data['application']['launches']} launches" \
        in lines[1]
    if len(data["application"]["groups"]) > 10:
        assert "--all lists them" in text
    assert "--kernel NAME" in text


def test_groups_rank_by_estimated_saving_then_gpu_time(explained):
    _, _, data = explained
    groups = data["application"]["groups"]
    known = [g for g in groups if g["saving_us"] is not None]
    unknown = [g for g in groups if g["saving_us"] is None]
    assert groups == known + unknown
    assert [g["saving_us"] for g in known] == sorted((g["saving_us"] for g in known),
                                                     reverse=True)
    assert [g["total_us"] for g in unknown] == sorted((g["total_us"] for g in unknown),
                                                      reverse=True)


def test_the_json_keeps_every_launch_and_adds_up(explained):
    """Structural checks of the JSON: every launch once, the group figures consistent with
    each other and with the launches, the estimate as its definition says."""
    _, _, data = explained
    app = data["application"]
    launches = [launch for g in app["groups"] for launch in g["launches"]]
    assert len(launches) == app["launches"] == len({launch["index"] for launch in launches})
    assert app["groups_in_report"] == len(app["groups"])
    assert sum(g["total_us"] for g in app["groups"]) == pytest.approx(app["total_us"])
    for rank, g in enumerate(app["groups"], 1):
        assert g["rank"] == rank and g["count"] == len(g["launches"])
        assert g["total_us"] == pytest.approx(sum(x["duration_us"] for x in g["launches"]))
        assert g["share"] == pytest.approx(g["total_us"] / app["total_us"])
        assert g["median_launch"] in {x["index"] for x in g["launches"]}
        assert set(g["config"]) == {"grid", "block", "dynamic_smem", "nvtx", "label"}
        assert isinstance(g["diagnosis"]["findings"], list) and g["diagnosis"]["classification"]
        if g["saving_us"] is None:
            assert g["roofline_fraction"] is None and g["app_after_us"] is None
            continue
        assert 0 < g["roofline_fraction"] <= 1 and g["roofline_by"]
        assert g["saving_us"] == pytest.approx(g["total_us"] * (1 - g["roofline_fraction"]))
        assert g["app_after_us"] == pytest.approx(app["total_us"] - g["saving_us"])


def test_a_clear_speed_of_light_picture_always_gets_a_verdict(explained):
    """Every group whose report carries the speed-of-light figures has a classification: the
    PyTorch block's copy and layer-norm kernels (issue slots 64-77% busy, no pipe) said 'no
    bottleneck stands out' before."""
    _, _, data = explained
    for g in data["application"]["groups"]:
        if g["roofline_fraction"] is not None and g["roofline_fraction"] < 0.9:
            assert g["diagnosis"]["classification"] != "none", g["name"]


def test_all_lists_every_group_and_markdown_says_the_same():
    report = APPS / "pipeline" / "base"
    everything = run(report, "--all")
    assert len(shown_groups(everything.output)) == 22
    assert "--all lists them" not in everything.output
    torch = run(APPS / "torch_block" / "new", "--all")
    assert len(set(shown_groups(torch.output))) == 14  # names of up to 1,000 characters
    md = run(report, "--format", "md").output
    assert md.startswith("### GPU time 9.41 ms") and md.count("\n| ") == 11  # header + 10
    assert "| `norm_scale` " in md and "small_grid" in md


def test_kernel_gives_the_groups_full_per_kernel_section():
    """--kernel NAME: the group's figures, then exactly the section explain prints for a
    single kernel, on the group's median launch."""
    report = APPS / "pipeline" / "base"
    result = run(report, "--kernel", "norm_scale")
    assert result.exit_code == 0, result.output
    found = api.explain(report, kernel="norm_scale")
    assert found.application is not None
    (group,) = found.application.groups
    assert result.output.startswith("Kernel group norm_scale (grid 32 x block 256)")
    assert "10 launches, 4.13 ms = 43.8% of the GPU time" in result.output
    assert explain_text(group.diagnosis, group.kernel) in result.output
    assert group.kernel.index in [k.index for k in group.group.launches]
    several = run(report, "--kernel", "scale")  # scale<1..4> and norm_scale
    assert several.output.count("Kernel group ") == 5
    missing = run(report, "--kernel", "no_such_kernel")
    assert missing.exit_code != 0 and "no kernel matches 'no_such_kernel'" in missing.output


def test_the_top_groups_of_the_recorded_applications():
    """What the one screen leads with, and why: the pipeline's small grid (43.8% of its
    time at 5% of its roofline), the PyTorch block's new softmax on two blocks."""
    pipeline = api.explain(APPS / "pipeline" / "base").application
    assert pipeline is not None
    assert [g.group.name for g in pipeline.groups[:2]] == ["norm_scale", "sgemm_small"]
    top = pipeline.groups[0]
    assert top.diagnosis.classification == "small_grid" and top.reached is not None
    assert top.reached < 0.1 and pipeline.after_us(top) == pytest.approx(
        pipeline.total_us - top.saving_us)
    torch = api.explain(APPS / "torch_block" / "new").application
    assert torch is not None and torch.groups[0].diagnosis.classification == "small_grid"
    assert "SoftMax" in torch.groups[0].group.name


def test_the_estimate_matches_a_fix_recorded_on_the_gpu():
    """NEW of the recorded pipeline fixed BASE's norm_scale exactly as FIX_NORM_SCALE does
    (one thread per element instead of 32 blocks): the saving BASE's explain estimated,
    against what NEW measured for that group (H200, 2026-11-24; nothing was tuned on it)."""
    base = api.explain(APPS / "pipeline" / "base", kernel="norm_scale").application
    new = api.explain(APPS / "pipeline" / "new", kernel="norm_scale").application
    assert base is not None and new is not None
    estimate = base.groups[0].saving_us
    measured = base.groups[0].total_us - new.groups[0].total_us
    assert estimate is not None and measured == pytest.approx(estimate, rel=0.05)


def test_a_report_without_speed_of_light_ranks_by_gpu_time_and_says_so():
    result = run(APPS / "many" / "base")
    assert "No estimate for 100 group(s)" in result.output
    assert "SpeedOfLight" in result.output
    assert "work<" in result.output  # demangled from the raw page's mangled names


def test_five_thousand_launches_are_explained_quickly():
    """The recorded 5,000-launch report from CSV (CI's two cores; benchmarks/explain_scale.py
    measures it, docs/profiler.md has the figures): 20 s is CI's margin, not the target."""
    t0 = time.perf_counter()
    result = run(APPS / "many" / "new", "--format", "json")
    took = time.perf_counter() - t0
    assert result.exit_code == 0
    assert json.loads(result.output)["application"]["launches"] == 5000
    assert took < 20, f"{took:.1f} s"


def test_a_group_whose_source_is_found_says_how_to_tune_it(tmp_path):
    result = run(APPS / "pipeline" / "base", "--source-dir", ROOT / "examples" / "apps")
    source = ROOT / "examples" / "apps" / "pipeline.cu"
    assert f"source: {source}:" in result.output
    assert f"$ pragma-ncu init {source} --kernel norm_scale --spec norm_scale.toml" \
        in result.output
    assert f"$ pragma-ncu tune --kernel {source} --spec norm_scale.toml" in result.output
    data = json.loads(run(APPS / "pipeline" / "base", "--format", "json", "--source-dir",
                          source).output)
    top = data["application"]["groups"][0]
    assert top["source"] == str(source) and top["tune"][0].startswith("pragma-ncu init ")
    without = run(APPS / "pipeline" / "base")  # no .cu beside the fixtures
    assert "pragma-ncu init" not in without.output


def test_kernel_definitions_are_found_by_their_function_name(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "k.cu").write_text(
        "template <int K> __global__ void work(float* y) { y[0] = K; }\n"
        "__device__ float helper(float x) { return x; }\n"
        "namespace ns { __global__ void other(float* y) { y[0] = 1; } }\n")
    found = find_definitions({"work", "helper", "other", "absent"}, [tmp_path])
    assert found == {"work": (tmp_path / "sub" / "k.cu", 1),
                     "other": (tmp_path / "sub" / "k.cu", 3)}


def test_a_single_launch_report_keeps_the_per_kernel_section():
    result = run(ROOT / "tests" / "fixtures" / "profiles" / "bank_conflicts")
    assert result.output.startswith("Kernel ") and "Kernel group" not in result.output
    assert api.explain(ROOT / "tests" / "fixtures" / "profiles" / "bank_conflicts"
                       ).application is None


def test_long_names_and_found_sources_still_fit_one_screen(tmp_path):
    """A SYNTHETIC application (tests/synthetic_app.py: recorded default-set rows, renamed)
    of 20 kernels with PyTorch-length names, each defined in a source beside the report: every
    row takes four lines, and the screen still fits 60."""
    from tests.synthetic_app import Launch, write_side

    names = [f"at::native::fused_kernel_{i}<float, at::native::Functor<float, {i}>, "
             f"std::array<char*, 3>, at::detail::Offset<{'x' * 40}>>" for i in range(20)]
    report = write_side(tmp_path / "app", [Launch("bandwidth_ok", n, 50_000.0 + 1_000 * i)
                                           for i, n in enumerate(names) for _ in range(3)])
    (report / "kernels.cu").write_text("".join(
        f"template <typename T, typename F, typename A, typename O>\n"
        f"__global__ void fused_kernel_{i}(T* y) {{ y[0] = 0; }}\n" for i in range(20)))
    result = run(report)
    lines = result.output.splitlines()
    assert result.exit_code == 0 and len(lines) <= 60, result.output
    shown = shown_groups(result.output)
    assert len(shown) == 10 and len(set(shown)) == len(shown)
    assert result.output.count("      source: ") == 10 and "10 more kernel groups" in result.output
    asked = run(report, "--top", "15")
    assert len(shown_groups(asked.output)) == 15  # what --top asks for, whatever the length


def test_by_default_fewer_rows_where_ten_would_not_fit(tmp_path, monkeypatch):
    """The screen's height rules the default number of rows (here a 30-line screen)."""
    from pragma_ncu.report import application as screen

    monkeypatch.setattr(screen, "SCREEN", 30)
    result = run(APPS / "torch_block" / "new")
    assert len(result.output.splitlines()) <= 30
    rows = len(shown_groups(result.output))
    assert 1 <= rows < 10 and f"{14 - rows} more kernel groups" in result.output
