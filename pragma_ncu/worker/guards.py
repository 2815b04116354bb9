"""The bit patterns every device side writes around and into a candidate's arrays, so that the
same fault reads the same everywhere: guard regions of GUARD_BYTE before and after each array
(an out-of-bounds write changes one), and outputs poisoned before each run (NaN for floats, a
sentinel for integers: an element the kernel never writes is found)."""

from __future__ import annotations

from pragma_ncu.spec.model import Memory

GUARD_BYTES = 4096
GUARD_BYTE = 0xA5
POISON = {  # bit patterns: NaN for floats, a sentinel for integers
    "fp16": 0x7E5A, "bf16": 0x7FA5, "fp32": 0x7FA5A5A5, "fp64": 0x7FF5A5A5A5A5A5A5,
    "int8": 0x5A, "uint8": 0x5A, "int32": 0x5A5A5A5A, "uint32": 0x5A5A5A5A,
    "int64": 0x5A5A5A5A5A5A5A5A, "uint64": 0x5A5A5A5A5A5A5A5A,
}


def worker_memory(total_bytes: int, device: str) -> Memory:
    """What one instance's arrays may take in a worker on `device` (a GPU, or the host):
    all of its memory, counting the two guard regions around each array and the copy of each
    input that the worker compares after the run (both sides lay their arrays out so)."""
    return Memory(total_bytes, f"the memory of {device}, counting the worker's guard regions "
                  "and input copies", GUARD_BYTES, copies_inputs=True)
