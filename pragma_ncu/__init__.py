"""pragma-ncu: a profiler-driven optimizer for CUDA kernels, built around Nsight Compute."""

__version__ = "0.1.0"
