"""The CUDA target's part of `doctor`: cuda-python, the GPU and its driver, nvcc, ncu, its
Python report interface and the permission to read the GPU's counters, each with its fix."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from typing import Protocol, TypeVar

from pragma_ncu.backends.cuda.build import build, harness_request
from pragma_ncu.backends.cuda.worker import selftest, worker_command
from pragma_ncu.build.compile import BuildCache
from pragma_ncu.infra.errors import NoGPUError, ToolchainError
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import Check, NcuInfo, NvccInfo, find_ncu, find_nvcc
from pragma_ncu.pool.runner import DeviceInfo, Runner

PROFILE_TIMEOUT_S = 120


def run_checks(settings: Settings, profile_check: bool = True) -> list[Check]:
    checks = [_cuda_python()]
    device, gpu_check = _gpu(settings)
    checks.append(gpu_check)
    if device is not None:
        checks.append(Check("driver", True, device.driver))
    nvcc, nvcc_check = _found("nvcc", find_nvcc, settings)
    checks.append(nvcc_check)
    ncu, ncu_check = _found("ncu", find_ncu, settings)
    checks.append(ncu_check)
    if ncu is not None:
        checks.append(_ncu_report(settings, ncu))
        if profile_check and device is not None and nvcc is not None:
            checks.append(_counters(settings, ncu, nvcc, device))
    return checks


def _cuda_python() -> Check:
    try:
        import cuda.core
    except ImportError as exc:
        return Check("cuda-python", False, str(exc), "pip install cuda-core cuda-bindings")
    return Check("cuda-python", True, f"cuda.core {getattr(cuda.core, '__version__', '?')}")


def _gpu(settings: Settings) -> tuple[DeviceInfo | None, Check]:
    try:
        with Runner(worker_command(settings), timeout_s=60) as runner:
            d = runner.hello()
    except NoGPUError as exc:
        return None, Check("GPU", False, exc.reason, "bench and tune need an NVIDIA GPU with its "
                           "driver; without one, pragma-ncu compiles, explains and triages")
    detail = (f"{d.name}, compute capability {d.compute_capability}, {d.sm_count} SMs, "
              f"{d.memory_bytes / 2**30:.0f} GiB")
    return d, Check("GPU", True, detail)


class _Tool(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def version(self) -> str: ...


T = TypeVar("T", bound=_Tool)


def _found(name: str, find: Callable[[Settings], T], settings: Settings
           ) -> tuple[T | None, Check]:
    """A tool as the settings find it (its version and path), or not found and how to get it."""
    try:
        info = find(settings)
    except ToolchainError as exc:
        return None, Check(name, False, "not found", str(exc))
    return info, Check(name, True, f"{info.version} ({info.path})")


def _ncu_report(settings: Settings, ncu: NcuInfo) -> Check:
    if ncu.python_dir is None:
        return Check("ncu_report", False, "extras/python not found in the ncu install",
                     "set PRAGMA_NCU_NCU_PYTHON to the folder holding ncu_report.py")
    code = f"import sys; sys.path.insert(0, {str(ncu.python_dir)!r}); import ncu_report"
    proc = subprocess.run([settings.python, "-c", code], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        return Check("ncu_report", False, proc.stderr.strip().splitlines()[-1][:200],
                     "the CSV fallback reader will be used; check the ncu install")
    return Check("ncu_report", True, f"imports from {ncu.python_dir}")


def _counters(settings: Settings, ncu: NcuInfo, nvcc: NvccInfo, device: DeviceInfo) -> Check:
    """Profile one harness launch under ncu to see whether hardware counters can be read."""
    harness = build(harness_request(device.arch), nvcc, BuildCache(settings.cache_dir / "build"))
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [ncu.path, "--clock-control", "none", "--metrics", "sm__cycles_elapsed.avg",
               "-k", "regex:fill_", "-c", "1", "--target-processes", "all",
               settings.python, "-m", selftest.__name__,
               str(harness.cubin_path)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp,
                                  timeout=PROFILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return Check("counters", False, f"ncu did not finish in {PROFILE_TIMEOUT_S} s")
    out = proc.stdout + proc.stderr
    if "ERR_NVGPUCTRPERM" in out:
        return Check("counters", False, "ERR_NVGPUCTRPERM: no permission to read GPU counters",
                     "run as root, or allow profiling for all users: add "
                     "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' under "
                     "/etc/modprobe.d and reboot; until then bench and tune run timing-only")
    if "sm__cycles_elapsed.avg" in out:
        return Check("counters", True, "ncu read a hardware counter of a test kernel")
    return Check("counters", False, _last_lines(out), "see the ncu output above")


def _last_lines(text: str, n: int = 3) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-n:])[:300]



