"""One `pragma-ncu` command measured as a child process, the way a user or a CI step runs it:
its wall time and its peak resident memory (ru_maxrss of RUSAGE_CHILDREN, the largest of that
process and its own children, such as the ncu_report reader). That maximum never goes down, so
a caller measuring several runs measures each from its own intermediate process."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Measured:
    wall_s: float
    peak_rss_mb: float
    returncode: int
    stdout: bytes
    stderr: bytes


def run_pragma(*args: str) -> Measured:
    """`python -m pragma_ncu ARGS` from this checkout, measured."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pragma_ncu", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    # The Popen object reaped the child already; its children's usage is in RUSAGE_CHILDREN.
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return Measured(round(wall, 2), round(peak_kb / 1024, 1), proc.returncode, out, err)
