"""The build cache: one JSON file per item, keyed by content hash, written atomically.

A rebuild (or a rerun after Ctrl-C) reads what is there and redoes only the rest. A file that
cannot be read back (truncated by a crash before the rename, edited by hand) counts as absent.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

CACHE_VERSION = 1


class JsonCache:
    """Items of several kinds ("crawl", "summary"), stored as <root>/<kind>/<ab>/<key>.json."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        """The stored item, or None when absent or unreadable."""
        try:
            data = json.loads(self.path(kind, key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("cache_version") != CACHE_VERSION:
            return None
        item = data.get("item")
        return item if isinstance(item, dict) else None

    def put(self, kind: str, key: str, item: dict[str, Any]) -> None:
        """Store `item`: written to a temporary file beside the target, then renamed over it."""
        write_json_atomic(self.path(kind, key), {"cache_version": CACHE_VERSION, "item": item})


def write_json_atomic(path: Path, data: Any, indent: int | None = None) -> None:
    """Write JSON so that readers see the old file or the new one, never half of one."""
    write_text_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False))


def write_text_atomic(path: Path, text: str) -> None:
    """Write text through a temporary file in the same folder and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
