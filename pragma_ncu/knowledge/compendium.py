"""The metric compendium: what each profiler metric means and what to do about it.

Two sources feed it: the curated TOML shipped in the repository's `knowledge/` folder (metric
entries per group, bottleneck strategies, GPU specs) and, optionally, the JSON file that
`knowledge build` writes into the user's data folder. Curated entries win over generated ones.

Metric names are resolved in this order (see `Compendium.lookup`):
1. the exact name, or an alias of an entry;
2. perf spellings normalized: `cpu_core/topdown-retiring/` -> `topdown-retiring`,
   `cycles:u` -> `cycles`;
3. ncu rollup and ratio suffixes stripped one at a time from the end
   (`dram__bytes.sum.per_second` -> `dram__bytes.sum` -> `dram__bytes`), then the base
   name before the first '.';
4. the longest family entry (`family = true`) whose name or alias is a prefix of the base name.
Each step also tries the lower-cased name, so display names and perf events match loosely.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pragma_ncu.infra.errors import SpecError
from pragma_ncu.infra.resources import data_path
from pragma_ncu.infra.settings import Settings
from pragma_ncu.knowledge.schema import (
    BOTTLENECKS,
    GpuSpec,
    MetricEntry,
    Strategy,
    entry_from_dict,
    gpu_from_dict,
    strategy_from_dict,
)

GENERATED_VERSION = 1

# Rollups (.sum/.avg/.min/.max) and submetrics (.pct_of_peak_sustained_elapsed, .per_second,
# .ratio, ...) that ncu appends to a counter or ratio's base name.
_SUFFIX = re.compile(r"^(sum|avg|min|max|ratio|pct|max_rate|value|per_second|per_cycle_\w+"
                     r"|pct_of_peak_\w+|peak_\w+)$")
_PMU_EVENT = re.compile(r"^[\w.-]+/([^/=,]+)/[a-zA-Z]*$")  # cpu_core/topdown-retiring/u
_PERF_MODIFIERS = re.compile(r":[ukhHGIpPSDeW]+$")  # cycles:u, instructions:ppp
_UNIT_TAIL = re.compile(r"\s*\[[^\]]*\]$")  # CSV headers such as "dram__bytes.sum [byte]"


def name_candidates(metric: str) -> list[str]:
    """The names `lookup` tries for `metric`, most specific first (rules 1-3 of the module doc)."""
    name = _UNIT_TAIL.sub("", metric.strip())
    out = [name]
    pmu = _PMU_EVENT.match(name)
    if pmu:
        name = pmu.group(1)
        out.append(name)
    bare = _PERF_MODIFIERS.sub("", name)
    if bare != name:
        name = bare
        out.append(name)
    parts = name.split(".")
    while len(parts) > 1 and _SUFFIX.match(parts[-1]):
        parts.pop()
        out.append(".".join(parts))
    if "." in name and parts[0] not in out:
        out.append(parts[0])
    return out


class Compendium:
    """Metric entries, strategies and GPU specs, with fast name resolution and search.

    Entries passed earlier win over later ones of the same name or alias, which is how curated
    entries take precedence over generated ones (`load` passes the curated ones first).
    """

    def __init__(self, entries: Iterable[MetricEntry], strategies: Iterable[Strategy] = (),
                 gpus: Iterable[GpuSpec] = ()) -> None:
        self._index: dict[str, MetricEntry] = {}
        self._folded: dict[str, MetricEntry] = {}
        self._families: list[tuple[str, MetricEntry]] = []
        self._cache: dict[str, MetricEntry | None] = {}
        kept = [entry for entry in entries if self._add(entry)]
        self._entries = tuple(kept)
        self._families.sort(key=lambda item: -len(item[0]))
        self._strategies = tuple(strategies)
        self._gpus = tuple(gpus)
        self._search_text = {e.name: _search_fields(e) for e in self._entries}

    @classmethod
    def load(cls, generated: Path | None = None, *, root: Path | None = None) -> Compendium:
        """Read the curated knowledge (from `root`, default the shipped folder) and, when the
        file exists, the generated entries at `generated`. Bad files raise SpecError naming the
        file and the field."""
        entries, strategies, gpus = load_curated(root or data_path("knowledge"))
        if generated is not None and generated.is_file():
            entries = entries + load_generated(generated)
        return cls(entries, strategies, gpus)

    def _add(self, entry: MetricEntry) -> bool:
        if entry.name in self._index:
            return False
        for key in (entry.name, *entry.aliases):
            self._index.setdefault(key, entry)
            self._folded.setdefault(key.lower(), entry)
            if entry.family:
                self._families.append((key, entry))
        return True

    @property
    def entries(self) -> tuple[MetricEntry, ...]:
        """Every entry, curated first, in file order."""
        return self._entries

    @property
    def strategies(self) -> tuple[Strategy, ...]:
        return self._strategies

    @property
    def gpus(self) -> tuple[GpuSpec, ...]:
        return self._gpus

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, metric: str) -> MetricEntry | None:
        """The entry explaining `metric` (an ncu metric or perf event as the tool prints it),
        or None. Resolution order is described in the module docstring; results are cached."""
        if metric in self._cache:
            return self._cache[metric]
        found = self._resolve(metric)
        self._cache[metric] = found
        return found

    def _resolve(self, metric: str) -> MetricEntry | None:
        candidates = name_candidates(metric)
        for name in candidates:
            entry = self._index.get(name) or self._folded.get(name.lower())
            if entry is not None:
                return entry
        base = candidates[-1].lower()
        for prefix, entry in self._families:
            if base.startswith(prefix.lower()):
                return entry
        return None

    def search(self, text: str, limit: int = 10) -> list[MetricEntry]:
        """Entries ranked for a free-text query: hits in a name, alias or title rank above hits
        in the meaning, reading or hints. All words must match; if no entry matches all of
        them, entries matching any word are ranked by how much they match."""
        words = [w for w in re.split(r"[\s,]+", text.lower()) if w]
        if not words or limit <= 0:
            return []
        scored = [(_score(self._search_text[e.name], words, require_all=True), e)
                  for e in self._entries]
        if not any(score for score, _ in scored):
            scored = [(_score(self._search_text[e.name], words, require_all=False), e)
                      for e in self._entries]
        ranked = sorted((item for item in scored if item[0] > 0),
                        key=lambda item: (-item[0], item[1].name))
        return [entry for _, entry in ranked[:limit]]

    def suggest(self, metric: str, limit: int = 5) -> list[str]:
        """Names close to an unknown `metric`: similar spellings first, then entries whose names
        or texts share its words."""
        base = name_candidates(metric)[-1]
        names: list[str] = []
        for key in difflib.get_close_matches(base, list(self._index), n=limit, cutoff=0.6):
            if self._index[key].name not in names:
                names.append(self._index[key].name)
        words = [w for w in re.split(r"[_./\s:-]+", base.lower())
                 if len(w) > 2 and not _SUFFIX.match(w)]
        for entry in self.search(" ".join(words), limit) if words else []:
            if entry.name not in names:
                names.append(entry.name)
        return names[:limit]

    def strategies_for(self, bottleneck: str) -> list[Strategy]:
        """The strategies for a BOTTLENECKS key, in file order (most promising first)."""
        if bottleneck not in BOTTLENECKS:
            raise SpecError("compendium", "bottleneck", f"one of {sorted(BOTTLENECKS)}",
                            bottleneck)
        return [s for s in self._strategies if s.bottleneck == bottleneck]

    def gpu(self, name_or_arch: str) -> GpuSpec | None:
        """The spec of a GPU named loosely, as the driver or a person writes it ("NVIDIA H200",
        "NVIDIA H100 80GB HBM3", "GeForce RTX 4090"), or of an arch ("sm_90", "9.0": the first
        GPU of that arch in hardware.toml). A different form factor (PCIe, NVL) of a listed
        model does not match, since its clocks and bandwidth differ."""
        tokens = _gpu_tokens(name_or_arch)
        best: GpuSpec | None = None
        best_score = 0
        for spec in self._gpus:
            score = _gpu_score(spec, tokens)
            if score > best_score:
                best, best_score = spec, score
        if best is not None:
            return best
        arch = _as_arch(name_or_arch)
        return next((spec for spec in self._gpus if spec.arch == arch), None)


# --- loading -------------------------------------------------------------------------------


def load_compendium(settings: Settings) -> Compendium:
    """The shipped compendium merged with the user's generated one (if `knowledge build` ran);
    what every command and the library read."""
    return Compendium.load(generated_compendium_path(settings))


def generated_compendium_path(settings: Settings) -> Path:
    """Where `knowledge build` writes the generated compendium (and `load_compendium` reads
    it): <data_dir>/knowledge/compendium.json."""
    return settings.data_dir / "knowledge" / "compendium.json"


def load_curated(root: Path) -> tuple[list[MetricEntry], list[Strategy], list[GpuSpec]]:
    """Read `root`/metrics/*.toml, strategies.toml and hardware.toml, validating everything."""
    metrics_dir = root / "metrics"
    if not metrics_dir.is_dir():
        raise SpecError(str(root), "metrics/", "a folder of [[metric]] TOML files", "nothing")
    entries: list[MetricEntry] = []
    seen: dict[str, str] = {}
    for path in sorted(metrics_dir.glob("*.toml")):
        for entry in _entries_from_file(path):
            for key in (entry.name, *entry.aliases):
                if key in seen:
                    raise SpecError(str(path), f"{entry.name}.name",
                                    f"a name not already used by {seen[key]}", key)
                seen[key] = entry.name
            entries.append(entry)
    strategies = [strategy_from_dict(item, f"{root / 'strategies.toml'}")
                  for item in _tables(root / "strategies.toml", "strategy")]
    gpus = [gpu_from_dict(item, f"{root / 'hardware.toml'}")
            for item in _tables(root / "hardware.toml", "gpu")]
    return entries, strategies, gpus


def _entries_from_file(path: Path) -> list[MetricEntry]:
    out = []
    for item in _tables(path, "metric"):
        entry = entry_from_dict(item, str(path))
        if entry.origin != "curated":
            raise SpecError(str(path), f"{entry.name}.origin", "'curated' (or leave it out)",
                            entry.origin)
        if entry.group != path.stem:
            raise SpecError(str(path), f"{entry.name}.group", f"{path.stem!r}, the file's name",
                            entry.group)
        out.append(entry)
    return out


def _tables(path: Path, key: str) -> list[Mapping[str, Any]]:
    """The `[[key]]` tables of a TOML file; any other top-level key is an error."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(str(path), key, f"a TOML file of [[{key}]] tables", "no file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(str(path), "(syntax)", "valid TOML", str(exc)) from None
    extra = sorted(set(data) - {key})
    if extra:
        raise SpecError(str(path), extra[0], f"only [[{key}]] tables")
    items = data.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise SpecError(str(path), key, f"[[{key}]] tables", type(items).__name__)
    return items


def load_generated(path: Path) -> list[MetricEntry]:
    """Entries from a `knowledge build` JSON file: {"version": 1, "entries": [...]}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(str(path), "(file)", "a readable JSON file", str(exc)) from None
    if not isinstance(data, dict) or data.get("version") != GENERATED_VERSION:
        got = data.get("version") if isinstance(data, dict) else type(data).__name__
        raise SpecError(str(path), "version", f"{GENERATED_VERSION}", got)
    items = data.get("entries")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise SpecError(str(path), "entries", "a list of metric entries", type(items).__name__)
    return [replace(entry_from_dict(item, str(path)), origin="generated") for item in items]


# --- search and GPU matching ---------------------------------------------------------------

_FORMS = {"pcie", "sxm", "nvl"}
_GPU_NOISE = {"nvidia", "geforce", "tesla"}


def _search_fields(entry: MetricEntry) -> tuple[tuple[str, ...], str, str, str]:
    names = tuple(n.lower() for n in (entry.name, *entry.aliases))
    tags = " ".join((entry.group, *entry.indicates)).lower()
    body = " ".join((entry.meaning, entry.reading, entry.hardware_unit, *entry.hints,
                     *entry.related)).lower()
    return names, entry.title.lower(), tags, body


def _score(fields: tuple[tuple[str, ...], str, str, str], words: list[str],
           require_all: bool) -> int:
    names, title, tags, body = fields
    total = 0
    for word in words:
        if word in names:
            score = 100
        elif any(word in name for name in names):
            score = 20
        elif word in title:
            score = 15
        elif word in tags:
            score = 5
        elif word in body:
            score = 1
        else:
            score = 0
        if score == 0 and require_all:
            return 0
        total += score
    return total


def _gpu_tokens(text: str) -> list[str]:
    words = re.split(r"[^a-z0-9]+", text.lower())
    return [re.sub(r"^sxm\d$", "sxm", w) for w in words if w and w not in _GPU_NOISE]


def _gpu_score(spec: GpuSpec, tokens: list[str]) -> int:
    if not tokens:
        return 0
    phrases = [_gpu_tokens(p) for p in (spec.name, *spec.aliases)]
    if any(p == tokens for p in phrases):
        return 1000
    spec_forms = {t for p in phrases for t in p if t in _FORMS}
    asked_forms = {t for t in tokens if t in _FORMS}
    if asked_forms and spec_forms and not asked_forms & spec_forms:
        return 0  # an H100 NVL or A100 PCIe is not the SXM part we have numbers for
    return max((len(p) for p in phrases if p and set(p) <= set(tokens)), default=0)


def _as_arch(text: str) -> str | None:
    text = text.strip().lower()
    match = re.fullmatch(r"(?:sm|compute)_?(\d+)[a-z]?", text)
    if match:
        return f"sm_{match.group(1)}"
    match = re.fullmatch(r"(\d+)\.(\d)", text)
    return f"sm_{match.group(1)}{match.group(2)}" if match else None
