"""The CPU target's part of `doctor`: the C and C++ compilers that build its kernels, and the
profilers that diagnose them: Linux perf where it can read the CPU's hardware counters, else
valgrind's cachegrind, which simulates the caches and branches instead (what a machine without
a GPU, a VM or a container, usually has). Each check says whether the tool was found, its
version, what works without it, and the fix."""

from __future__ import annotations

from pragma_ncu.backends.cpu.collect import (
    INSTALL_HINT,
    PROBE_TIMEOUT_S,
    Run,
    perf_problem,
    subprocess_run,
    version_line,
)
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import Check

NO_COMPILER = ("C/C++ kernels cannot be built or run without it (CUDA kernels, and explain and "
               "triage of recorded reports, still work)")
COUNTERS = ("real counts (and top-down levels): run on bare metal or a VM that exposes the "
            "PMU, with kernel.perf_event_paranoid <= 2")


def run_checks(settings: Settings, profile_check: bool = True,
               run: Run = subprocess_run) -> list[Check]:
    """The compilers, perf (and, with `profile_check`, whether it reads hardware counters
    here: a `perf stat` of `true`) and valgrind."""
    checks = [_compiler("C compiler", settings.cc, "CC", "gcc or clang", run),
              _compiler("C++ compiler", settings.cxx, "CXX", "g++ or clang++", run)]
    perf, counts = _perf(settings.perf, run)
    checks.append(perf)
    if profile_check and perf.ok and settings.perf:
        problem = perf_problem(settings.perf, run)
        counts = problem is None
        checks.append(_counters(problem, settings.valgrind is not None))
    checks.append(_valgrind(settings.valgrind, counts, run))
    return checks


def _compiler(name: str, path: str | None, variable: str, names: str, run: Run) -> Check:
    fix = (f"{NO_COMPILER}: install {names} (e.g. `apt-get install build-essential`), or set "
           f"{variable}")
    if path is None:
        return Check(name, False, "not found", fix)
    return _found(name, path, run, fix)


def _found(name: str, path: str, run: Run, fix: str) -> Check:
    """The tool at `path` with the version it names, or missing where it does not run (a
    $CC or PRAGMA_NCU_PERF naming a file that is not there)."""
    proc = run([path, "--version"], PROBE_TIMEOUT_S, None)
    if proc.returncode == 127:  # subprocess_run's answer to a program that cannot start
        return Check(name, False, f"{path} does not run ({_first(proc.stderr)})", fix)
    version = version_line(proc)
    return Check(name, True, f"{version} ({path})" if version else
                 f"{path} (it names no version)")


def _first(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no output")


def _perf(path: str | None, run: Run) -> tuple[Check, bool | None]:
    """perf, found or not; whether it counts is the probe's to say (None: not probed)."""
    fix = ("C/C++ kernels are profiled with valgrind's cachegrind instead (simulated counts); "
           "for hardware counts install perf (linux-tools, `apt-get install linux-perf`) where "
           "the counters can be read")
    if path is None:
        return Check("perf", False, "not found", fix), False
    found = _found("perf", path, run, fix)
    return found, None if found.ok else False


def _counters(problem: str | None, valgrind: bool) -> Check:
    if problem is None:
        return Check("perf counters", True, "perf counts cycles and instructions here: CPU "
                     "kernels are profiled with perf stat (top-down levels where the CPU has "
                     "them)")
    if valgrind:
        fix = ("cachegrind (valgrind) is the fallback and is used instead: simulated caches and "
               f"branches, slower, no top-down levels. Nothing to do unless you need {COUNTERS}")
    else:
        fix = ("valgrind is not installed either: C/C++ kernels are verified and timed but not "
               f"profiled. Install valgrind for cachegrind's simulated counts; for {COUNTERS}")
    return Check("perf counters", False, problem, fix)


def _valgrind(path: str | None, counts: bool | None, run: Run) -> Check:
    found = _found("valgrind", path, run, INSTALL_HINT) if path is not None else None
    if found is None or not found.ok:
        detail = found.detail if found is not None else "not found"
        if counts:
            return Check("valgrind", False, detail, "not needed while perf reads the hardware "
                         "counters; cachegrind is the fallback where they cannot be read: "
                         "`apt-get install valgrind`")
        return Check("valgrind", False, detail, "where perf cannot read the hardware counters, "
                     "C/C++ kernels are verified and timed but not profiled (`profile` and "
                     "`explain foo.cpp` stop with exit 3, tune's rounds have no profile): "
                     f"{INSTALL_HINT}")
    role = ("cachegrind profiles C/C++ kernels here (perf reads no hardware counters)"
            if counts is False else "cachegrind is the fallback where perf cannot read the "
            "hardware counters")
    return Check("valgrind", True, f"{found.detail}; {role}")
