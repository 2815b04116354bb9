"""`doctor` checks the CPU target's toolchain (issue 35: it looked only for the GPU's): the C and
C++ compilers, perf and whether it reads the CPU's counters, and valgrind, whose cachegrind is
the fallback where they cannot be read. Each check found or not, with its version, what works
without it and the fix; the tools are fakes answering as recorded on the development machine
(perf 6.1 reading `<not supported>`, valgrind 3.19, gcc 12.2)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner

from pragma_ncu.backends.cpu.doctor import run_checks
from pragma_ncu.backends.cpu.target import TARGET
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.toolchain import Check

NOT_SUPPORTED = "<not supported>,,cycles,0,100.00,,\n<not supported>,,instructions,0,100.00,,\n"
COUNTED = "8123456,,cycles:u,500,100.00,,\n1234,,instructions:u,500,100.00,,\n"
VERSIONS = {"cc": "cc (Debian 12.2.0-14+deb12u1) 12.2.0", "c++": "c++ (Debian 12.2.0-14) 12.2.0",
            "perf": "perf version 6.1.187", "valgrind": "valgrind-3.19.0"}


@dataclass
class Tools:
    """`tool --version` answers its version; `perf stat` answers `stat` on stderr."""

    stat: str = NOT_SUPPORTED
    calls: list[list[str]] = field(default_factory=list)

    def __call__(self, argv: Sequence[str], timeout_s: float, cwd: Path | None
                 ) -> subprocess.CompletedProcess[str]:
        cmd = [str(a) for a in argv]
        self.calls.append(cmd)
        if cmd[1:2] == ["--version"] and Path(cmd[0]).name not in VERSIONS:
            return subprocess.CompletedProcess(cmd, 127, "", f"{cmd[0]}: cannot run: [Errno 2] "
                                               "No such file or directory")
        if cmd[1:2] == ["--version"]:
            return subprocess.CompletedProcess(cmd, 0, VERSIONS[Path(cmd[0]).name] + "\n", "")
        assert cmd[1] == "stat", cmd
        return subprocess.CompletedProcess(cmd, 0, "", self.stat)


def checks(tools: Tools, profile_check: bool = True, **paths: str | None) -> dict[str, Check]:
    given = {"cc": "/usr/bin/cc", "cxx": "/usr/bin/c++", "perf": "/usr/bin/perf",
             "valgrind": "/usr/bin/valgrind", **paths}
    settings = load_settings({}).with_(**given)
    return {c.name: c for c in run_checks(settings, profile_check, tools)}


def test_this_machine_perf_without_counters_and_valgrind_as_the_fallback() -> None:
    found = checks(Tools())
    assert list(found) == ["C compiler", "C++ compiler", "perf", "perf counters", "valgrind"]
    assert found["C compiler"] == Check("C compiler", True,
                                        "cc (Debian 12.2.0-14+deb12u1) 12.2.0 (/usr/bin/cc)")
    assert found["perf"].ok and "perf version 6.1.187" in found["perf"].detail
    counters = found["perf counters"]
    assert not counters.ok and "cycles <not supported>" in counters.detail
    assert "cachegrind (valgrind) is the fallback and is used instead" in counters.fix
    assert found["valgrind"].ok
    assert "valgrind-3.19.0" in found["valgrind"].detail
    assert "cachegrind profiles C/C++ kernels here" in found["valgrind"].detail


def test_without_valgrind_and_counters_nothing_profiles_and_doctor_says_so() -> None:
    found = checks(Tools(), valgrind=None)
    assert "valgrind is not installed either" in found["perf counters"].fix
    missing = found["valgrind"]
    assert not missing.ok and missing.detail == "not found"
    assert "verified and timed but not profiled" in missing.fix
    assert "apt-get install valgrind" in missing.fix


def test_with_counters_perf_profiles_and_valgrind_is_optional() -> None:
    found = checks(Tools(stat=COUNTED), valgrind=None)
    assert found["perf counters"].ok and "perf stat" in found["perf counters"].detail
    assert "not needed while perf reads the hardware counters" in found["valgrind"].fix


def test_missing_compilers_and_perf_say_what_works_without_them() -> None:
    found = checks(Tools(), cc=None, cxx=None, perf=None)
    for name, variable in (("C compiler", "CC"), ("C++ compiler", "CXX")):
        assert not found[name].ok and f"set {variable}" in found[name].fix
        assert "CUDA kernels, and explain and triage of recorded reports, still work" in \
            found[name].fix
    assert not found["perf"].ok and "cachegrind instead" in found["perf"].fix
    assert "perf counters" not in found  # nothing to probe
    assert "cachegrind profiles C/C++ kernels here" in found["valgrind"].detail


def test_a_configured_tool_that_does_not_run_is_missing() -> None:
    """$CC or PRAGMA_NCU_VALGRIND naming a file that is not there is not a found compiler."""
    found = checks(Tools(), cc="/nowhere/gcc-99", valgrind="/nowhere/vg")
    assert not found["C compiler"].ok
    assert found["C compiler"].detail.startswith("/nowhere/gcc-99 does not run (")
    assert not found["valgrind"].ok and "does not run" in found["valgrind"].detail
    assert "not profiled" in found["valgrind"].fix


def test_no_profile_check_runs_no_perf_stat() -> None:
    tools = Tools()
    found = checks(tools, profile_check=False)
    assert "perf counters" not in found and all(c[1] == "--version" for c in tools.calls)
    assert "cachegrind is the fallback" in found["valgrind"].detail


def test_the_cpu_target_gives_doctor_its_checks(monkeypatch) -> None:
    """ARCHITECTURE.md: doctor's checks are each target's `checks`."""
    seen = TARGET.checks(load_settings({}).with_(cc=None, cxx=None, perf=None, valgrind=None),
                         profile_check=False)
    assert [c.name for c in seen] == ["C compiler", "C++ compiler", "perf", "valgrind"]
    monkeypatch.setattr("pragma_ncu.backends.cuda.target.CudaTarget.checks",
                        lambda self, settings, profile_check=True: [])
    result = CliRunner(env={"CC": "/nonexistent/cc"}).invoke(
        cli, ["doctor", "--no-profile-check", "--format", "json"])
    assert result.exit_code == 0, result.output
    names = [c["name"] for c in json.loads(result.output)]
    assert names[:3] == ["C compiler", "C++ compiler", "perf"] and "valgrind" in names
