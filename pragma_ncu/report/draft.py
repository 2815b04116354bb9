"""What `init` prints of a draft: the files written, each argument with its dtype, role and
why, the parameters, what is left to fill, and what to run next."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tabulate import tabulate

from pragma_ncu.draft import Draft
from pragma_ncu.spec.file import placeholders, spec_path_for


def init_lines(draft: Draft, written: tuple[Path, ...], kernel_file: Path) -> list[str]:
    """What init wrote and concluded, and what is left to the user."""
    d = draft.kernel
    rows = [(a.name, a.dtype or "<fill>", a.role,
             a.value_note if a.role == "scalar" else a.role_note) for a in d.args]
    lines = [f"wrote {', '.join(str(p) for p in written)}: {d.kernel} "
             f"({d.source.name}, line {d.line}, {d.device})", "",
             tabulate(rows, headers=["argument", "dtype", "role", "why"]), ""]
    if d.launch is not None:
        lines.append(f"launch: {d.launch.shape}: grid {list(d.launch.grid)}, block "
                     f"{list(d.launch.block)}")
    if d.params:
        lines.append("parameters: " + ", ".join(
            f"{p.name}={'<fill>' if p.default is None else p.default}" for p in d.params))
    left = placeholders(tomllib.loads(draft.spec_text))
    lines.append(f"to fill ({len(left)}): {', '.join(left)}")
    if draft.reference_path is not None:
        lines.append(f"then write the reference's body in {draft.reference_path}")
    lines.append(f"then: pragma-ncu bench --kernel {kernel_file}"
                 + (f" --spec {draft.spec_path}" if _custom(draft, kernel_file) else ""))
    return lines


def _custom(draft: Draft, kernel_file: Path) -> bool:
    return draft.spec_path.resolve() != spec_path_for(kernel_file).resolve()
