"""vectorize_loops: a loop that threads share takes VEC consecutive iterations a thread through
vector accesses, the last iterations one by one, the loop as written where the arrays are not
aligned. The rewrite on snippets, its default giving back the source, its refusals; and the
rewrite run on the CPU emulator against the source with aligned and unaligned rows, also after
row_team (whose threads past the last row must store nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.coder.moves import Applied, by_name
from pragma_ncu.coder.moves import assemble as asm
from tests.fakes import cuda_on_cpu
from tests.fakes.moves import applied, next_round, refused, rendered, spec_of
from tests.move_kernels.row_team import softmax

# a block per row: its threads share the loops by blockDim.x
BLOCK_ROWS = """extern "C" __global__ void k(const float* x, const float* w, float* out, float* ss,
                            int N, int C)
{
    const int row = blockIdx.x;
    const int t = threadIdx.x;
    __shared__ float part[256];
    float acc = 0.0f;
    for (int j = t; j < C; j += blockDim.x) {
        const float v = x[(long long)row * C + j];
        acc += v * v;
    }
    part[t] = acc;
    __syncthreads();
    if (t == 0) {
        float s = 0.0f;
        for (int q = 0; q < 256; ++q) s += part[q];
        ss[row] = s;
    }
    for (int j = t; j < C; j += 256)
        out[(long long)row * C + j] = x[(long long)row * C + j] * w[j];
}
"""
BLOCK_ARGS = [{"name": "x", "dtype": "fp32", "shape": ["N", "C"], "role": "input"},
              {"name": "w", "dtype": "fp32", "shape": ["C"], "role": "input"},
              {"name": "out", "dtype": "fp32", "shape": ["N", "C"], "role": "output"},
              {"name": "ss", "dtype": "fp32", "shape": ["N"], "role": "output"},
              {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"},
              {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]
BLOCK_SHAPES = [{"name": "main", "N": 4096, "C": 4096}, {"name": "odd", "N": 5, "C": 1001}]


def block_rows(tmp: Path, source: str = BLOCK_ROWS):  # type: ignore[no-untyped-def]
    return spec_of(tmp, source, args=BLOCK_ARGS, shapes=BLOCK_SHAPES, grid=("N",))


def test_a_block_stride_loop_takes_vec_iterations_a_thread(tmp_path: Path) -> None:
    spec = block_rows(tmp_path)
    a = applied("vectorize_loops", spec)
    assert a.knobs[0].name == "PNCU_LOOP_VEC" and a.knobs[0].values == (1, 2, 4)
    assert len(a.sites) == 2  # the two shared loops, not the loop thread 0 runs alone
    four = rendered(spec, [a], PNCU_LOOP_VEC=4)
    assert ("if (reinterpret_cast<unsigned long long>(&x[(long long)row * C + (0)]) % "
            "alignof(pncu_lvvec<float, 4>) == 0) {") in four
    assert "for (int pncu_lvq = t; pncu_lvq < ((C) - (0)) / 4; pncu_lvq += blockDim.x) {" in four
    assert "for (int pncu_lvq = t; pncu_lvq < ((C) - (0)) / 4; pncu_lvq += 256) {" in four
    assert "const float v = pncu_lv_x.v[pncu_lvk];" in four
    assert ("*reinterpret_cast<pncu_lvvec<float, 4>*>(&out[(long long)row * C + (pncu_lvj)]) = "
            "pncu_lv_out;") in four
    assert "for (int j = (0) + ((C) - (0)) / 4 * 4 + t; j < (C); j += blockDim.x)" in four
    assert "} else\n    for (int j = t; j < C; j += blockDim.x) {" in four  # as written
    assert rendered(spec, [a], PNCU_LOOP_VEC=1) == BLOCK_ROWS


@pytest.mark.parametrize("old, new, why", [
    ("for (int j = t; j < C; j += 256)", "for (int j = 0; j < C; j += 1)",
     "not shared by threads"),
    ("for (int j = t; j < C; j += 256)", "for (int j = t; j < C; j += 128)",
     "not shared by threads"),
    ("        acc += v * v;\n", "        acc += v * v;\n        if (acc > 1e9f) break;\n",
     "breaks out"),
])
def test_vectorize_loops_refuses_loops_it_cannot_deal_in_chunks(tmp_path: Path, old: str,
                                                               new: str, why: str) -> None:
    source = BLOCK_ROWS.replace(old, new)
    got = applied("vectorize_loops", block_rows(tmp_path, source))
    assert len(got.sites) == 1  # the other loop is refused, for why:
    lone = source.replace("""    for (int j = t; j < C; j += blockDim.x) {
        const float v = x[(long long)row * C + j];
        acc += v * v;
    }
""", "")
    if "break" not in source:
        assert why in refused("vectorize_loops", block_rows(tmp_path, lone))


def test_a_loop_whose_stores_another_thread_reads_is_left_alone(tmp_path: Path) -> None:
    readback = BLOCK_ROWS.replace("        ss[row] = s;\n", "        ss[row] = s + out[row];\n")
    got = applied("vectorize_loops", block_rows(tmp_path, readback))
    assert [s.split(":")[0] for s in got.sites] == ["the loop at line 8"]


# --- on the CPU emulator ------------------------------------------------------------------

needs_cxx = pytest.mark.skipif(cuda_on_cpu.compiler() is None, reason="no C++ compiler")


@needs_cxx
@pytest.mark.parametrize("vec", [2, 4])
def test_the_chunks_compute_what_the_loop_did(tmp_path: Path, vec: int) -> None:
    spec = block_rows(tmp_path)
    a = applied("vectorize_loops", spec)
    text = rendered(spec, [a], PNCU_LOOP_VEC=vec)
    launch = {"grid": ["N"], "block": ["256"]}
    for dims in ({"N": 5, "C": 1000}, {"N": 5, "C": 1001}, {"N": 3, "C": 7}):  # aligned or not
        cuda_on_cpu.equivalent(spec, text, launch, {}, dims, tmp_path)


@needs_cxx
@pytest.mark.parametrize("team", [32, 64])
def test_after_row_team_the_teams_past_the_last_row_still_store_nothing(tmp_path: Path,
                                                                        team: int) -> None:
    spec = softmax(tmp_path)
    subject, base = next_round(spec, [applied("row_team", spec)], {"PNCU_TEAM": team}, tmp_path)
    a = by_name("vectorize_loops").apply(subject)
    assert isinstance(a, Applied), a
    built, _, _ = asm.assemble(base, [a], "moves 2", "")
    text = asm.instance(built, {"PNCU_LOOP_VEC": 4})
    assert "*reinterpret_cast<pncu_lvvec<float, 4>*>" not in text  # o is read back by
    for dims in ({"N": 5, "C": 1000}, {"N": 7, "C": 1003}):  # another loop: only the max's
        cuda_on_cpu.equivalent(spec, text, base.launch, {}, dims, tmp_path)  # loop vectorized
    assert [s.split(":")[0] for s in a.sites] == ["the loop at line 11"]


@needs_cxx
def test_a_guarded_store_keeps_its_guard_on_the_vector_store(tmp_path: Path) -> None:
    spec = row_scale(tmp_path)
    subject, base = next_round(spec, [applied("row_team", spec)], {"PNCU_TEAM": 64}, tmp_path)
    a = by_name("vectorize_loops").apply(subject)
    assert isinstance(a, Applied), a
    text = asm.instance(asm.assemble(base, [a], "moves 2", "")[0], {"PNCU_LOOP_VEC": 4})
    assert "if ((pncu_live)) *reinterpret_cast<pncu_lvvec<float, 4>*>" in text
    for dims in ({"N": 5, "C": 1000}, {"N": 9, "C": 1001}):
        cuda_on_cpu.equivalent(spec, text, base.launch, {}, dims, tmp_path)


ROW_SCALE = """extern "C" __global__ void k(const float* x, float* out, float* sums, int N, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    float s = 0.0f;
    for (int j = 0; j < C; ++j) s += x[(long long)r * C + j];
    for (int j = 0; j < C; ++j) out[(long long)r * C + j] = x[(long long)r * C + j] / s;
    sums[r] = s;
}
"""


def row_scale(tmp: Path):  # type: ignore[no-untyped-def]
    return softmax(tmp, ROW_SCALE)
