"""tools/gpu_redesign_check.sh's table (tools/redesign_summary.py) on outputs shaped as the
tune and autotune commands write them, and the examples the script runs are the ones the docs
measured: the same kernels, shapes and exhaustive spaces."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pragma_ncu.search.space import Space
from pragma_ncu.spec.file import load_spec, spec_path_for
from tests.tools_loader import load_tool

ROOT = Path(__file__).resolve().parents[2]


def _state(times: dict[str, float]) -> dict:
    return {"times_us": times}


def test_the_table_reads_the_tune_and_autotune_outputs(tmp_path: Path) -> None:
    base = {"llama-7b": 116.0, "llama-13b": 142.0, "llama-70b": 149.0, "odd": 5.0}
    best = {"llama-7b": 64.0, "llama-13b": 80.0, "llama-70b": 84.0, "odd": 4.0}
    (tmp_path / "readme_tune.json").write_text(json.dumps({
        "summary": {"best_params": {"VEC": 8, "BLOCK": 512, "ROWS": 1},
                    "stop_reason": "reached 100.5% of the copy ceiling"},
        "rounds": [{"best_after": _state(base)}, {"best_after": _state(best)}]}))
    results = tmp_path / "autotune" / "silu_and_mul" / "results.json"
    results.parent.mkdir(parents=True)
    results.write_text(json.dumps({
        "general": {"winner": {"point": {"BLOCK": 512, "ROWS": 1, "VEC": 8}, "objective": 75.6},
                    "incumbent": {"point": {"BLOCK": 256}, "objective": 133.9},
                    "speedup": 1.771},
        "stats": {"evaluated": 72, "space_size": 72, "wall_s": 33.2}}))
    lines = load_tool("redesign_summary").table(tmp_path).splitlines()
    assert lines[2].startswith("| tune silu_and_mul (README) | 134.89 → 75.48 µs | 1.79× | "
                               "BLOCK=512,ROWS=1,VEC=8 | 1 rounds; reached 100.5%")
    assert "| autotune silu_and_mul | 133.90 → 75.60 µs | 1.77× | BLOCK=512,ROWS=1,VEC=8 | "\
           "72/72 points, 33 s |" in lines[3]
    assert "no result" in lines[4] and "83.49 → 46.39 µs, 1.80×" in lines[4]


def test_the_script_runs_the_kernels_the_docs_measured() -> None:
    script = (ROOT / "tools" / "gpu_redesign_check.sh").read_text()
    assert "tune --kernel examples/templated/silu_and_mul.cu " in script  # README's first
    assert "pragma-ncu tune --kernel examples/templated/silu_and_mul.cu" in \
        (ROOT / "README.md").read_text().splitlines()[3]
    kernels = re.search(r"for k in (.*); do", script)
    assert kernels is not None
    sizes = {}
    for name in kernels.group(1).split():
        kernel = ROOT / "examples" / "templated" / name
        spec = load_spec(spec_path_for(kernel), kernel)
        assert {"llama-7b", "llama-13b", "llama-70b"} <= {s.name for s in spec.shapes}
        sizes[spec.kernel_name] = Space.from_spec(spec).size
    assert sizes == {"silu_and_mul": 72, "fused_add_rmsnorm": 40, "merge_attn_states_lse": 96}
    assert set(sizes) == set(load_tool("redesign_summary").AUTOTUNE_DOC)
