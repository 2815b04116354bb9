"""Kernels with their specs that the source-move tests of more than one module run: each
module here holds a move's snippets (the unit tests under tests/unit/test_moves_<move>.py
read and run them on the CPU; tests/toolchain and tests/gpu compile and run the same ones)."""
