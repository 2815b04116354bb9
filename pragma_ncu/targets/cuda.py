"""What a CUDA spec says beyond what every spec says: its sources are .cu files (and .cu.j2
templates), and it gives a [launch] within what the CUDA programming model allows on every
GPU."""

from __future__ import annotations

from pragma_ncu.targets.rules import LaunchLimits, SpecRules

# The same on every architecture since sm_30 (CUDA C++ Programming Guide, "Compute
# Capabilities"): known without a GPU.
LAUNCH_LIMITS = LaunchLimits(threads_per_block=1024, block=(1024, 1024, 64),
                             grid=(2**31 - 1, 65535, 65535), model="CUDA")

RULES = SpecRules("cuda", (".cu",), launch_limits=LAUNCH_LIMITS, compiler="nvcc")
