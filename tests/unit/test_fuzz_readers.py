"""Bad input in, one clear line out: a corpus of broken and foreign files (truncated, garbled,
empty, wrong-encoding, binary, of another shape, an image, another profiler's report), made
from the recorded fixtures, through every report reader and the commands that read them
(explain, triage and its JUnit, trace, profile and bench where they read a file), asserting no
traceback, one "Error:" line on stderr and the contract's exit status (2 bad input, 3 the
environment, never 1: a CI gate must not report a regression it did not find); and through the
API (read_report, read_launches and every launch it loads later, explain, triage) asserting a
PragmaError of the right kind. test_fuzz_hypothesis.py adds random bytes and mutations of the
recorded files."""

from __future__ import annotations

import gzip
import json
import random
import stat
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pragma_ncu import api
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import InputError, PragmaError, ToolchainError
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.store import Store
from pragma_ncu.profile.read import read_launches, read_report

ROOT = Path(__file__).resolve().parents[2]
SILU = ROOT / "tests" / "fixtures" / "profiles" / "silu_and_mul"
GOOD = SILU / "profile.json.gz"
XSD = ROOT / "tests" / "fixtures" / "junit" / "junit.xsd"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + bytes(range(64))


def _raw() -> str:
    return gzip.decompress((SILU / "raw.csv.gz").read_bytes()).decode()


def _profile_text() -> str:
    return gzip.decompress(GOOD.read_bytes()).decode()


def _cut(data: bytes, fraction: float) -> bytes:
    return data[: int(len(data) * fraction)]


def _flipped(data: bytes, seed: int, count: int = 8) -> bytes:
    rng = random.Random(seed)
    out = bytearray(data)
    for _ in range(count):
        at = rng.randrange(len(out))
        out[at] ^= 1 << rng.randrange(8)
    return bytes(out)


def _garbage_gzip() -> bytes:
    """A gzip header followed by a body that is no deflate stream (the issue's probe)."""
    return bytes.fromhex("1f8b0800000000000003") + random.Random(7).randbytes(400)


def _rows(text: str, change: Callable[[list[str]], list[str]]) -> str:
    return "\n".join(change(text.splitlines())) + "\n"


def _short(lines: list[str], at: int) -> list[str]:
    return [*lines[:at], ",".join(lines[at].split(",")[:5]), *lines[at + 1:]]


def _files() -> dict[str, bytes]:
    """name -> content; the name's suffix picks the reader."""
    profile, raw = _profile_text().encode(), _raw()
    gz = GOOD.read_bytes()
    deep = b"[" * 100_000 + b"]" * 100_000
    files = {
        "empty.json": b"", "empty.json.gz": b"", "empty.csv": b"",
        "cut-third.json.gz": _cut(gz, 1 / 3), "cut-half.json.gz": _cut(gz, 0.5),
        "cut-end.json.gz": gz[:-1], "garbage-body.json.gz": _garbage_gzip(),
        "flipped.json.gz": _flipped(gz, 1), "plain-as-gz.json.gz": profile,
        "cut.json": _cut(profile, 0.5), "binary.json": random.Random(3).randbytes(300),
        "utf16.json": profile.decode().encode("utf-16"),
        "latin1.json": profile.replace(b'"silu_and_mul"', '"silu_\xe9"'.encode("latin-1")),
        "nul.json": profile[:100] + b"\x00" * 50 + profile[100:],
        "list.json": b"[1, 2, 3]", "number.json": b"42", "string.json": b'"profile"',
        "deep.json": deep,
        "other-shape.json": json.dumps({"traceEvents": [], "displayTimeUnit": "ns"}).encode(),
        "schema-only.json": b'{"schema": 1}',
        "kernels-text.json": json.dumps({"schema": 1, "kernels": "x", "reader": "csv"}).encode(),
        "kernel-ints.json": json.dumps({"schema": 1, "kernels": [1, 2], "reader": "csv"}).encode(),
        "metric-bad.json": json.dumps({"reader": "csv", "kernels": [
            {"name": "k", "metrics": {"gpu__time_duration.sum": 5}}]}).encode(),
        "rule-bad.json": json.dumps({"reader": "csv", "kernels": [
            {"name": "k", "metrics": {}, "rules": [7]}]}).encode(),
        "image.json": PNG, "image.csv": PNG,
        "short-row.csv": _rows(raw, lambda lines: _short(lines, 2)).encode(),
        "short-units.csv": _rows(raw, lambda lines: _short(lines, 1)).encode(),
        "no-units.csv": _rows(raw, lambda lines: [lines[0], *lines[2:]]).encode(),
        "header-only.csv": _rows(raw, lambda lines: lines[:1]).encode(),
        "header-cut.csv": _rows(raw, lambda lines: [lines[0][:200], *lines[1:]]).encode(),
        "foreign.csv": b"name,value\nalpha,1\nbeta,2\n",
        "id-only.csv": b'"ID","x"\n"","a"\n"0","1"\n',
        "nul.csv": raw[:300].encode() + b"\x00\x00" + raw[300:].encode(),
        "latin1.csv": raw.replace("silu_and_mul", "silu_\xe9", 1).encode("latin-1"),
        "garbage.csv.gz": _garbage_gzip(), "cut.csv.gz": _cut(gzip.compress(raw.encode()), 0.5),
        "trace.nsys-rep": PNG, "notes.txt": b"hello\n",
    }
    return files


def _folders() -> dict[str, dict[str, bytes]]:
    """CSV page folders: name -> {page file: content}."""
    raw = _raw()
    details = gzip.decompress((SILU / "details.csv.gz").read_bytes()).decode()
    return {
        "folder-empty": {},
        "folder-short-row": {"raw.csv": _rows(raw, lambda lines: _short(lines, 2)).encode()},
        "folder-short-units": {"raw.csv": _rows(raw, lambda lines: _short(lines, 1)).encode()},
        "folder-foreign": {"raw.csv": b"name,value\nalpha,1\n"},
        "folder-image": {"raw.csv": PNG, "details.csv": PNG},
        "folder-bad-details": {"details.csv": b"a,b\n1,2\n"},
        "folder-garbage-gz": {"raw.csv.gz": _garbage_gzip()},
        "folder-bad-source": {"raw.csv": raw.encode(), "details.csv": details.encode(),
                              "source.csv": PNG},
        "folder-empty-pages": {"raw.csv": b"", "details.csv": b""},
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("corpus")
    found = {}
    for name, data in _files().items():
        (root / name).write_bytes(data)
        found[name] = root / name
    for name, pages in _folders().items():
        (root / name).mkdir()
        for page, data in pages.items():
            (root / name / page).write_bytes(data)
        found[name] = root / name
    return found


# Bad input each reader must refuse; a garbled copy that still reads whole is allowed to pass.
MAY_READ = {"flipped.json.gz", "latin1.json", "latin1.csv", "metric-bad.json",
            "folder-bad-source", "nul.csv"}


def _one_error_line(result: Result) -> None:
    assert "Traceback" not in result.output, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr


def _invoke(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner(env=env).invoke(cli, [str(a) for a in args])


def test_the_corpus_is_what_it_says(corpus):
    with pytest.raises(zlib.error):
        gzip.decompress(corpus["garbage-body.json.gz"].read_bytes())
    with pytest.raises(EOFError):
        gzip.decompress(corpus["cut-half.json.gz"].read_bytes())
    assert len(corpus) == len(_files()) + len(_folders()) > 45


@pytest.mark.parametrize("name", sorted([*_files(), *_folders()]))
def test_explain_answers_each_bad_file_with_one_line(corpus, name):
    result = _invoke("explain", corpus[name])
    if name in MAY_READ and result.exit_code == 0:
        return
    assert result.exit_code == 2, (name, result.output)
    _one_error_line(result)


@pytest.mark.parametrize("name", sorted([*_files(), *_folders()]))
def test_triage_never_reports_a_regression_it_did_not_find(corpus, name):
    for base, new in ((GOOD, corpus[name]), (corpus[name], GOOD)):
        result = _invoke("triage", base, new)
        assert "regression" not in result.stdout.lower() or name in MAY_READ, result.output
        if name in MAY_READ and result.exit_code in (0, 1):
            continue
        assert result.exit_code == 2, (name, result.output)
        _one_error_line(result)


@pytest.mark.parametrize("name", ["cut-half.json.gz", "garbage-body.json.gz", "short-row.csv",
                                  "folder-short-units", "image.json", "trace.nsys-rep"])
def test_triage_junit_on_each_bad_file_is_an_error_case(corpus, name):
    xmlschema = pytest.importorskip("xmlschema")
    result = _invoke("triage", GOOD, corpus[name], "--format", "junit")
    assert result.exit_code == 2, result.output
    xmlschema.XMLSchema(str(XSD)).validate(result.stdout)
    assert 'errors="1"' in result.stdout and 'type="input"' in result.stdout
    _one_error_line(result)


def _fake_ncu(folder: Path) -> dict[str, str]:
    """An ncu that names its version and refuses every report, as ncu does a corrupt one, and
    an ncu_report whose load_report fails the same way."""
    ncu = folder / "ncu"
    ncu.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then\n"
                   "echo 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
                   "echo 'Version 2025.3.1.0 (build 1) (public-release)'\nexit 0\nfi\n"
                   "echo '==ERROR== Failed to load report: the file is not a report' >&2\n"
                   "exit 1\n")
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    (folder / "py").mkdir(exist_ok=True)
    (folder / "py" / "ncu_report.py").write_text(
        "def load_report(path):\n    raise RuntimeError('Failed to load report ' + path)\n")
    return {"PRAGMA_NCU_NCU": str(ncu), "PRAGMA_NCU_NCU_PYTHON": str(folder / "py")}


@pytest.mark.parametrize("content", ["png", "empty", "json", "random", "truncated"])
def test_a_bad_ncu_rep_is_bad_input_with_ncu_and_without_unless_only_ncu_can_tell(
        tmp_path, content):
    """Issue 35: an empty or random .ncu-rep said "install Nsight Compute" (exit 3) without
    ncu. A file that does not start as a report does is not one, with ncu or without (exit 2);
    only a truncated report, which starts right, needs ncu to be told apart (exit 3 without)."""
    data = {"png": PNG, "empty": b"", "json": _profile_text().encode(),
            "random": bytes(range(256)) * 8,
            "truncated": _cut((SILU / "report.ncu-rep").read_bytes(), 0.3)}[content]
    report = tmp_path / f"{content}.ncu-rep"
    report.write_bytes(data)
    env = _fake_ncu(tmp_path)
    for args in (("explain", report), ("triage", GOOD, report)):
        result = _invoke(*args, env=env)
        assert result.exit_code == 2, result.output
        _one_error_line(result)
        without = _invoke(*args, env={"PRAGMA_NCU_NCU": str(tmp_path / "no-ncu")})
        if content == "truncated":
            assert without.exit_code == 3 and "needs Nsight Compute" in without.stderr
        else:
            assert without.exit_code == 2 and "not a report" in without.stderr
            assert "Nsight Compute" not in without.stderr.replace("an Nsight Compute report",
                                                                  "")
        _one_error_line(without)


def _store_with_a_run(path: Path, record: str | None, profile: Path | None) -> str:
    with Store.open(path) as db:
        run = db.create_run("k", "k.toml", {"kernel": "k.cu"})
        db.begin_round(run, 0)
        if record is not None:
            db.conn.execute("INSERT INTO decisions (run_id, round, created, action, record) "
                            "VALUES (?, 0, 0, 'baseline', ?)", (run, record))
            db.conn.execute("UPDATE rounds SET status = 'done' WHERE run_id = ?", (run,))
    return run


@pytest.mark.parametrize("case", ["garbage-store", "cut-store", "bad-json-record",
                                  "other-record", "no-such-run", "empty-store-file"])
def test_run_sides_and_traces_of_a_bad_store(tmp_path, corpus, case):
    store = tmp_path / "runs.sqlite"
    run = "last"
    if case == "garbage-store":
        store.write_bytes(PNG * 40)
    elif case == "empty-store-file":
        store.write_bytes(b"")
    elif case == "cut-store":
        _store_with_a_run(store, None, None)
        store.write_bytes(_cut(store.read_bytes(), 0.4))
    elif case == "bad-json-record":
        run = _store_with_a_run(store, "{not json", None)
    elif case == "other-record":
        run = _store_with_a_run(store, json.dumps({"round": "zero", "best_after": 3}), None)
    else:
        _store_with_a_run(store, None, None)
        run = "no-such-run"
    for args in (("triage", f"run:{run}", GOOD, "--store", store),
                 ("trace", run, "--store", store)):
        result = _invoke(*args)
        if case == "empty-store-file" and args[0] == "trace" and result.exit_code == 0:
            continue  # an empty file is an empty store to SQLite: nothing to trace, said so
        assert result.exit_code == 2, (case, args[0], result.output)
        _one_error_line(result)


@pytest.mark.parametrize("name", ["image.json", "empty.csv", "binary.json"])
def test_profile_and_bench_on_a_foreign_kernel_file(tmp_path, corpus, name):
    kernel = tmp_path / "foreign.cu"
    kernel.write_bytes(corpus[name].read_bytes())
    for command in ("profile", "bench"):
        result = _invoke(command, "--kernel", kernel)
        assert result.exit_code == 2, result.output  # no spec beside it: bad input
        _one_error_line(result)


# --- through the API: a PragmaError of the right kind ---------------------------------------


@pytest.mark.parametrize("name", sorted([*_files(), *_folders()]))
def test_the_api_raises_input_errors_only(corpus, name):
    path = corpus[name]
    settings = load_settings().with_(ncu=None)
    for read in (lambda: read_report(path, settings),
                 lambda: _all_launches(path, settings),
                 lambda: api.explain(path, settings=settings),
                 lambda: api.triage(GOOD, path, settings=settings)):
        try:
            read()
        except ToolchainError:
            assert path.suffix not in (".json", ".gz", ".csv") and not path.is_dir()
        except InputError:
            pass
        except PragmaError as exc:  # pragma: no cover - the assertion says what
            raise AssertionError(f"{name}: {type(exc).__name__} is not an InputError") from exc


def _all_launches(path: Path, settings) -> None:
    found = read_launches(path, settings)
    found.full([k.index for k in found.profile.kernels])
