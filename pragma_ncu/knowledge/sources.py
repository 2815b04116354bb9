"""Where `knowledge build` reads from: the source-adapter protocol and what adapters receive.

An adapter knows one kind of documentation. `gather(ctx)` reads its documents whole (files,
a command's output, web pages) or says why it cannot (`Gathered.skipped`); `parse(doc)` cuts one
document into Segments. The pipeline caches `parse` by the document's content, so a rebuild
re-parses only documents that changed. Adding a profiler means adding its adapters to
`pragma_ncu.knowledge.adapters.ADAPTERS`, nothing else.

Commands and downloads go through the injected `CommandRunner` and `Fetcher`, so tests run every
adapter on fixtures, and the same code runs ncu and perf for real.
"""

from __future__ import annotations

import logging
import shlex
import subprocess
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pragma_ncu.knowledge.htmltext import html_sections, split_long
from pragma_ncu.knowledge.segments import Document, Segment

MAX_SEGMENT_CHARS = 6000  # longer sections are cut at paragraphs, to fit one LLM request


@dataclass(frozen=True)
class CommandResult:
    """What a command printed; `missing` when the program does not exist."""

    returncode: int
    stdout: str
    stderr: str = ""
    missing: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.missing


log = logging.getLogger(__name__)
CommandRunner = Callable[[Sequence[str], float], CommandResult]  # (argv, timeout_s)
Fetcher = Callable[[str, float], str]  # (url, timeout_s) -> text; raises OSError on failure


def run_command(argv: Sequence[str], timeout_s: float) -> CommandResult:
    """Run a program, capture its text output; a missing program or a timeout is data."""
    log.info("running: %s", shlex.join(argv))
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, errors="replace",
                              timeout=timeout_s, check=False)
    except FileNotFoundError:
        return CommandResult(127, "", f"{argv[0]}: not found", missing=True)
    except PermissionError as exc:
        return CommandResult(126, "", f"{argv[0]}: {exc}", missing=True)
    except subprocess.TimeoutExpired:
        return CommandResult(124, "", f"{' '.join(argv)}: no result within {timeout_s:g} s")
    return CommandResult(proc.returncode, proc.stdout, proc.stderr)


def fetch_url(url: str, timeout_s: float) -> str:
    """GET a page as text (only used with --online)."""
    log.info("fetching %s", url)
    request = urllib.request.Request(url, headers={"User-Agent": "pragma-ncu knowledge build"})
    with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
        charset = response.headers.get_content_charset() or "utf-8"
        return str(response.read().decode(charset, errors="replace"))


@dataclass(frozen=True)
class CrawlContext:
    """Everything adapters may read: tool and folder locations, options, injected I/O.

    Locations come from the settings and toolchain discovery (or the CLI's overrides); adapters
    never look for tools themselves. `perf` and `man` are program names the runner resolves.
    """

    ncu: str | None = None
    ncu_docs: Path | None = None  # <install>/docs
    ncu_sections: Path | None = None  # <install>/sections
    chip: str = "gh100"
    online: bool = False  # fetch web pages; off by default
    perf: str = "perf"
    man: str = "man"
    run: CommandRunner = run_command
    fetch: Fetcher = fetch_url
    timeout_s: float = 120.0


@dataclass(frozen=True)
class Gathered:
    """An adapter's documents, or why there are none; warnings for parts that failed."""

    documents: tuple[Document, ...] = ()
    skipped: str = ""  # non-empty: the source is not here (no ncu, no perf); not an error
    warnings: tuple[str, ...] = field(default_factory=tuple)


class SourceAdapter(Protocol):
    """One kind of documentation of one profiler."""

    name: str  # e.g. "ncu-docs"; what --source selects
    profiler: str  # "ncu" or "perf"
    version: str  # bump when parse() changes, so cached segments are cut again
    description: str  # one line for --help and the summary

    def gather(self, ctx: CrawlContext) -> Gathered:
        """Read the documents (or say why not); never raises for a missing source."""
        ...

    def parse(self, doc: Document) -> list[Segment]:
        """Cut one document into segments; pure (no I/O)."""
        ...


def html_segments(source: str, profiler: str, doc: Document,
                  limit: int = MAX_SEGMENT_CHARS) -> list[Segment]:
    """One segment per heading of an HTML page (long ones in parts), titled 'Page › Heading'."""
    page_title, sections = html_sections(doc.text)
    page = doc.title or page_title
    out: list[Segment] = []
    for section in sections:
        heading = section.heading or page or doc.origin
        title = f"{page} \u203a {heading}" if page and heading != page else heading
        origin = f"{doc.origin}#{section.anchor}" if section.anchor else doc.origin
        pieces = split_long(section.text, limit)
        for i, piece in enumerate(pieces, 1):
            part = f"{title} (part {i})" if len(pieces) > 1 else title
            out.append(Segment.make(source, profiler, "doc", part, piece, origin))
    return out


def read_text_file(path: Path) -> str:
    """A documentation file as text (undecodable bytes replaced, not fatal)."""
    return path.read_text(encoding="utf-8", errors="replace")
