"""The GPU's ceilings for the roofline: the copy bandwidth (the harness's copies) and each
compute unit's rate (the peaks.cu microbenchmarks), measured by the worker and cached per device
and driver (see `pragma_ncu.measure.ceilings`)."""

from __future__ import annotations

from pragma_ncu.backends.cuda import build as cuda_build
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import NvccInfo, find_nvcc
from pragma_ncu.measure.ceilings import ComputeCeiling
from pragma_ncu.pool.ceilings import DeviceCeilings, ceiling_for, compute_ceiling_for
from pragma_ncu.pool.runner import Runner


def measured_compute(runner: Runner, arch: str, nvcc: NvccInfo, settings: Settings,
                     refresh: bool = False) -> ComputeCeiling:
    """This device's compute ceilings (cached after the first measurement)."""
    peaks = cuda_build.build_peaks(arch, nvcc, settings)
    assert peaks.cubin_path is not None
    return compute_ceiling_for(runner, peaks.cubin_path,
                               settings.cache_dir / "compute_ceilings.json", refresh)


def measure(runner: Runner, settings: Settings, refresh: bool = False) -> DeviceCeilings:
    """The runner's GPU, its copy ceiling and its compute ceilings (`pragma-ncu ceilings`)."""
    device = runner.hello()
    nvcc = find_nvcc(settings)
    harness = cuda_build.build_harness(device.arch, nvcc, settings)
    assert harness.cubin_path is not None
    copy = ceiling_for(runner, harness.cubin_path, settings.cache_dir / "ceilings.json",
                       refresh=refresh)
    compute = measured_compute(runner, device.arch, nvcc, settings, refresh=refresh)
    return DeviceCeilings(device, device.name, copy, compute)
