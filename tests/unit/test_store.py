"""The run store: what goes in comes out, a killed writer leaves a consistent file, and bad
files or run ids are clear errors."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pragma_ncu.infra.store import Store, StoreError, source_hash

ROOT = Path(__file__).resolve().parents[2]


def test_runs_rounds_candidates_and_decisions_round_trip(tmp_path: Path) -> None:
    with Store.open(tmp_path / "runs.sqlite") as store:
        run = store.create_run("silu_and_mul", "examples/silu_and_mul.toml", {"budget": 3},
                               device="NVIDIA H200")
        store.begin_round(run, 0)
        cid = store.add_candidate(run, 0, "__global__ void k() {}", {"VEC": 8}, "ok", 64.1,
                                  {"registers": 32}, [{"shape": "llama-7b", "median_us": 64.1}],
                                  {"dram_pct": 91.0}, "r0.ncu-rep")
        store.add_candidate(run, 0, "bad", {"VEC": 4}, "wrong_answer", None, {}, [])
        store.close_round(run, 0, "re-tune", {"why": "long scoreboard, DRAM 40%"})
        store.set_run_status(run, "done", {"speedup": 1.77})
    with Store.open(tmp_path / "runs.sqlite") as store:
        row = store.run(run)
        assert (row.kernel, row.status, row.device, row.config) == (
            "silu_and_mul", "done", "NVIDIA H200", {"budget": 3})
        assert row.summary == {"speedup": 1.77} and row.finished is not None
        cands = store.candidates(run, 0)
        assert [c.id for c in cands][0] == cid and [c.verified for c in cands] == [True, False]
        first = cands[0]
        assert first.source_hash == source_hash("__global__ void k() {}")
        assert first.params == {"VEC": 8} and first.objective_us == 64.1
        assert first.profile_summary == {"dram_pct": 91.0} and first.report_path == "r0.ncu-rep"
        assert store.decisions(run) == [(0, "re-tune", {"why": "long scoreboard, DRAM 40%"})]
        assert store.rounds(run) == [(0, "done")]
        assert [r.id for r in store.runs()] == [run]


def test_a_killed_writer_leaves_a_file_that_resumes(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    child = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from pragma_ncu.infra.store import Store
        store = Store.open(Path({str(path)!r}))
        run = store.create_run("k", "k.toml", {{}})
        store.begin_round(run, 0)
        store.add_candidate(run, 0, "src0", {{"A": 1}}, "ok", 10.0, {{}}, [])
        store.close_round(run, 0, "tune", {{}})
        store.begin_round(run, 1)
        store.add_candidate(run, 1, "src1", {{"A": 2}}, "ok", 9.0, {{}}, [])
        print(run, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert proc.returncode == -9
    run = proc.stdout.strip()
    with Store.open(path) as store:
        assert store.run(run).status == "running"
        assert store.rounds(run) == [(0, "done"), (1, "running")]
        assert [c.source for c in store.candidates(run)] == ["src0", "src1"]


def test_bad_files_and_unknown_runs_are_clear_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database, " * 100)
    with pytest.raises(StoreError, match="not a pragma-ncu run store"):
        Store.open(junk)
    with Store.open(tmp_path / "ok.sqlite") as store:
        store.create_run("k", "k.toml", {})
        with pytest.raises(StoreError, match="no run 'nope'.*known: 2"):
            store.run("nope")
    conn = sqlite3.connect(str(tmp_path / "ok.sqlite"))
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema 99"):
        Store.open(tmp_path / "ok.sqlite")
