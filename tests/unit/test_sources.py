"""Kernel sources are read in one place, byte for byte: a file with Latin-1 bytes in a comment
reads (no UnicodeDecodeError), writes back as the same bytes, hashes as those bytes, and shows
as U+FFFD; a missing or binary file is a SourceError (an InputError) naming it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pragma_ncu.infra import sources
from pragma_ncu.infra.errors import InputError, SourceError

LATIN1 = b"// caf\xe9, 5 \xb5s per call\nextern \"C\" __global__ void k(float* y) { y[0] = 1.f; }\n"


def test_non_utf8_bytes_read_and_write_back_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_bytes(LATIN1)
    text = sources.read(path)
    assert "__global__ void k" in text
    assert sources.encode(text) == LATIN1
    assert sources.digest(text) == hashlib.sha256(LATIN1).hexdigest()
    copy = tmp_path / "copy.cu"
    sources.write(copy, text)
    assert copy.read_bytes() == LATIN1
    assert sources.printable(text).startswith("// caf\ufffd, 5 \ufffds")
    assert sources.printable(text).encode("utf-8")  # shows anywhere


def test_utf8_text_is_unchanged_by_the_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text("// µs, ≥ 2×\n", encoding="utf-8")
    text = sources.read(path)
    assert text == "// µs, ≥ 2×\n" and sources.printable(text) == text
    assert sources.digest(text) == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("content,words", [
    (b"\xff\xfe/\x00/\x00", "NUL bytes"),  # UTF-16 with its byte-order mark
    (b"\x7fELF\x02\x01\x01\x00\x00", "not a text source"),
])
def test_binary_sources_are_a_source_error(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "k.cu"
    path.write_bytes(content)
    with pytest.raises(SourceError, match=words) as caught:
        sources.read(path)
    assert isinstance(caught.value, InputError) and "\n" not in str(caught.value)


def test_a_missing_or_unreadable_source_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not found"):
        sources.read(tmp_path / "none.cu")
    with pytest.raises(SourceError, match="is a directory, not a kernel file"):
        sources.read(tmp_path)  # a folder


def test_threads_writing_the_same_file_at_once_do_not_trip_over_each_other(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A search renders the same template point from several compile threads: each write
    keeps a temporary file of its own (seen on an H100, 2026-11-26: one thread's rename found
    its temporary file already moved by another's, an internal error that ended the run)."""
    from concurrent.futures import ThreadPoolExecutor

    from pragma_ncu.infra import sources

    path = tmp_path / "k.cu"
    text = "__global__ void k() {}\n" * 2000
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: sources.write(path, text), range(200)))
    assert path.read_text() == text
    assert not list(tmp_path.glob("*.tmp"))
