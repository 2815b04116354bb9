"""Kernel sources as text, read and written byte for byte.

A kernel file is read once, here, as UTF-8 with every byte that is not UTF-8 kept as a
surrogate escape (PEP 383): a `.cu` with Latin-1 bytes in a comment reads without a
UnicodeDecodeError, the compiler gets the file's bytes unchanged (`encode`, `write`), and a hash
of the text is a hash of those bytes. Where the text is only shown (a trace, the run store's
candidate table, an LLM prompt), `printable` puts U+FFFD in place of each such byte.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from pragma_ncu.infra.errors import SourceError

_CODEC, _KEEP = "utf-8", "surrogateescape"


def require_file(path: Path) -> None:
    """SourceError unless `path` is a file: one that is missing, and a directory given for
    a kernel file (`--kernel src/`), are each said for what they are."""
    if path.is_dir():
        raise SourceError(f"{path} is a directory, not a kernel file: give the kernel's source "
                          "file itself (a .cu, .c or .cpp in it)")
    if not path.is_file():
        raise SourceError(f"kernel file not found: {path}")


def read(path: Path) -> str:
    """The text of the kernel source at `path`; SourceError when it is missing, a directory,
    unreadable, or not text (it holds NUL bytes, which no C, C++ or CUDA file does: UTF-16, a
    binary)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        require_file(path)
        raise
    except OSError as exc:
        raise SourceError(f"cannot read the kernel source {path}: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise SourceError(f"{path} is not a text source: it holds NUL bytes (a binary file, or "
                          "text saved as UTF-16: save it as UTF-8)")
    return decode(data)


def decode(data: bytes) -> str:
    """`data` as text, every byte kept (the inverse of `encode`)."""
    return data.decode(_CODEC, _KEEP)


def encode(text: str) -> bytes:
    """The bytes of `text`, those it was read from included (the inverse of `decode`)."""
    return text.encode(_CODEC, _KEEP)


def digest(text: str) -> str:
    """The SHA-256 of `text`'s bytes, in hex."""
    return hashlib.sha256(encode(text)).hexdigest()


def write(path: Path, text: str) -> None:
    """Write `text` to `path` as the bytes it was read from (atomically: a concurrent reader
    sees the old file or the new one, never half of it)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(encode(text))
    tmp.replace(path)


def printable(text: str) -> str:
    """`text` for display: each byte that is not UTF-8 shown as U+FFFD."""
    return encode(text).decode(_CODEC, "replace")
