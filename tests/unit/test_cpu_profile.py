"""Profiling CPU kernels: the generated driver, collector choice, cachegrind and perf into the
project's Profile, and the errors on the way. Real compiler and valgrind runs where this machine
has them; perf reads no hardware counters here, so its path runs on hand-written output."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pragma_ncu.backends.cpu.collect import (
    Collector,
    Completed,
    CpuProfileError,
    cachegrind,
    choose_collector,
    collect,
    perf_csv,
    perf_stat,
    subprocess_run,
)
from pragma_ncu.backends.cpu.collect.driver import driver_source, fill_range
from pragma_ncu.backends.cpu.collect.normalize import (
    event_name,
    from_cachegrind,
    from_perf,
    is_kernel_function,
    topdown_name,
)
from pragma_ncu.infra.errors import SpecError
from pragma_ncu.profile.profiles import profile_from_json
from pragma_ncu.spec.model import ResolvedArg, ResolvedLaunch, ResolvedTask

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "cpu"
CC = shutil.which("cc") or shutil.which("gcc")
VALGRIND = shutil.which("valgrind")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")
CACHEGRIND_METRICS = {
    "Ir", "I1mr", "ILmr", "Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw", "Bc", "Bi", "Bcm", "Bim",
    "D1_miss_rate", "LL_data_miss_rate", "branch_mispredict_rate", "D1_MPKI", "LL_MPKI",
}

# A kernel that checks what the driver hands it and exits with a code naming what was wrong.
PROBE_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static int calls = 0;
void probe(const float *x, double *y, const int32_t *idx, float *out, float a, int32_t n)
{
    int nonzero = 0;
    double sum = 0;
    if (((uintptr_t)x | (uintptr_t)y | (uintptr_t)idx | (uintptr_t)out) % 64) exit(11);
    for (int i = 0; i < n; i++) {
        if (x[i] < 0.0f || x[i] >= 2.0f) exit(12);   /* normal(1, 0.5) -> [0, 2) */
        if (y[i] < -1.0 || y[i] >= 3.0) exit(13);    /* uniform(-1, 3) */
        if (idx[i] < 0 || idx[i] >= n) exit(14);     /* randint(0, n) */
        if (calls == 0 && out[i] != 0.0f) exit(15);  /* outputs start zeroed */
        nonzero += x[i] != 0.0f;
        sum += x[i] + y[i] + idx[i];
        out[i] = a * x[idx[i]];
    }
    if (nonzero == 0) exit(16);
    if (a != 2.5f) exit(17);
    fprintf(stderr, "call %d sum %.6f\n", ++calls, sum);
}
"""
SAXPY_C = """\
void saxpy(const float *x, float *y, float a, int n)
{
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
}
"""


def _task(name: str, args: tuple[ResolvedArg, ...], dims: dict[str, int]) -> ResolvedTask:
    return ResolvedTask(name, "s", dims, {}, ResolvedLaunch((1, 1, 1), (1, 1, 1), 0), args,
                        sum(a.bytes_moved for a in args), None)


def _probe_task(n: int) -> ResolvedTask:
    return _task("probe", (
        ResolvedArg("x", "fp32", "input", (n,), 4, init=("normal", 1.0, 0.5)),
        ResolvedArg("y", "fp64", "inout", (n,), 8, init=("uniform", -1.0, 3.0)),
        ResolvedArg("idx", "int32", "input", (n,), 4, init=("randint", 0.0, float(n))),
        ResolvedArg("out", "fp32", "output", (n,), 4),
        ResolvedArg("a", "fp32", "scalar", (), 4, value=2.5),
        ResolvedArg("n", "int32", "scalar", (), 4, value=n)), {"n": n})


def _saxpy_task(n: int) -> ResolvedTask:
    return _task("saxpy", (
        ResolvedArg("x", "fp32", "input", (n,), 4, init=("normal", 0.0, 1.0)),
        ResolvedArg("y", "fp32", "inout", (n,), 4, init=("normal", 0.0, 1.0)),
        ResolvedArg("a", "fp32", "scalar", (), 4, value=2.0),
        ResolvedArg("n", "int32", "scalar", (), 4, value=n)), {"n": n})


def _shared_object(folder: Path, name: str, source: str) -> Path:
    assert CC is not None
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.c").write_text(source)
    so = folder / f"lib{name}.so"
    subprocess.run([CC, "-O2", "-g", "-shared", "-fPIC", f"{name}.c", "-o", so.name],
                   cwd=folder, check=True)
    return so


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if CC is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("kernels")
    return {"probe": _shared_object(folder, "probe", PROBE_C),
            "saxpy": _shared_object(folder, "saxpy", SAXPY_C)}


# --- the driver ---------------------------------------------------------------------------------

def test_driver_declares_the_prototype_from_the_arg_dtypes() -> None:
    text = driver_source(_probe_task(8), "probe")
    assert "#include <stdint.h>" in text
    assert "void probe(float *, double *, int32_t *, float *, float, int32_t);" in text
    assert "probe(a0, a1, a2, a3, a4, a5);" in text


@pytest.mark.parametrize(("init", "expected"), [
    (("normal", 1.0, 0.5), (0.0, 2.0)), (("uniform", -1.0, 3.0), (-1.0, 3.0)),
    (("normal", 0.0, 0.0), (0.0, 1.0)),  # a zero spread would fill zeros only
])
def test_fill_range_of_float_inits(init: tuple[str, float, float],
                                   expected: tuple[float, float]) -> None:
    assert fill_range(ResolvedArg("x", "fp32", "input", (4,), 4, init=init)) == expected


def test_fill_range_of_integer_inits_is_never_zeros_only() -> None:
    assert fill_range(ResolvedArg("i", "int32", "input", (4,), 4,
                                  init=("randint", 0, 1))) == (0.0, 2.0)
    assert fill_range(ResolvedArg("i", "int8", "input", (4,), 1,
                                  init=("randint", -500, 500))) == (-128.0, 128.0)
    assert fill_range(ResolvedArg("i", "int32", "input", (4,), 4)) == (0.0, 100.0)


def test_driver_rejects_what_c_cannot_call() -> None:
    with pytest.raises(SpecError, match="'probe-1'"):
        driver_source(_probe_task(8), "probe-1")
    half = _task("h", (ResolvedArg("x", "fp16", "input", (4,), 2),), {})
    with pytest.raises(SpecError, match=r"args\[0\]\.dtype.*'fp16'"):
        driver_source(half, "h")


@needs_cc
def test_driver_compiles_runs_and_fills_as_the_spec_says(kernels: dict[str, Path],
                                                        tmp_path: Path) -> None:
    from pragma_ncu.backends.cpu.collect import build_driver

    assert CC is not None
    driver = build_driver(_probe_task(1000), str(kernels["probe"]), "probe", tmp_path, cc=CC)
    runs = {reps: subprocess.run([str(driver), str(reps)], capture_output=True, text=True,
                                 cwd=tmp_path) for reps in (0, 3)}
    assert (runs[0].returncode, runs[0].stdout, runs[0].stderr) == (0, "", "")
    three = runs[3]
    assert three.returncode == 0, f"the probe kernel exited {three.returncode}"
    assert three.stdout == ""
    lines = three.stderr.splitlines()
    assert [ln.split()[:2] for ln in lines] == [["call", "1"], ["call", "2"], ["call", "3"]]
    again = subprocess.run([str(driver), "1"], capture_output=True, text=True, cwd=tmp_path)
    assert again.stderr.splitlines()[0] == lines[0]  # the same inputs every run
    assert subprocess.run([str(driver), "-1"], capture_output=True).returncode == 2


# --- cachegrind -------------------------------------------------------------------------------

@pytest.mark.skipif(VALGRIND is None or CC is None, reason="needs valgrind and a C compiler")
def test_real_cachegrind_counts_the_kernel_per_call(kernels: dict[str, Path],
                                                   tmp_path: Path) -> None:
    assert CC is not None and VALGRIND is not None
    source = str(kernels["saxpy"].with_name("saxpy.c"))
    chosen = Collector("cachegrind", "test")
    ir: dict[tuple[int, int], float] = {}
    for n, reps in ((4096, 1), (4096, 3), (16384, 3)):
        out = tmp_path / f"n{n}r{reps}"
        profile = collect(_saxpy_task(n), str(kernels["saxpy"]), "saxpy", source, out, cc=CC,
                          perf=None, valgrind=VALGRIND, collector=chosen, reps=reps)
        kernel = profile.kernels[0]
        value = kernel.value("Ir")
        assert value is not None
        ir[n, reps] = value
        assert set(kernel.metrics) == CACHEGRIND_METRICS
        assert {h.file.rsplit("/", 1)[-1] for h in kernel.hotspots} == {"saxpy.c"}
    assert ir[4096, 1] > 4096  # the loop runs n times
    # the driver's fill loop is left out: per call, one call and three calls agree
    assert ir[4096, 3] == pytest.approx(ir[4096, 1], rel=0.01)
    assert 3.5 < ir[16384, 3] / ir[4096, 3] < 4.5  # linear in n
    saved = profile_from_json(json.loads((out / "profile.json").read_text()))
    assert saved == profile
    assert profile.reader == "cachegrind" and Path(str(profile.report)).is_file()
    c = profile.collection
    assert (c["target"], c["collector"], c["simulated"], c["reps"]) == ("cpu", "cachegrind",
                                                                        True, 3)
    assert c["tool_version"].startswith("valgrind")
    top = kernel.hotspots[0]
    assert top.text == "y[i] += a * x[i];" and top.instructions == top.samples > 16384


def test_recorded_cachegrind_into_per_call_metrics_and_hotspots() -> None:
    cg = cachegrind.parse(gzip.decompress((FIX / "cachegrind.gather.out.gz").read_bytes())
                          .decode())
    kernel = from_cachegrind(cg, "main", str(FIX / "gather.c"), reps=20)
    assert set(kernel.metrics) == CACHEGRIND_METRICS
    main = [ln for ln in cg.lines if ln.function == "main"]
    assert kernel.value("Ir") == pytest.approx(sum(ln.counts.get("Ir", 0) for ln in main) / 20)
    assert kernel.metrics["Ir"].unit == "inst" and kernel.metrics["Bcm"].unit == "mispredict"
    assert kernel.metrics["D1_MPKI"].unit == "miss/kinst"
    d1 = kernel.value("D1_miss_rate")
    assert d1 is not None and 0.4 < d1 < 0.7  # the scattered read misses, the write streams
    t = {e: kernel.value(e) or 0.0 for e in ("Bc", "Bi", "Bcm", "Bim")}
    assert kernel.value("branch_mispredict_rate") == pytest.approx(
        (t["Bcm"] + t["Bim"]) / (t["Bc"] + t["Bi"]))
    top = kernel.hotspots[0]
    assert (top.file, top.line, top.text) == ("gather.c", 12, "s += a[(i * 17) & (n - 1)];")
    assert list(top.stalls) == ["D1 misses", "LL misses"] and top.stalls["D1 misses"] > 10**6
    assert top.samples == round(top.instructions) and 1 <= len(kernel.hotspots) <= 10


def test_cachegrind_events_not_simulated_are_left_out_not_zero() -> None:
    text = "events: Ir\nfl=k.c\nfn=k\n3 40\nfl=driver.c\nfn=other\n9 1000\nsummary: 1040\n"
    kernel = from_cachegrind(cachegrind.parse(text), "k", "k.c", reps=2)
    assert {n: m.value for n, m in kernel.metrics.items()} == {"Ir": 20.0}
    assert kernel.hotspots[0].stalls == {}
    with pytest.raises(ValueError, match="no cachegrind line belongs to 'nope'"):
        from_cachegrind(cachegrind.parse(text), "nope", "nope.c", reps=1)


# --- collector choice -------------------------------------------------------------------------

@dataclass
class FakeRun:
    """Answers each command by the first rule whose key is in the joined argv."""

    rules: list[tuple[str, Callable[[list[str], Path | None], tuple[int, str, str]]]]
    calls: list[list[str]] = field(default_factory=list)

    def __call__(self, argv: Sequence[str], timeout_s: float, cwd: Path | None) -> Completed:
        cmd = [str(a) for a in argv]
        self.calls.append(cmd)
        line = " ".join(cmd)
        for key, answer in self.rules:
            if key in line:
                rc, out, err = answer(cmd, cwd)
                return subprocess.CompletedProcess(cmd, rc, out, err)
        raise AssertionError(f"unexpected command {line}")


def _say(rc: int, out: str = "", err: str = "") -> Callable[[list[str], Path | None],
                                                             tuple[int, str, str]]:
    return lambda cmd, cwd: (rc, out, err)


NOT_SUPPORTED = "<not supported>,,cycles,0,100.00,,\n<not supported>,,instructions,0,100.00,,\n"
COUNTED = "<not supported>,,cycles,0,100.00,,\n1234,,instructions:u,500,100.00,,\n"


def test_unsupported_counters_choose_cachegrind_and_say_why() -> None:
    chosen = choose_collector("perf", "valgrind", FakeRun([("stat", _say(0, "", NOT_SUPPORTED))]))
    assert chosen.name == "cachegrind"
    assert "cycles <not supported>" in chosen.reason


def test_a_counted_event_chooses_perf() -> None:
    assert choose_collector("perf", None, FakeRun([("stat", _say(0, "", COUNTED))])).name == "perf"


def test_without_counters_or_valgrind_there_is_no_collector() -> None:
    chosen = choose_collector("perf", None, FakeRun([("stat", _say(0, "", NOT_SUPPORTED))]))
    assert chosen.name == "none" and "valgrind is not installed" in chosen.reason
    refused = FakeRun([("stat", _say(255, "", "Error: Access to performance monitoring "
                                              "and observability operations is limited."))])
    assert "exit 255" in choose_collector("perf", "vg", refused).reason
    assert choose_collector(None, None).reason.startswith("perf is not installed")


def test_no_collector_is_an_error_naming_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(CpuProfileError, match=r"perf is not installed.*apt-get install valgrind"):
        collect(_saxpy_task(8), "x.so", "saxpy", "k.c", tmp_path, cc="cc", perf=None,
                valgrind=None)


# --- perf, end to end on hand-written output ----------------------------------------------------

# Hand-written in `perf stat -x,`'s documented layout (value, unit, event, run time,
# pcnt-running, metric value, metric unit); NOT recordings: no machine here exposes hardware
# counters. Four calls; the init-only run counts the fill that the subtraction removes.
PERF_FULL = """\
4000000,,cpu_core/cycles/,5000000,100.00,,
8000000,,instructions:u,5000000,100.00,2.00,insn per cycle
1100000,,branches,5000000,100.00,,
2000,,branch-misses,2500000,50.00,0.18,of all branches
<not supported>,,cache-references,0,100.00,,
5.00,msec,task-clock,5000000,100.00,0.99,CPUs utilized
"""
PERF_INIT = """\
400000,,cpu_core/cycles/,1000000,100.00,,
800000,,instructions:u,1000000,100.00,2.00,insn per cycle
100000,,branches,1000000,100.00,,
400,,branch-misses,500000,50.00,0.40,of all branches
<not supported>,,cache-references,0,100.00,,
1.00,msec,task-clock,1000000,100.00,0.99,CPUs utilized
"""
PERF_TOPDOWN_L1 = """\
20000000,,slots,5000000,100.00,,
4000000,,topdown-retiring,5000000,100.00,20.0,% tma_retiring
,,,,,12.3,% tma_frontend_bound
,,,,,7.7,% tma_bad_speculation
,,,,,60.0,% tma_backend_bound
"""


def _perf_run(topdown_l1: tuple[int, str]) -> FakeRun:
    def stat(cmd: list[str], cwd: Path | None) -> tuple[int, str, str]:
        assert cwd is not None and (cwd / "driver.c").is_file()
        return 0, "", PERF_INIT if cmd[-1] == "0" else PERF_FULL

    return FakeRun([
        ("--version", _say(0, "perf version 6.1\n")),
        ("-M TopdownL1", _say(topdown_l1[0], "", topdown_l1[1])),
        ("-M TopdownL2", _say(1, "", "Cannot find metric or group `TopdownL2'\n")),
        ("stat -x, -e", stat),
        ("driver.c -o driver", _say(0)),
    ])


def test_perf_end_to_end_subtracts_init_and_divides_by_reps(tmp_path: Path) -> None:
    (tmp_path / "libk.so").write_bytes(b"")
    run = _perf_run((0, PERF_TOPDOWN_L1))
    profile = collect(_saxpy_task(8), str(tmp_path / "libk.so"), "saxpy", "k.c", tmp_path / "p",
                      cc="cc", perf="perf", valgrind=None, collector=Collector("perf", "test"),
                      reps=4, run=run)
    k = profile.kernels[0]
    assert k.value("cycles") == 900000 and k.value("instructions") == 1800000
    assert k.value("IPC") == 2.0 and k.value("branch-misses") == 400
    assert k.metrics["task-clock"].unit == "msec" and k.value("task-clock") == 1.0
    assert "cache-references" not in k.metrics  # missing, never zero
    assert {n: k.value(n) for n in k.metrics if n.startswith("tma_")} == {
        "tma_retiring": 20.0, "tma_frontend_bound": 12.3, "tma_bad_speculation": 7.7,
        "tma_backend_bound": 60.0}
    c = profile.collection
    assert c["missing"] == ["cache-references"] and c["multiplexed"] == {"branch-misses": 50.0}
    assert (c["collector"], c["simulated"], c["tool_version"]) == ("perf", False,
                                                                   "perf version 6.1")
    assert c["topdown_groups"] == ["TopdownL1"] and "TopdownL2" in c["topdown_unavailable"]
    assert profile.reader == "perf" and (tmp_path / "p" / "perf_stat.csv").read_text() == \
        PERF_FULL
    assert (tmp_path / "p" / "profile.json").is_file()
    stats = [cmd for cmd in run.calls if "-e" in cmd]
    assert [cmd[-1] for cmd in stats] == ["4", "0"]
    assert "LLC-load-misses" in stats[0][stats[0].index("-e") + 1]


def test_perf_without_topdown_metrics_goes_on(tmp_path: Path) -> None:
    (tmp_path / "libk.so").write_bytes(b"")
    run = _perf_run((129, "Cannot find metric or group `TopdownL1'\n"))
    profile = collect(_saxpy_task(8), str(tmp_path / "libk.so"), "saxpy", "k.c", tmp_path,
                      cc="cc", perf="perf", valgrind=None, collector=Collector("perf", "t"),
                      reps=4, run=run)
    assert not profile.kernels[0].group("tma_")
    assert "Cannot find metric" in profile.collection["topdown_unavailable"]["TopdownL1"]
    assert not any("TopdownL2" in cmd for cmd in run.calls)


def test_raw_topdown_slots_become_percentages_with_level_2_siblings() -> None:
    raw = perf_stat.parse_csv(
        "1000,,slots,1,100.00,,\n300,,topdown-retiring,1,100.00,,\n"
        "100,,topdown-bad-spec,1,100.00,,\n200,,topdown-fe-bound,1,100.00,,\n"
        "400,,topdown-be-bound,1,100.00,,\n100,,topdown-heavy-ops,1,100.00,,\n"
        "250,,topdown-mem-bound,1,100.00,,\n")
    k, _ = from_perf(perf_stat.parse_csv(PERF_FULL), None, "k", 1, topdown=[raw])
    assert k.value("tma_retiring") == 30.0 and k.value("tma_backend_bound") == 40.0
    assert k.value("tma_light_operations") == 20.0 and k.value("tma_core_bound") == 15.0
    assert k.value("cycles") == 4000000  # no init-only run: nothing subtracted


@pytest.mark.parametrize(("function", "mine"), [
    ("conv1d", True), ("conv1d._omp_fn.0", True), ("conv1d.part.0", True),
    ("conv1d(float*, int)", True), ("conv1d_ref", False), ("main", False),
])
def test_kernel_functions_include_gcc_outlines(function: str, mine: bool) -> None:
    assert is_kernel_function(function, "conv1d") is mine


@pytest.mark.parametrize(("text", "name"), [
    ("% tma_retiring", "tma_retiring"), ("Retiring", "tma_retiring"),
    ("retiring", "tma_retiring"), ("topdown-retiring", "tma_retiring"),
    ("frontend bound", "tma_frontend_bound"), ("topdown-bad-spec", "tma_bad_speculation"),
    ("tma_fetch_bandwidth", "tma_fetch_bandwidth"), ("insn per cycle", None),
])
def test_topdown_names_across_perf_versions(text: str, name: str | None) -> None:
    assert topdown_name(text) == name


@pytest.mark.parametrize(("event", "name"), [
    ("cpu_core/cycles/", "cycles"), ("instructions:u", "instructions"),
    ("cpu_atom/branch-misses/u", "branch-misses"), ("L1-dcache-loads", "L1-dcache-loads"),
])
def test_event_names_lose_pmu_and_modifiers(event: str, name: str) -> None:
    assert event_name(event) == name


def test_perf_csv_keeps_count_lines_only() -> None:
    assert perf_csv("driver: oops, bad, thing\n" + PERF_TOPDOWN_L1).splitlines() == \
        PERF_TOPDOWN_L1.splitlines()


# --- errors -------------------------------------------------------------------------------------

@needs_cc
def test_a_driver_that_does_not_link_is_an_error_with_the_compiler_message(
        kernels: dict[str, Path], tmp_path: Path) -> None:
    assert CC is not None
    with pytest.raises(CpuProfileError, match=r"did not compile(.|\n)*missing_kernel"):
        collect(_saxpy_task(8), str(kernels["saxpy"]), "missing_kernel", "k.c", tmp_path,
                cc=CC, perf=None, valgrind="valgrind", collector=Collector("cachegrind", "t"))


def _real_cc_then(valgrind: Callable[[list[str], Path | None], tuple[int, str, str]]
                  ) -> FakeRun:
    def cc(cmd: list[str], cwd: Path | None) -> tuple[int, str, str]:
        proc = subprocess_run(cmd, 60, cwd)
        return proc.returncode, proc.stdout, proc.stderr

    return FakeRun([("--tool=cachegrind", valgrind), ("--version", _say(0, "valgrind-3.19.0")),
                    ("driver.c", cc)])


@needs_cc
def test_a_failing_collector_is_an_error_with_its_exit_code_and_stderr(
        kernels: dict[str, Path], tmp_path: Path) -> None:
    assert CC is not None
    run = _real_cc_then(_say(1, "", "==1== fatal: cannot read the debug info\n"))
    with pytest.raises(CpuProfileError, match=r"cachegrind failed \(exit 1\)(.|\n)*debug info"):
        collect(_saxpy_task(8), str(kernels["saxpy"]), "saxpy", "k.c", tmp_path, cc=CC,
                perf=None, valgrind="valgrind", collector=Collector("cachegrind", "t"), run=run)


@needs_cc
def test_an_empty_cachegrind_file_is_an_error(kernels: dict[str, Path], tmp_path: Path) -> None:
    assert CC is not None

    def empty(cmd: list[str], cwd: Path | None) -> tuple[int, str, str]:
        out = next(a for a in cmd if a.startswith("--cachegrind-out-file="))
        Path(out.split("=", 1)[1]).write_text("")
        return 0, "", ""

    with pytest.raises(CpuProfileError, match="cachegrind output .*cachegrind.out is empty"):
        collect(_saxpy_task(8), str(kernels["saxpy"]), "saxpy", "k.c", tmp_path, cc=CC,
                perf=None, valgrind="valgrind", collector=Collector("cachegrind", "t"),
                run=_real_cc_then(empty))
