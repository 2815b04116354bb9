"""Hypothesis over the report readers: random bytes, and truncated, bit-flipped and spliced
copies of the recorded profile and CSV pages, under every name a reader dispatches on (.json,
.json.gz, .csv, .csv.gz, a CSV folder); each is read whole (read_report, read_launches and every
launch it loads) or refused with an InputError, nothing else. Derandomized (CI sees the same
examples every run) and bounded (40 examples a test)."""

from __future__ import annotations

import contextlib
import gzip
from pathlib import Path

import pytest

from pragma_ncu.infra.errors import InputError
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.profile.read import read_launches, read_report

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SILU = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "profiles" / "silu_and_mul"


def _raw() -> str:
    return gzip.decompress((SILU / "raw.csv.gz").read_bytes()).decode()


def _all_launches(path: Path, settings) -> None:
    found = read_launches(path, settings)
    found.full([k.index for k in found.profile.kernels])


SUFFIXES = (".json", ".json.gz", ".csv", ".csv.gz")
SEEDS = {".json": gzip.decompress((SILU / "profile.json.gz").read_bytes()),
         ".json.gz": (SILU / "profile.json.gz").read_bytes(),
         ".csv": _raw().encode(), ".csv.gz": (SILU / "raw.csv.gz").read_bytes()}
FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _read_all(path: Path) -> None:
    """Every reader of `path`; an InputError is the only acceptable failure."""
    settings = load_settings().with_(ncu=None)
    for read in (lambda: read_report(path, settings), lambda: _all_launches(path, settings)):
        with contextlib.suppress(InputError):
            read()


@FUZZ
@given(suffix=st.sampled_from(SUFFIXES), data=st.binary(max_size=3000))
def test_random_bytes_are_input_errors(tmp_path_factory, suffix, data):
    path = tmp_path_factory.mktemp("bytes") / f"fuzz{suffix}"
    path.write_bytes(data)
    _read_all(path)


@FUZZ
@given(suffix=st.sampled_from(SUFFIXES), cut=st.floats(0, 1), flips=st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 7)), max_size=6),
       insert=st.binary(max_size=8))
def test_mutated_recordings_are_read_or_input_errors(tmp_path_factory, suffix, cut, flips,
                                                     insert):
    data = bytearray(SEEDS[suffix][: max(1, int(len(SEEDS[suffix]) * cut))])
    for where, bit in flips:
        data[min(len(data) - 1, int(len(data) * where))] ^= 1 << bit
    at = len(data) // 2
    path = tmp_path_factory.mktemp("mutated") / f"fuzz{suffix}"
    path.write_bytes(bytes(data[:at]) + insert + bytes(data[at:]))
    _read_all(path)


@FUZZ
@given(lines=st.lists(st.lists(st.text(alphabet='ab,"1. \t', max_size=12), max_size=6),
                      max_size=6), keep_header=st.booleans())
def test_csv_of_any_shape_is_read_or_an_input_error(tmp_path_factory, lines, keep_header):
    raw = _raw().splitlines()
    head = raw[:2] if keep_header else []
    body = [",".join(cells) for cells in lines]
    folder = tmp_path_factory.mktemp("pages")
    (folder / "raw.csv").write_text("\n".join([*head, *body]) + "\n")
    _read_all(folder)

