"""Where the data shipped with the package lives: the curated knowledge, metric docs, templates.

The folders sit at the repository root (knowledge/, metric_docs/, templates/) and are reached
through links in pragma_ncu/data/, which a wheel turns into copies.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"


def data_path(*parts: str) -> Path:
    """A path under the shipped data, e.g. data_path("knowledge", "strategies.toml")."""
    return DATA.joinpath(*parts)
