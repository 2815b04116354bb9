"""What a C/C++ spec for the CPU says beyond what every spec says: its sources and their
templates, no [launch] (a C function has none), dtypes with a C equivalent, and no template
arguments."""

from __future__ import annotations

from pragma_ncu.targets.rules import SpecRules

RULES = SpecRules(
    "cpu", (".c", ".cc", ".cpp", ".cxx", ".c++"), launch_required=False, c_types_only=True,
    dtypes_reason="a type with a C equivalent on the CPU",
    template_args_refused="no template arguments: a CPU kernel is a C function (declare C++ "
                          "ones extern \"C\")",
    compiler="the C/C++ compiler", kernel_keyword="",
    kernel_words="function with C linkage (extern \"C\" in C++)")
