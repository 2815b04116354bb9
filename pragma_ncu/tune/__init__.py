"""`pragma-ncu tune`: the closed loop of coder, tuner, profiler and conductor."""
