"""Triage when a library changes its kernels (issue 38): groups paired by call site (a swap),
one ranking of what moved the total. On applications recorded on an H200 whose kernels no one
here wrote (tests/fixtures/apps/library: examples/apps/cupy_steps.py under CuPy, cuBLAS, cub and
cuFFT; tests/fixtures/apps/torch_block: PyTorch) and on synthetic launch streams
(tests/synthetic_app.py) that plant what the recordings cannot vary: calls trading places,
renamed kernels of no known family, one iteration or ten."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from pragma_ncu.cli.main import cli
from pragma_ncu.triage.callsite import family, operations
from tests.synthetic_app import Launch, noisy, write_side

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "fixtures" / "apps"
LIBRARY = APPS / "library"


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["triage", *map(str, args)])


def triage_json(base: Path, new: Path) -> dict:
    result = run(base, new, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def swaps_of(data: dict) -> dict[tuple[str, ...], dict]:
    """The swaps by their BASE kernels' names."""
    return {tuple(g["name"] for g in k["swap"]["base"]): k for k in data["kernels"]
            if k["swapped"]}


def moved_most_first(data: dict) -> None:
    """The first row of the ranking moved the total most of anything in the report."""
    every = [abs(k["delta_us"]) for k in data["kernels"]] + \
        [g["total_us"] for g in data["added"] + data["removed"]]
    assert abs(data["changes"][0]["delta_us"]) == pytest.approx(max(every))
    sizes = [abs(c["delta_us"]) for c in data["changes"]]
    assert sizes == sorted(sizes, reverse=True)


# --- recorded pairs ------------------------------------------------------------------------------


def test_a_gemm_answered_by_another_kernel_and_an_extra_copy():
    """The issue's own case (mlp): NEW feeds the second GEMM a transposed activation through a
    copy. cuBLAS answers that call with a CUTLASS SIMT SGEMM instead of its split-K xmma pair:
    one swap (2 -> 1 kernels, the same time per call), and the copy, which moved the total
    most, leads the ranking as added, with its own bottleneck."""
    data = triage_json(LIBRARY / "mlp" / "base", LIBRARY / "mlp" / "new")
    assert data["exit_code"] == 1 and data["one_side"]["net_us"] == pytest.approx(317, rel=0.01)
    first = data["changes"][0]
    assert (first["kind"], first["name"]) == ("added", "cupy_copy__float32_float32")
    assert data["added"][0]["top_cause"] == "uncoalesced_access" and not data["removed"]
    (names, gemm), = swaps_of(data).items()
    assert all("xmma_gemm" in n for n in names) and len(names) == 2
    assert gemm["name"] == "cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>"
    assert gemm["verdict"] == "unchanged" and gemm["duration"]["basis"] == "launches"
    assert gemm["swap"]["base_us"] == pytest.approx(1794, rel=0.01)
    assert gemm["swap"]["new_us"] == pytest.approx(1757, rel=0.01)
    moved_most_first(data)
    text = " ".join(run(LIBRARY / "mlp" / "base", LIBRARY / "mlp" / "new").output.split())
    assert "1 swapped, 2 too noisy to decide, 4 unchanged, 1 added" in text
    assert "swap, another kernel for the same call, same time per call: was " \
        "sm80_xmma_gemm_f32f32" in text and "+1 (compute_fma -> compute_fma)" in text


def test_reductions_handed_to_cub_are_three_swaps():
    """reduce: CuPy's cub accelerator on. Each reduction call (the row max, the two row sums,
    the whole sum) is answered by a cub kernel, the whole sum by two: three swaps, all faster,
    nothing left added or removed."""
    data = triage_json(LIBRARY / "reduce" / "base", LIBRARY / "reduce" / "new")
    assert data["exit_code"] == 0 and not data["added"] and not data["removed"]
    swaps = [k for k in data["kernels"] if k["swapped"]]
    assert sorted(len(k["swap"]["new"]) for k in swaps) == [1, 1, 2]
    assert sorted(k["swap"]["base"][0]["name"] for k in swaps) == ["cupy_max", "cupy_sum",
                                                                    "cupy_sum"]  # two configs
    for k in swaps:
        assert k["verdict"] == "improvement" and all(g["name"].startswith("cub::")
                                                     for g in k["swap"]["new"])
    max_swap = swaps_of(data)[("cupy_max",)]
    assert "nan_handling_max" in max_swap["name"]  # the max call went to cub's max, not a sum
    assert data["changes"][0]["kind"] == "swapped"
    assert data["changes"][0]["delta_us"] == pytest.approx(-446, rel=0.02)
    moved_most_first(data)


def test_a_gemm_moved_to_tensor_cores_and_casts_answering_copies():
    """precision: fp16 GEMMs. The xmma FP32 GEMM -> nvjet on tensor cores (-37.5 ms, the first
    row), and the three float32 copies of each layer -> casts to fp16 and back (1 -> 2 kernels,
    the same time)."""
    data = triage_json(LIBRARY / "precision" / "base", LIBRARY / "precision" / "new")
    swaps = swaps_of(data)
    gemm = next(k for names, k in swaps.items() if "xmma_gemm" in names[0])
    assert gemm["name"] == "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"
    assert gemm["verdict"] == "improvement"
    assert gemm["bottleneck"] == {"base": "compute_fma", "new": "tensor_core"}
    copies = swaps[("cupy_copy__float32_float32",)]
    assert {g["name"] for g in copies["swap"]["new"]} == {"cupy_copy__float32_float16",
                                                          "cupy_copy__float16_float32"}
    assert data["changes"][0]["name"] == gemm["name"]
    assert data["changes"][0]["delta_us"] == pytest.approx(-37_500, rel=0.01)
    moved_most_first(data)


def test_an_fft_of_odd_length_swaps_both_transforms_for_bluestein_kernels():
    """fft: one sample more. cuFFT answers the forward and the inverse transform with the same
    Bluestein kernels: one swap of the two calls (they share kernels), slower; its pre- and
    post-processing kernels, whose names say nothing, stay added. The larger regression of
    CuPy's variance kernel leads."""
    data = triage_json(LIBRARY / "fft" / "base", LIBRARY / "fft" / "new")
    (names, fft), = swaps_of(data).items()
    assert sorted(n.split("<")[0] for n in names) == ["vector_fft_symm_c2r",
                                                      "vector_fft_symm_r2c"]
    assert fft["verdict"] == "regression" and len(fft["swap"]["new"]) == 5
    assert {g["name"].split("<")[0] for g in data["added"]} == {"preprocess_kernel",
                                                               "postprocess_kernel"}
    assert data["changes"][0]["name"].startswith("cupy_var_core")
    moved_most_first(data)


def test_markdown_and_junit_name_the_swaps():
    xmlschema = pytest.importorskip("xmlschema")
    base, new = LIBRARY / "precision" / "base", LIBRARY / "precision" / "new"
    md = run(base, new, "--format", "md").output
    assert "| swap " in md and "The library answered the same call with other kernels" in md
    junit = run(base, new, "--format", "junit").output
    xmlschema.XMLSchema(str(APPS.parent / "junit" / "junit.xsd")).validate(junit)


# --- synthetic launch streams: what pairs and what does not -----------------------------------


def stream(order: list[tuple[str, str]], iterations: int, rng: np.random.Generator,
           durations: dict[str, float] | None = None) -> list[Launch]:
    """`iterations` passes over `order` ((recorded row, kernel name) pairs), each launch a
    noisy duration (default 20 µs; `durations` by name)."""
    out = []
    draws = {name: noisy((durations or {}).get(name, 20_000.0), iterations, rng)
             for _, name in order}
    for i in range(iterations):
        out += [Launch(like, name, draws[name][i]) for like, name in order]
    return out


def pair(tmp_path: Path, base: list[Launch], new: list[Launch]) -> dict:
    return triage_json(write_side(tmp_path / "base", base), write_side(tmp_path / "new", new))


ANCHOR_A, ANCHOR_B = ("bandwidth_ok", "embed_tokens"), ("tiny_add", "residual_add")


def test_two_renamed_calls_that_trade_places_pair_by_what_they_do_not_where(tmp_path):
    """Acceptance 2: BASE runs a GEMM then a reduction between the same two kernels; NEW runs
    the reduction first, then the GEMM, both renamed. Position would pair them crosswise; their
    names say which is which."""
    rng = np.random.default_rng(1)
    base = stream([ANCHOR_A, ("fma_bound", "gemm_v1"), ("rowsum_warp", "row_sum_v1"),
                   ANCHOR_B], 10, rng)
    new = stream([ANCHOR_A, ("rowsum_warp", "row_sum_v2"), ("fma_bound", "gemm_v2"),
                  ANCHOR_B], 10, rng, {"gemm_v2": 30_000.0})
    data = pair(tmp_path, base, new)
    swaps = {k["swap"]["base"][0]["name"]: k["name"] for k in data["kernels"] if k["swapped"]}
    assert swaps == {"gemm_v1": "gemm_v2", "row_sum_v1": "row_sum_v2"}
    gemm = next(k for k in data["kernels"] if k["name"] == "gemm_v2")
    assert gemm["verdict"] == "regression" and data["exit_code"] == 1


def test_two_calls_that_trade_places_under_names_that_say_nothing_stay_apart(tmp_path):
    """The same with names of no known family: nothing but their order tells them apart, and
    order cannot when they trade places, so all four stay added and removed."""
    rng = np.random.default_rng(2)
    base = stream([ANCHOR_A, ("fma_bound", "stage_p"), ("rowsum_warp", "stage_q"), ANCHOR_B],
                  10, rng)
    new = stream([ANCHOR_A, ("rowsum_warp", "stage_r"), ("fma_bound", "stage_s"), ANCHOR_B],
                 10, rng)
    data = pair(tmp_path, base, new)
    assert data["summary"]["swapped"] == 0
    assert {g["name"] for g in data["removed"]} == {"stage_p", "stage_q"}
    assert {g["name"] for g in data["added"]} == {"stage_r", "stage_s"}


def test_a_gemm_gone_and_a_copy_come_at_one_place_are_two_changes(tmp_path):
    rng = np.random.default_rng(3)
    base = stream([ANCHOR_A, ("fma_bound", "sgemm_nn"), ANCHOR_B], 10, rng)
    new = stream([ANCHOR_A, ("copy_half", "copy_transposed"), ANCHOR_B], 10, rng)
    data = pair(tmp_path, base, new)
    assert data["summary"]["swapped"] == 0 and len(data["added"]) == len(data["removed"]) == 1


def test_kernels_trading_places_under_their_own_names_are_no_swap(tmp_path):
    rng = np.random.default_rng(4)
    base = stream([ANCHOR_A, ("fma_bound", "gemm"), ("rowsum_warp", "row_sum"), ANCHOR_B], 10,
                  rng)
    new = stream([ANCHOR_A, ("rowsum_warp", "row_sum"), ("fma_bound", "gemm"), ANCHOR_B], 10,
                 rng)
    data = pair(tmp_path, base, new)
    assert data["summary"]["swapped"] == 0 and not data["added"] and not data["removed"]
    assert {k["how"] for k in data["kernels"]} == {"same kernel"}


@pytest.mark.parametrize("iterations, swapped", [(10, 1), (1, 0)])
def test_a_renamed_kernel_of_no_known_family_pairs_by_repetition(tmp_path, iterations, swapped):
    """One renamed kernel at one place: ten iterations place it ten times (a swap, its time
    compared per call); once is not evidence enough for names that say nothing."""
    rng = np.random.default_rng(5)
    base = stream([ANCHOR_A, ("fma_bound", "stage_old"), ANCHOR_B], iterations, rng)
    new = stream([ANCHOR_A, ("fma_bound", "stage_new"), ANCHOR_B], iterations, rng,
                 {"stage_new": 40_000.0})
    data = pair(tmp_path, base, new)
    assert data["summary"]["swapped"] == swapped
    if swapped:
        k = next(k for k in data["kernels"] if k["swapped"])
        assert k["verdict"] == "regression" and k["duration"]["delta_pct"] == \
            pytest.approx(100, rel=0.1)
        assert k["how"] == "call site: at the same place in the launch order 10 times"


def test_no_kernel_in_common_is_still_an_error(tmp_path):
    rng = np.random.default_rng(6)
    result = run(write_side(tmp_path / "b", stream([("fma_bound", "gemm_a")], 5, rng)),
                 write_side(tmp_path / "n", stream([("fma_bound", "gemm_b")], 5, rng)))
    assert result.exit_code == 2 and "no kernel in common" in result.output


def test_match_order_and_named_pairs_are_left_alone(tmp_path):
    rng = np.random.default_rng(7)
    base = stream([ANCHOR_A, ("fma_bound", "gemm_v1"), ANCHOR_B], 10, rng)
    new = stream([ANCHOR_A, ("fma_bound", "gemm_v2"), ANCHOR_B], 10, rng)
    b, n = write_side(tmp_path / "base", base), write_side(tmp_path / "new", new)
    data = json.loads(run(b, n, "--format", "json", "--match", "order").output)
    assert data["summary"]["swapped"] == 0


# --- what a kernel does, by its name ----------------------------------------------------------


@pytest.mark.parametrize("name, expected", [
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_"
     "alignc4_execute_kernel__5x_cublas", "gemm"),
    ("nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", "gemm"),
    ("cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>", "gemm"),
    ("cupy_copy__float32_float16", "copy"),
    ("at::vectorized_elementwise_kernel<8, at::bfloat16_copy_kernel_cuda(at::TensorIteratorBase &)"
     "::[lambda(float) (instance 1)], std::array<char *, 2>>", "copy"),
    ("at::vectorized_elementwise_kernel<8, at::CUDAFunctor_add<c10::BFloat16>, "
     "std::array<char *, 3>>", "elementwise"),
    ("<unnamed>::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11, 0, 0>", "softmax"),
    ("cupy_max", "reduce"), ("cupy_sum", "reduce"),
    ("cub::DeviceReduceSingleTileKernel<cub::policy_hub<float, unsigned int, "
     "cuda::std::plus<void>>::Policy1000, float *>", "reduce"),
    ("multi_bluestein_fft<81, EPT<9>, 32, 0, 14, 0, 2, 1, unsigned int, float>", "fft"),
    ("cupy_maximum__float32_float_float32", None), ("preprocess_kernel<float, unsigned int, 2>",
                                                   None),
    ("at::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, 0>", "norm"),
])
def test_a_kernel_name_says_its_family(name, expected):
    assert family(name) == expected


def test_operations_read_one_spelling_each():
    assert operations("cupy_sum") == operations("cub::DeviceReduceKernel<cuda::std::plus<void>>")
    assert operations("cub::X<fixed_size_segmented_reduce::policy_hub<float, int, "
                      "nan_handling_max<float>>>") == {"max"}
    assert operations("cupy_copy__float32_float16") == frozenset()


def test_launches_without_a_duration_form_no_swap():
    """A CPU collector measures no launch's duration: a call has no time to be judged by, so
    its groups stay added and removed (the one-side rule, on the timing runs, counts them)."""
    from pragma_ncu.profile.profiles import KernelProfile
    from pragma_ncu.triage.callsite import find_swaps
    from pragma_ncu.triage.groups import KernelGroup, LaunchConfig

    def group(name: str, indices: list[int], duration: float | None) -> KernelGroup:
        launches = tuple(KernelProfile(name, "", i, {}) for i in indices)
        return KernelGroup(name, name, LaunchConfig(), launches, (duration,) * len(indices))

    anchor = (group("embed", [0, 3, 6], 5.0), group("embed", [0, 3, 6], 5.0))
    old, new = group("sgemm_v1", [1, 4, 7], None), group("sgemm_v2", [1, 4, 7], None)
    assert find_swaps([anchor], [old], [new]) == []
    timed_old, timed_new = group("sgemm_v1", [1, 4, 7], 10.0), group("sgemm_v2", [1, 4, 7], 12.0)
    (swap,) = find_swaps([anchor], [timed_old], [timed_new])
    assert swap.base_samples == (10.0,) * 3 and swap.new_samples == (12.0,) * 3
