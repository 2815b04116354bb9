"""Profiling a CPU kernel: pick a collector, build the driver, run it, keep the raw output.

Where the CPU's hardware counters can be read, `perf stat` counts the kernel's events (a run
of `reps` calls less an init-only run, divided by `reps`) and `-M TopdownL1/L2` adds top-down
percentages. Where they cannot (virtual machines, containers, CI), valgrind's cachegrind
simulates the caches and branches, which is slower but deterministic. Either way the result is
a `Profile` saved as `profile.json` beside the collector's own output. Every subprocess goes
through an injected `Run`, so tests replace the tools with fakes.
"""

from __future__ import annotations

import logging
import os
import platform
import shlex
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pragma_ncu.backends.cpu.collect import perf_stat
from pragma_ncu.backends.cpu.collect.cachegrind import Cachegrind, CachegrindError
from pragma_ncu.backends.cpu.collect.cachegrind import parse as parse_cachegrind
from pragma_ncu.backends.cpu.collect.driver import driver_source
from pragma_ncu.backends.cpu.collect.normalize import (
    build_profile,
    event_name,
    from_cachegrind,
    from_perf,
)
from pragma_ncu.infra.errors import ToolchainError
from pragma_ncu.profile.profiles import Profile
from pragma_ncu.spec.model import ResolvedTask

log = logging.getLogger(__name__)
PROBE_EVENTS = ("cycles", "instructions")
PERF_EVENTS = ("cycles", "instructions", "branches", "branch-misses", "cache-references",
               "cache-misses", "L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads",
               "LLC-load-misses", "task-clock")
TOPDOWN_GROUPS = ("TopdownL1", "TopdownL2")
PROBE_TIMEOUT_S = 60.0
INSTALL_HINT = ("install valgrind (e.g. `apt-get install valgrind`) for simulated cache and "
                "branch counts, or run where perf can read the CPU's hardware counters (bare "
                "metal or a VM that exposes the PMU, kernel.perf_event_paranoid <= 2)")


class Completed(Protocol):
    """What a `Run` returns: subprocess.CompletedProcess or a test's fake."""

    @property
    def returncode(self) -> int: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...


Run = Callable[[Sequence[str], float, Path | None], Completed]  # (argv, timeout_s, cwd)


class CpuProfileError(ToolchainError):
    """A CPU kernel could not be profiled: no collector, a driver that does not compile, a
    collector that failed, or output that is empty or corrupt. The message says which."""


class UnsupportedInstruction(CpuProfileError):
    """The kernel uses an instruction valgrind cannot simulate (e.g. AVX-512 under
    valgrind 3.19): a build for an older instruction set can still be profiled."""


@dataclass(frozen=True)
class Collector:
    name: str  # "perf" | "cachegrind" | "none"
    reason: str  # why, e.g. "perf reads no hardware counters here: cycles <not supported>"


def subprocess_run(argv: Sequence[str], timeout_s: float, cwd: Path | None) -> Completed:
    """Run `argv` in its own process group; a timeout kills the group and answers exit 124,
    a program that cannot start answers exit 127 (both with the reason on stderr)."""
    cmd = [str(a) for a in argv]
    log.debug("running: %s", shlex.join(cmd))  # probes and the driver's build too
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
    except OSError as exc:
        return subprocess.CompletedProcess(cmd, 127, "", f"{cmd[0]}: cannot run: {exc}")
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # perf's and valgrind's children too
        out, err = proc.communicate()
        return subprocess.CompletedProcess(cmd, 124, out, f"{err}\ntimed out after {timeout_s:g} s")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def choose_collector(perf: str | None, valgrind: str | None,
                     run: Run = subprocess_run) -> Collector:
    """perf when it counts cycles or instructions here, else cachegrind when valgrind is
    there, else "none"; the reason says what was found."""
    problem = perf_problem(perf, run)
    if problem is None:
        return Collector("perf", "perf counts hardware events here (cycles, instructions)")
    if valgrind:
        return Collector("cachegrind", f"{problem}; simulating caches and branches with "
                         "valgrind's cachegrind instead")
    return Collector("none", f"{problem}; valgrind is not installed")


def perf_problem(perf: str | None, run: Run = subprocess_run) -> str | None:
    """None when perf counts a hardware event, else why it cannot be used."""
    if not perf:
        return "perf is not installed"
    probe = [perf, "stat", "-x,", "-e", ",".join(PROBE_EVENTS), "--", "true"]
    proc = run(probe, PROBE_TIMEOUT_S, None)
    try:
        stat = perf_stat.parse_csv(perf_csv(proc.stderr))
    except perf_stat.PerfStatError:
        stat = perf_stat.PerfStat((), {})
    probed = [c for c in stat.counts if event_name(c.event) in PROBE_EVENTS]
    if any(c.value is not None for c in probed):
        return None
    if not probed:
        return f"perf stat failed (exit {proc.returncode}): {_tail(proc.stderr, 2) or 'no output'}"
    found = ", ".join(f"{event_name(c.event)} <{c.status.replace('_', ' ')}>" for c in probed)
    return f"perf reads no hardware counters here: {found}"


def collect(task: ResolvedTask, so_path: str, symbol: str, source_file: str, out_dir: Path, *,
            cc: str, perf: str | None, valgrind: str | None, collector: Collector | None = None,
            reps: int = 1, run: Run = subprocess_run, timeout_s: float = 300) -> Profile:
    """Profile `symbol` in `so_path` at `task`'s shape with the chosen (or given) collector;
    the profile is saved as `out_dir/profile.json` beside the raw output."""
    chosen = collector or choose_collector(perf, valgrind, run)
    if chosen.name == "none":
        raise CpuProfileError(f"no CPU profiler available: {chosen.reason}. To fix: "
                              f"{INSTALL_HINT}.")
    if chosen.name not in ("perf", "cachegrind"):
        raise CpuProfileError(f"unknown collector {chosen.name!r}: expected perf, cachegrind "
                              "or none")
    tool = perf if chosen.name == "perf" else valgrind
    if not tool:
        raise CpuProfileError(f"collector {chosen.name} chosen but no path to "
                              f"{'perf' if chosen.name == 'perf' else 'valgrind'} given")
    out_dir.mkdir(parents=True, exist_ok=True)
    build_driver(task, so_path, symbol, out_dir, cc=cc, run=run, timeout_s=timeout_s)
    reps = max(1, reps)
    context = {"collector": chosen.name, "reason": chosen.reason, "cpu": cpu_model(),
               "reps": reps, "tool_version": tool_version(tool, run)}
    if chosen.name == "cachegrind":
        profile = _cachegrind(tool, symbol, source_file, out_dir, reps, run, timeout_s, context)
    else:
        profile = _perf(tool, symbol, out_dir, reps, run, timeout_s, context)
    profile.save(out_dir / "profile.json")
    return profile


def build_driver(task: ResolvedTask, so_path: str, symbol: str, out_dir: Path, *, cc: str,
                 run: Run = subprocess_run, timeout_s: float = 300) -> Path:
    """Write `out_dir/driver.c` and link it against the kernel's .so (found again at run time
    through an rpath to the .so's folder); the path of the executable."""
    so = Path(so_path).resolve()
    if not so.is_file():
        raise CpuProfileError(f"kernel library {so_path} does not exist")
    (out_dir / "driver.c").write_text(driver_source(task, symbol))
    cmd = [cc, "-O1", "-g", "driver.c", "-o", "driver", str(so), f"-Wl,-rpath,{so.parent}"]
    proc = run(cmd, timeout_s, out_dir)
    if proc.returncode != 0:
        raise CpuProfileError(f"the profiling driver did not compile (exit {proc.returncode}: "
                              f"{' '.join(cmd)}):\n{_tail(proc.stderr + proc.stdout, 30)}")
    return out_dir / "driver"


def _cachegrind(valgrind: str, symbol: str, source_file: str, out_dir: Path, reps: int,
                run: Run, timeout_s: float, context: dict[str, Any]) -> Profile:
    out = (out_dir / "cachegrind.out").resolve()  # valgrind runs in out_dir: no relative path
    out.unlink(missing_ok=True)
    # --demangle=no: C++ kernels keep the linker symbol the driver calls, so they match by name
    cmd = [valgrind, "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
           "--demangle=no", f"--cachegrind-out-file={out}", "./driver", str(reps)]
    log.info("cachegrind: %s", shlex.join(cmd))
    proc = run(cmd, timeout_s, out_dir)
    (out_dir / "cachegrind.log").write_text(proc.stderr)
    unhandled = next((ln for ln in proc.stderr.splitlines()
                      if "unhandled instruction bytes" in ln), None)
    if proc.returncode != 0 and unhandled is not None:
        raise UnsupportedInstruction(
            f"valgrind cannot simulate an instruction of this build ({unhandled.strip()}); "
            f"its log is {out_dir / 'cachegrind.log'}")
    _check(proc, "cachegrind", cmd)
    cg = read_cachegrind(out)
    try:
        kernel = from_cachegrind(cg, symbol, source_file, reps)
    except ValueError as exc:
        raise CpuProfileError(f"{out}: {exc}") from None
    return build_profile(kernel, reader="cachegrind", report=str(out), **context,
                         notes={"caches": list(cg.caches)})


def read_cachegrind(path: Path) -> Cachegrind:
    """A cachegrind output file; CpuProfileError when it is missing, empty or corrupt."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise CpuProfileError(f"cachegrind wrote no output file {path}: {exc}") from None
    if not text.strip():
        raise CpuProfileError(f"cachegrind output {path} is empty")
    try:
        return parse_cachegrind(text)
    except CachegrindError as exc:
        raise CpuProfileError(f"cachegrind output {path} is corrupt: {exc}") from None


def _perf(perf: str, symbol: str, out_dir: Path, reps: int, run: Run, timeout_s: float,
          context: dict[str, Any]) -> Profile:
    stat = [perf, "stat", "-x,", "-e", ",".join(PERF_EVENTS), "--", "./driver"]
    report = out_dir / "perf_stat.csv"
    full = _perf_stat(run, [*stat, str(reps)], report, timeout_s)
    base = _perf_stat(run, [*stat, "0"], out_dir / "perf_stat.init.csv", timeout_s)
    topdown, topdown_notes = _topdown(perf, out_dir, reps, run, timeout_s)
    kernel, notes = from_perf(full, base, symbol, reps, topdown=topdown)
    return build_profile(kernel, reader="perf", report=str(report), **context,
                         notes={**notes, **topdown_notes})


def _perf_stat(run: Run, cmd: list[str], keep: Path, timeout_s: float) -> perf_stat.PerfStat:
    """One `perf stat -x,` run in the driver's folder; its stderr (the CSV) kept in `keep`."""
    log.info("perf: %s", shlex.join(cmd))
    proc = run(cmd, timeout_s, keep.parent)
    keep.write_text(proc.stderr)
    _check(proc, "perf stat", cmd)
    try:
        stat = perf_stat.parse_csv(perf_csv(proc.stderr))
    except perf_stat.PerfStatError as exc:
        raise CpuProfileError(f"perf stat output {keep} is corrupt: {exc}") from None
    if not stat.counts:
        raise CpuProfileError(f"perf stat output {keep} holds no counts:\n"
                              f"{_tail(proc.stderr, 10) or '(empty)'}")
    return stat


def _topdown(perf: str, out_dir: Path, reps: int, run: Run,
             timeout_s: float) -> tuple[list[perf_stat.PerfStat], dict[str, Any]]:
    """`perf stat -M TopdownL1`, then L2 if L1 worked; a rejected group is noted, not fatal."""
    stats: list[perf_stat.PerfStat] = []
    notes: dict[str, Any] = {}
    for group in TOPDOWN_GROUPS:
        cmd = [perf, "stat", "-x,", "-M", group, "--", "./driver", str(reps)]
        log.info("perf: %s", shlex.join(cmd))
        proc = run(cmd, timeout_s, out_dir)
        (out_dir / f"perf_{group.lower()}.csv").write_text(proc.stderr)
        problem = _rejected(proc)
        if problem is None:
            try:
                stats.append(perf_stat.parse_csv(perf_csv(proc.stderr)))
            except perf_stat.PerfStatError as exc:
                problem = f"unreadable output: {exc}"
        if problem is not None:
            notes["topdown_unavailable"] = {group: problem}
            break
    notes["topdown_groups"] = list(TOPDOWN_GROUPS[:len(stats)])
    if stats:  # percentages cannot be subtracted: they cover the input fill as well
        notes["topdown_scope"] = f"whole driver run ({reps} calls plus the input fill)"
    return stats, notes


def _rejected(proc: Completed) -> str | None:
    if "Cannot find metric" in proc.stderr:
        return _tail(proc.stderr, 1)
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {_tail(proc.stderr, 2) or 'no output'}"
    return None


def perf_csv(stderr: str, sep: str = ",") -> str:
    """The `perf stat -x` lines of a stderr that may also hold the program's or perf's own
    messages: lines of 3+ fields starting with a count, `<not ...>` or nothing."""
    keep = []
    for line in stderr.splitlines():
        first = line.split(sep, 1)[0].strip()
        if line.count(sep) >= 2 and (not first or first.startswith("<") or _is_number(first)):
            keep.append(line)
    return "\n".join(keep)


def tool_version(tool: str, run: Run = subprocess_run) -> str:
    """The first line `tool --version` prints ("valgrind-3.19.0", "perf version 6.1"), or ""."""
    return version_line(run([tool, "--version"], PROBE_TIMEOUT_S, None))


def version_line(proc: Completed) -> str:
    """The first line a `--version` run printed, or "" where it failed or printed nothing."""
    lines = [ln.strip() for ln in (proc.stdout + "\n" + proc.stderr).splitlines() if ln.strip()]
    return lines[0] if proc.returncode == 0 and lines else ""


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _check(proc: Completed, what: str, cmd: Sequence[str]) -> None:
    if proc.returncode != 0:
        raise CpuProfileError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
                              f"{_tail(proc.stderr, 15) or '(no output on stderr)'}")


def _tail(text: str, lines: int) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
