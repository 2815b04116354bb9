"""The diagnosis calibration corpus, judged from its recordings (no GPU): for every kernel of
examples/corpus/expected.toml and every collection (ncu's default set, `--set full`, and
`pragma-ncu profile`), the expected top cause and the diagnosis' top finding.

Used by tests/unit/test_corpus.py (CI) and tools/corpus_table.py (the table in
docs/profiler.md). Recordings: tests/fixtures/corpus/ (tools/record_corpus.py).
"""

from __future__ import annotations

import gzip
import json
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pragma_ncu.backends import diagnose_in
from pragma_ncu.backends.cuda.diagnosis.signals import L2_CARRYING, PIPES, Signals
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.profile import csv_reader, normalize
from pragma_ncu.profile.profiles import KernelProfile, Profile

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "corpus"
EXPECTED = tomllib.loads((ROOT / "examples" / "corpus" / "expected.toml").read_text())
COLLECTIONS = ("default", "full", "ours")
SPLITS = ("calibration", "holdout", "holdout2")
# The kernels planted at their roofline: copies at the DRAM ceiling, a pipe at its peak.
AT_ROOFLINE = ("bandwidth_ok", "copy_half", "rowsum_warp", "copy_float2", "fma_bound",
               "sfu_bound", "fp64_fma", "rsqrt_chain", "sincos_chain")
SOL_CLASSES = {"DRAM": "memory_bandwidth", L2_CARRYING: "memory_bandwidth", "L2": "l2_bandwidth",
               "L1": "l1_bandwidth", "issue": "instruction_issue", "LSU": "l1_bandwidth",
               **PIPES}


def _page(folder: Path, stem: str) -> str:
    path = folder / f"{stem}.csv.gz"
    return gzip.decompress(path.read_bytes()).decode() if path.is_file() else ""


def read_pages(folder: Path, raw: str = "raw", details: str = "details") -> Profile:
    """A recorded folder's CSV pages (raw page in base or display units) as a Profile."""
    dump = csv_reader.dump_pages(_page(folder, raw), _page(folder, details),
                                 _page(folder, "source"), str(folder))
    profile = normalize.from_raw(dump)
    info = folder / "collection.json"
    if info.is_file():
        from dataclasses import replace
        profile = replace(profile, collection=json.loads(info.read_text()))
    return profile


@cache
def collection(name: str, raw: str = "raw") -> dict[str, tuple[Profile, KernelProfile]]:
    """kernel name -> (profile, kernel) of one collection."""
    out: dict[str, tuple[Profile, KernelProfile]] = {}
    if name == "ours":
        for folder in sorted((FIXTURES / "ours").iterdir()):
            profile = read_pages(folder, raw)
            out[folder.name] = (profile, profile.kernels[0])
        return out
    for batch in sorted((FIXTURES / name).iterdir()):
        profile = read_pages(batch, raw)
        out.update({k.name: (profile, k) for k in profile.kernels})
    return out


@cache
def knowledge() -> Compendium:
    return Compendium.load()


def sol_class(k: KernelProfile) -> str:
    """What the speed-of-light picture alone shows: the busiest unit's class, or latency-bound
    when nothing runs at 60% of its peak (the expectation for causes a collection cannot see)."""
    unit, level = Signals.of(k).busiest()
    return SOL_CLASSES.get(unit, "latency_bound") if level >= 0.6 else "latency_bound"


def expected(name: str, coll: str, k: KernelProfile) -> str:
    entry = EXPECTED[name]
    want = str(entry.get(coll, entry["cause"]) if coll == "default" else entry["cause"])
    return sol_class(k) if want == "sol" else want


@dataclass(frozen=True)
class Verdict:
    kernel: str
    collection: str
    split: str
    expected: str
    diagnosis: Diagnosis

    @property
    def top(self) -> str:
        return self.diagnosis.classification

    @property
    def right(self) -> bool:
        return self.top == self.expected


def verdicts(coll: str, raw: str = "raw") -> list[Verdict]:
    recorded = collection(coll, raw)
    out = []
    for name, entry in EXPECTED.items():
        profile, k = recorded[name]
        d = diagnose_in(profile, k, knowledge())
        out.append(Verdict(name, coll, str(entry["split"]), expected(name, coll, k), d))
    return out
