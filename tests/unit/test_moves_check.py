"""tools/gpu_moves_check.sh and its table (tools/moves_table.py): the kernels it runs are every
calibration, held-out and bundled plain kernel at a shape of its own spec; the table reads the
traces a run leaves (one made here by the simulated backend) and sets the calibration median."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pragma_ncu.spec.file import load_spec
from tests.tools_loader import load_tool
from tests.tune_rig import run_moves

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = (ROOT / "tools" / "gpu_moves_check.sh").read_text()


def test_the_script_runs_every_plain_kernel_at_a_shape_of_its_spec() -> None:
    listed = load_tool("moves_table").kernels()
    sets = {s for s, _, _ in listed}
    assert sets == {"calibration", "heldout", "blind", "example", "structural", "heldaside",
                    "heldaside2", "extra"}
    paths = {p for _, p, _ in listed}
    expected = {str(p.relative_to(ROOT)) for p in [
        *ROOT.glob("examples/moves/*.cu"), *ROOT.glob("examples/moves/heldout/*.cu"),
        *ROOT.glob("examples/moves/blind/*.cu"), *ROOT.glob("examples/*.cu"),
        *ROOT.glob("examples/moves/structural/*.cu"),
        *ROOT.glob("examples/moves/structural/heldaside/*.cu"),
        *ROOT.glob("examples/moves/structural/heldaside2/*.cu"),
        *ROOT.glob("examples/moves/structural/extra/*.cu")]}
    assert paths == expected and len(paths) >= 8 + 3 + 6 + 8 + 12
    for set_name, path, _ in listed:  # each structural kernel beside its hand-written one
        if set_name in ("structural", "heldaside", "heldaside2"):
            fast = (ROOT / path).parent / "fast" / Path(path).name
            assert fast.is_file() and fast.with_suffix(".toml").is_file(), path
    for _, path, shape in listed:
        spec = load_spec((ROOT / path).with_suffix(".toml"))
        assert shape in {s.name for s in spec.shapes}
    count = len(list((ROOT / "examples" / "moves").glob("*.cu")))
    assert [s for s, _, _ in listed][:count] == ["calibration"] * count  # the acceptance set first


def test_the_script_is_bounded_and_runs_two_gpu_streams_without_an_llm() -> None:
    assert "tune --kernel \"$kernel\" --shape \"$shape\" --no-llm" in SCRIPT
    assert "CUDA_VISIBLE_DEVICES=$((gpu + FIRST_GPU))" in SCRIPT and 'GPUS=${GPUS:-2}' in SCRIPT
    for option in ("--rounds", "--budget", "--time-budget", "--timeout"):
        assert option in SCRIPT
    deadline = int(re.search(r"DEADLINE=\$\{DEADLINE:-(\d+)\}", SCRIPT).group(1))  # type: ignore[union-attr]
    per = int(re.search(r"PER_KERNEL=\$\{PER_KERNEL:-(\d+)\}", SCRIPT).group(1))  # type: ignore[union-attr]
    assert deadline + 15 < 9 * 60 and per < deadline  # wheels and the table in the rest
    assert "tools/install_wheels.sh" in SCRIPT and "tree_sitter_cuda" in SCRIPT


def test_the_table_reads_the_traces_a_run_leaves(tmp_path: Path) -> None:
    effects = {("PNCU_READONLY", 1): 0.55, ("PNCU_UNROLL", 4): 0.9}
    _, ctx = run_moves(tmp_path / "sim", "frames_wsum", "fused_add_rmsnorm", effects)
    out = tmp_path / "out"
    (out / "traces").mkdir(parents=True)
    table = load_tool("moves_table")
    table.write_traces(ctx.store.path, out / "traces" / "calibration-frames_wsum")
    assert (out / "traces" / "calibration-frames_wsum.md").read_text().startswith("# Trace")
    assert "<html" in (out / "traces" / "calibration-frames_wsum.html").read_text()
    (out / "walls.txt").write_text("calibration frames_wsum 0 41 gpu0\n"
                                   "calibration gamma_lut skipped 0 gpu1\n")
    text = table.table(out)
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()}
    frames = rows["frames_wsum"]
    assert re.search(r"\| calibration \| (99\.\d\d|100\.\d\d) → ", frames), frames
    assert "| readonly, unroll | readonly, unroll" in frames and frames.endswith("| 41 |")
    speedup = float(frames.split(" | ")[3].rstrip("×"))
    assert 1.9 < speedup < 2.1  # planted 0.55 x 0.9
    assert "no trace (skipped)" in rows["gamma_lut"]
    # the median over every calibration kernel, those without a result counting 1.00x
    count = len(list((ROOT / "examples" / "moves").glob("*.cu")))
    assert f"Median speedup of the calibration set ({count} kernels" in text and "1.00×" in text
    docs = table.table(out, docs=True)
    assert "wall s" not in docs and json.loads(
        (out / "traces" / "calibration-frames_wsum.json").read_text())["rounds"]


def test_a_rerun_of_some_kernels_replaces_their_rows(tmp_path: Path) -> None:
    first, rerun = tmp_path / "a", tmp_path / "b"
    for out, line in ((first, "calibration gamma_lut skipped 0 gpu1\n"),
                      (rerun, "calibration gamma_lut 130 75 gpu0\n")):
        (out / "traces").mkdir(parents=True)
        (out / "walls.txt").write_text(line)
    rows = load_tool("moves_table").table([first, rerun]).splitlines()
    gamma = next(r for r in rows if r.startswith("| gamma_lut |"))
    assert gamma.endswith("| no trace (75) | 75 |")
    assert "--list" in SCRIPT and '"${@:2}"' in SCRIPT  # the script reruns named kernels
