"""The CPU side: C/C++ kernels built with the system compiler, run through ctypes, profiled
with Linux perf or, without hardware counters, with valgrind's cachegrind."""
