"""Real runs on a GPU (skipped without one): verification, fault statuses, references, timing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.backends.cuda import build as cuda_build
from pragma_ncu.backends.cuda.bench import run_bench
from pragma_ncu.build import task as tasks
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.toolchain import find_nvcc
from pragma_ncu.measure.measurement import Status
from pragma_ncu.spec.file import load_spec
from pragma_ncu.spec.model import Reference
from pragma_ncu.worker.protocol import TimingConfig

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.toml"))
QUICK = TimingConfig(budget_ms=20.0, min_reps=10)


@pytest.fixture(scope="module")
def settings(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_settings().with_(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_verifies_at_odd_shape(name: str, runner, settings) -> None:  # type: ignore[no-untyped-def]
    spec = load_spec(ROOT / "examples" / f"{name}.toml")
    report = run_bench(spec, [spec.shape_named("odd")], settings, runner, timing=QUICK)
    m = report.rows[0].measurement
    assert m.status is Status.OK, m.message
    assert [c.phase for c in m.checks] == ["verify", "reverify"]
    assert m.timing is not None and m.timing.median_us > 0


@pytest.mark.parametrize("fault,expected", [
    ("skip_last", Status.UNWRITTEN_OUTPUT), ("oob_write", Status.OUT_OF_BOUNDS_WRITE),
    ("mutate_input", Status.INPUT_MUTATED), ("wrong_answer", Status.WRONG_ANSWER),
    ("hang", Status.TIMEOUT), ("scale", Status.OK),
])
def test_planted_fault_gets_its_status(fault: str, expected: Status, runner, settings) -> None:  # type: ignore[no-untyped-def]
    spec = load_spec(ROOT / "examples" / "faults" / f"{fault}.toml")
    runner.timeout_s = 8.0
    try:
        report = run_bench(spec, [spec.shape_named("odd")], settings, runner, timing=QUICK)
    finally:
        runner.timeout_s = 60.0
    assert report.rows[0].measurement.status is expected, report.rows[0].measurement.message


def test_illegal_address_is_runtime_error_and_next_candidate_runs(runner, settings,  # type: ignore[no-untyped-def]
                                                                  tmp_path: Path) -> None:
    src = tmp_path / "wild.cu"
    src.write_text('extern "C" __global__ void wild(const float* x, float* y, int n) {'
                   ' int i = blockIdx.x * blockDim.x + threadIdx.x;'
                   ' if (i < n) y[i + (1ll << 40)] = x[i]; }')
    spec_text = (ROOT / "examples" / "faults" / "scale.toml").read_text().replace(
        'name = "scale"', 'name = "wild"').replace("reference.py:scale",
                                                   str(ROOT / "examples/faults/reference.py")
                                                   + ":scale")
    (tmp_path / "wild.toml").write_text(spec_text)
    wild = load_spec(tmp_path / "wild.toml", src)
    report = run_bench(wild, [wild.shape_named("odd")], settings, runner, timing=QUICK)
    assert report.rows[0].measurement.status is Status.RUNTIME_ERROR
    assert "ILLEGAL_ADDRESS" in report.rows[0].measurement.message
    scale = load_spec(ROOT / "examples" / "faults" / "scale.toml")
    again = run_bench(scale, [scale.shape_named("odd")], settings, runner, timing=QUICK)
    assert again.rows[0].measurement.status is Status.OK


@pytest.mark.parametrize("name", ["silu_and_mul", "fused_add_rmsnorm", "max_reduce"])
def test_original_kernel_as_reference(name: str, runner, settings) -> None:  # type: ignore[no-untyped-def]
    """Without a NumPy reference the original kernel is the reference; a variant with other
    parameters must match it (inouts included)."""
    spec = replace(load_spec(ROOT / "examples" / f"{name}.toml"), reference=Reference(None))
    device = runner.hello()
    nvcc = find_nvcc(settings)
    original, harness = cuda_build.build_with_harness(spec, device.arch, nvcc, settings)
    variant, _ = cuda_build.build_with_harness(spec, device.arch, nvcc, settings, {"BLOCK": 128})
    shape = spec.shape_named("odd")
    orig_ref = tasks.kernel_ref(original, spec.resolve(shape))
    req = tasks.eval_request(spec, spec.resolve(shape, {"BLOCK": 128}), variant, harness,
                             original=orig_ref, timing=None)
    m = runner.evaluate(req)
    assert m.status is Status.OK, m.message
    assert all(o.bad == 0 for c in m.checks for o in c.outputs)


def test_timing_is_repeatable(runner, settings) -> None:  # type: ignore[no-untyped-def]
    spec = load_spec(ROOT / "examples" / "silu_and_mul.toml")
    shape = spec.shape_named("llama-7b")
    medians = []
    for _ in range(3):
        m = run_bench(spec, [shape], settings, runner).rows[0].measurement
        assert m.timing is not None and m.timing.mode == "events"
        medians.append(m.timing.median_us)
    assert (max(medians) - min(medians)) / min(medians) < 0.02, medians


def test_retest_timing_keeps_its_samples(runner, settings) -> None:  # type: ignore[no-untyped-def]
    """The re-test asks for every sample (the acceptance rule compares them): per launch in
    event mode, per graph replay below 10 µs."""
    spec = load_spec(ROOT / "examples" / "silu_and_mul.toml")
    for name in ("llama-7b", "odd"):
        cfg = TimingConfig(budget_ms=20.0, min_reps=10, keep_samples=True)
        m = run_bench(spec, [spec.shape_named(name)], settings, runner,
                      timing=cfg).rows[0].measurement
        assert m.timing is not None and len(m.timing.samples_us) == m.timing.reps, name
        assert min(m.timing.samples_us) == m.timing.min_us
        plain = run_bench(spec, [spec.shape_named(name)], settings, runner,
                          timing=QUICK).rows[0].measurement
        assert plain.timing is not None and plain.timing.samples_us == ()
