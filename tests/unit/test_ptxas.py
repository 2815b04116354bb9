"""Parsing `-Xptxas -v` reports (recorded text, no nvcc needed)."""

from pragma_ncu.backends.cuda.build import find_symbol, parse_ptxas

REPORT = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z2tkILi64EEvPf' for 'sm_90'
ptxas info    : Function properties for _Z2tkILi64EEvPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers
ptxas info    : Compile time = 23.448 ms
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    264 bytes stack frame, 128 bytes spill stores, 96 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]
"""


def test_parse_two_entries() -> None:
    parsed = parse_ptxas(REPORT)
    assert set(parsed) == {"_Z2tkILi64EEvPf", "k"}
    k = parsed["k"]
    assert (k.registers, k.stack, k.spill_stores, k.spill_loads) == (255, 264, 128, 96)
    assert (k.shared_static, k.barriers, k.const_mem) == (1024, 1, 380)
    assert parsed["_Z2tkILi64EEvPf"].registers == 32
    assert parsed["_Z2tkILi64EEvPf"].shared_static == 0


def test_find_symbol() -> None:
    entries = ["_Z2tkILi64EEvPf", "k", "_ZN2ns6kernelEPf"]
    assert find_symbol("k", entries) == "k"
    assert find_symbol("tk", entries) == "_Z2tkILi64EEvPf"
    assert find_symbol("kernel", entries) == "_ZN2ns6kernelEPf"
    assert find_symbol("missing", entries) is None
