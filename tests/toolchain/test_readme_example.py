"""The README's Python example runs as written (from the repository's root): a spec built in
Python searched on the CPU through `api.autotune`, and a CUDA kernel through `api.bench` (its
build needs nvcc; without a GPU the report says so)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## From Python", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


def test_the_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRAGMA_NCU_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(ROOT)
    names: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example(), "README.md", "exec"), names)
    result, report = names["result"], names["report"]
    assert result.best_point is not None and result.stats.verified == 4  # type: ignore[attr-defined]
    assert report.build.ok  # type: ignore[attr-defined]
    assert report.build.status in out.getvalue()  # type: ignore[attr-defined]
    assert os.getcwd() == str(ROOT)
