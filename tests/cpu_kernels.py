"""C kernels built as the CPU worker loads them, for the tests that run that worker: k.so
compiled with cc from a C text, beside ref.py, the references the worker checks it against."""

from __future__ import annotations

import subprocess
from pathlib import Path


def cpu_kernels(folder: Path, kernels: str, references: str) -> Path:
    """`folder` holding k.c (`kernels`), the k.so cc builds from it and ref.py (`references`)."""
    (folder / "k.c").write_text(kernels)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(folder / "k.so"),
                    str(folder / "k.c")], check=True, capture_output=True)
    (folder / "ref.py").write_text(references)
    return folder
