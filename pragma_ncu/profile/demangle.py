"""C++ kernel names: mangled symbols made readable by the toolchain's own demangler.

ncu's raw CSV page exported with `--print-kernel-base mangled` (what the details page and
ncu_report add the demangled names to) names kernels by their Itanium symbols
(`_Z4workILi17EEvPfPKfi`). When a report carries nothing else, `c++filt` (GNU binutils, beside
every gcc; or llvm-cxxfilt) gives `void work<17>(float*, float const*, int)`, so template
instantiations can be shown, grouped by function and paired across builds.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable

TIMEOUT_S = 60


def demangle(names: Iterable[str], cxxfilt: str | None) -> dict[str, str]:
    """mangled -> demangled signature for the Itanium symbols (`_Z...`) among `names`; names
    the demangler leaves as they are are left out, and so is everything when there is no
    demangler or it fails (the caller keeps the mangled names and says so)."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    if not mangled or not cxxfilt:
        return {}
    try:
        proc = subprocess.run([cxxfilt], input="\n".join(mangled) + "\n", capture_output=True,
                              text=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    out = proc.stdout.splitlines()
    if proc.returncode != 0 or len(out) != len(mangled):
        return {}
    return {m: d.strip() for m, d in zip(mangled, out, strict=True) if d.strip() != m}


def function_name(display: str) -> str:
    """'void ns::foo<128>(float *, int)' -> 'ns::foo<128>'; 'silu_and_mul' stays as it is."""
    name = display.strip()
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):  # the parameter list: the first '(' outside template brackets
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "(" and depth == 0:
            cut = i
            break
    name = name[:cut].strip()
    if " " in name and not name.endswith(">"):
        name = name.rsplit(" ", 1)[-1]  # drop the return type
    elif " " in name:
        head = name[: name.index("<")] if "<" in name else name
        name = name[len(head.rsplit(" ", 1)[0]) + 1:] if " " in head else name
    return name
