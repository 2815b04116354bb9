"""Issue 25's build and input probes on a GPU machine, through the command line, in one go.

    python tools/gpu_inputs_check.py OUT

Each case writes its kernel and spec under OUT/cases/<case>, runs one `pragma-ncu` command
(bounded by --timeout seconds) with its output in OUT/<case>.log, and is checked:

- header_32 / header_1024: a kernel whose shared array's size comes from tile.h, found through
  `-Iinc`, benched, the header edited from 32 to 1024 floats, benched again: verified both
  times, 128 B then 4096 B of static shared memory (the old cache reported 128 B twice);
- latin1: Latin-1 bytes in a comment: verified (was a UnicodeDecodeError);
- too_big_for_the_gpu: 2 x 128 GiB of fp32, within the 1 TiB limit a spec is read with but
  beyond any H100/H200: refused once the worker says its memory, naming the GPU (exit 2
  with t25b's exit codes, 1 before them);
- missing_kernel_early / missing_kernel_build: a spec naming a kernel its source lacks, in a
  self-contained source (refused before building) and in one that includes a header (the
  build says it): 'no kernel named ... (it defines: ...)' both times;
- explain_compile_error: explain on a kernel that does not compile: nvcc's error line shown.

Prints a table (case, expected, seen, ok) and writes OUT/summary.json; exit 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
KERNEL = """{head}
extern "C" __global__ void tile_copy(float* y, const float* x, long long n) {{
    __shared__ float s[TILE];  // its size is all the header decides
    if (threadIdx.x < TILE) s[threadIdx.x] = 0.f;
    __syncthreads();
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + s[threadIdx.x % TILE];
}}
"""
SPEC = """
[kernel]
name = "{name}"
flags = {flags}
[launch]
grid = ["ceil_div(n, 256)"]
block = ["256"]
[[args]]
name = "y"
dtype = "fp32"
shape = ["n"]
role = "output"
[[args]]
name = "x"
dtype = "fp32"
shape = ["n"]
role = "input"
[[args]]
name = "n"
dtype = "{n_type}"
role = "scalar"
value = "n"
[[shapes]]
name = "s"
n = {n}
[reference]
function = "reference.py:tile_copy"
"""
REFERENCE = "def tile_copy(x, n):\n    return x.astype('float64')\n"


def case(out: Path, name: str, head: str = '#include "tile.h"', *, spec_name: str = "tile_copy",
         flags: str = '["-Iinc"]', n: int = 1_000_003, n_type: str = "int64",
         body: str | None = None, data: bytes | None = None) -> Path:
    folder = out / "cases" / name
    (folder / "inc").mkdir(parents=True, exist_ok=True)
    (folder / "inc" / "tile.h").write_text("#define TILE 32\n")
    source = folder / "k.cu"
    if data is not None:
        source.write_bytes(data)
    else:
        source.write_text(body if body is not None else KERNEL.format(head=head))
    (folder / "k.toml").write_text(SPEC.format(name=spec_name, flags=flags, n=n, n_type=n_type))
    (folder / "reference.py").write_text(REFERENCE)
    return folder


def run(out: Path, name: str, folder: Path, args: list[str], timeout: float) -> tuple[int, str]:
    env = {**os.environ, "PRAGMA_NCU_CACHE": str(out / "cache")}
    try:
        proc = subprocess.run([sys.executable, "-m", "pragma_ncu", *args], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=timeout)
        rc, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        rc, text = 124, f"timed out after {timeout:g} s"
    (out / f"{name}.log").write_text(f"$ pragma-ncu {' '.join(args)}\nrc={rc}\n{text}")
    return rc, text


def bench_seen(rc: int, text: str) -> tuple[str, bool, int | None]:
    try:
        data = json.loads(text[text.index("{"):])
    except ValueError:
        return f"rc={rc}, no JSON: {text.strip()[-160:]}", False, None
    smem = (data["build"].get("resources") or {}).get("shared_static")
    statuses = [m["status"] for m in data.get("measurements", [])]
    verified = rc == 0 and statuses == ["ok"]
    return (f"rc={rc}, smem {smem} B, cached {data['build']['cache_hit']}, {statuses}",
            verified, smem)


def checks(out: Path, timeout: float) -> list[list[str]]:
    rows: list[list[str]] = []

    def check(name: str, expected: str, seen: str, ok: bool) -> None:
        seen = " ".join(seen.split())
        rows.append([name, expected, seen[:110], "ok" if ok else "FAILED"])
        print(f"{name}: {'ok' if ok else 'FAILED'}: {seen[:200]}", flush=True)

    bench = ["bench", "--kernel", "k.cu", "--format", "json", "--require-gpu"]
    folder = case(out, "header")
    seen, ok, smem = bench_seen(*run(out, "header_32", folder, bench, timeout))
    check("header_32", "verified, 128 B", seen, ok and smem == 128)
    (folder / "inc" / "tile.h").write_text("#define TILE 1024\n")
    seen, ok, smem = bench_seen(*run(out, "header_1024", folder, bench, timeout))
    check("header_1024", "verified, 4096 B, not cached", seen,
          ok and smem == 4096 and "cached False" in seen)
    folder = case(out, "latin1", data=b"// caf\xe9: 5 \xb5s per call\n"
                  + KERNEL.format(head="#define TILE 64").encode())
    seen, ok, smem = bench_seen(*run(out, "latin1", folder, bench, timeout))
    check("latin1", "verified", seen, ok and smem == 256)
    text_case(out, rows, check, timeout)
    return rows


def text_case(out: Path, rows: list[list[str]], check: Callable[[str, str, str, bool], None],
              timeout: float) -> None:
    """The cases judged by what the command says."""
    bench = ["bench", "--kernel", "k.cu", "--require-gpu"]
    folder = case(out, "too_big", n=2**35, n_type="int64")
    rc, text = run(out, "too_big_for_the_gpu", folder, bench, timeout)
    check("too_big_for_the_gpu", "refused: 'arrays within ... (the memory of <GPU>'",
          f"rc={rc}: {text.strip().splitlines()[-1] if text.strip() else ''}",
          rc in (1, 2) and "the memory of" in text and "Traceback" not in text)
    folder = case(out, "missing_early", head="#define TILE 32", spec_name="tile_cpy", flags="[]")
    rc, text = run(out, "missing_kernel_early", folder, bench, timeout)
    check("missing_kernel_early", "no kernel named tile_cpy in k.cu (it defines: tile_copy)",
          f"rc={rc}: {text.strip()[-120:]}",
          "no kernel named tile_cpy in k.cu (it defines: tile_copy)" in text)
    folder = case(out, "missing_build", spec_name="tile_cpy")
    rc, text = run(out, "missing_kernel_build", folder, bench, timeout)
    check("missing_kernel_build", "the same words, from the build",
          f"rc={rc}: {text.strip()[-120:]}",
          "no kernel named tile_cpy in k.cu (it defines: tile_copy)" in text)
    folder = case(out, "broken", body=KERNEL.format(head="#define TILE 32").replace(
        "__syncthreads();", "int q = ;"))
    rc, text = run(out, "explain_compile_error", folder, ["explain", "k.cu"], timeout)
    check("explain_compile_error", "k.cu does not compile + nvcc's 'error: expected an "
          "expression'", f"rc={rc}: {' '.join(text.split())[-120:]}",
          "does not compile" in text and "error: expected an expression" in text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per command")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rows = checks(args.out.resolve(), args.timeout)
    print(tabulate(rows, ["case", "expected", "seen", "ok"], tablefmt="github"))
    print(f"{sum(r[3] == 'ok' for r in rows)}/{len(rows)} ok in "
          f"{time.perf_counter() - start:.0f} s")
    (args.out / "summary.json").write_text(json.dumps(
        [dict(zip(["case", "expected", "seen", "ok"], r, strict=True)) for r in rows],
        indent=1) + "\n")
    return 0 if all(r[3] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
