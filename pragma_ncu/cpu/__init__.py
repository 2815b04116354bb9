"""The CPU side (issue 8, in progress): readers of Linux perf and valgrind/cachegrind output."""
