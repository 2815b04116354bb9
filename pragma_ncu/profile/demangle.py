"""C++ kernel names: mangled symbols made readable by the toolchain's own demangler.

ncu's raw CSV page exported with `--print-kernel-base mangled` (what the details page and
ncu_report add the demangled names to) names kernels by their Itanium symbols
(`_Z4workILi17EEvPfPKfi`). When a report carries nothing else, `c++filt` (GNU binutils, beside
every gcc; or llvm-cxxfilt) gives `void work<17>(float*, float const*, int)`, so template
instantiations can be shown, grouped by function and paired across builds.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable

TIMEOUT_S = 60
# Integer template arguments as each demangler writes them: ncu_report `<(int)256>`,
# `<(unsigned int)4>`, `<(bool)1>`; ncu's CSV pages `<256>`; c++filt `<256>`, `<4u>`, `<5l>`,
# `<true>`. One spelling (`256`, `4`, `true`) lets the same kernel from either reader pair.
_INT_CAST = re.compile(r"\((?:(?:un)?signed\s+)?(?:char|short|int|long|long\s+long)\)\s*(-?\d+)")
_BOOL_CAST = re.compile(r"\(bool\)\s*([01])\b")
_INT_SUFFIX = re.compile(r"(?<![\w.])(-?\d+)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)\b")


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
    name = template_arguments_canonical(name[:cut].strip())
    if " " in name and not name.endswith(">"):
        name = name.rsplit(" ", 1)[-1]  # drop the return type
    elif " " in name:
        head = name[: name.index("<")] if "<" in name else name
        name = name[len(head.rsplit(" ", 1)[0]) + 1:] if " " in head else name
    return name


def template_arguments_canonical(name: str) -> str:
    """'relu_block<(int)256>' and 'relu_block<256u>' -> 'relu_block<256>'; '(bool)1' -> 'true'."""
    if "<" not in name:
        return name
    name = _INT_CAST.sub(r"\1", name)
    name = _BOOL_CAST.sub(lambda m: "true" if m.group(1) == "1" else "false", name)
    return _INT_SUFFIX.sub(r"\1", name)
