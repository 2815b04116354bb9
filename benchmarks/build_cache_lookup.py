"""What a compile cache lookup costs, the two ways of keying it on the headers a build reads.

- manifest (what `pragma_ncu.build.compile` does, as ccache's direct mode): the request's key
  names the list of files earlier compiles read; a lookup hashes them again. "cold" is a
  process's first lookup (every header read and hashed), "warm" every later one (a header whose
  stat is unchanged is not read again: a search looks the same headers up hundreds of times).
- preprocessor per key: run the compiler's preprocessor (`-M`, the dependency list only) on
  every lookup to learn which headers the build reads; the hashing comes on top of this.

A full compile is timed too, for scale. Runs on any machine with nvcc and cc, no GPU:

    python benchmarks/build_cache_lookup.py --repeats 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tabulate import tabulate  # noqa: E402

from pragma_ncu.backends.cpu import build as cpu_build  # noqa: E402
from pragma_ncu.backends.cuda import build as cuda_build  # noqa: E402
from pragma_ncu.build import compile as builds  # noqa: E402
from pragma_ncu.build import task as tasks  # noqa: E402
from pragma_ncu.infra.settings import load_settings  # noqa: E402
from pragma_ncu.infra.toolchain import find_nvcc  # noqa: E402
from pragma_ncu.spec.file import load_spec  # noqa: E402


def median_ms(fn: Callable[[], object], repeats: int, before: Callable[[], None] | None = None
              ) -> float:
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def forget_hashes() -> None:
    builds._DIGESTS.clear()  # a fresh process's state: every header hashed again


def measure(name: str, manifest: Path, build: Callable[[], builds.BuildResult],
            preprocess: list[str], repeats: int) -> list[object]:
    first = build()
    assert first.ok and not first.cache_hit, first.log
    headers = len(json.loads(manifest.read_text())[-1]["inputs"])
    cold = median_ms(build, repeats, forget_hashes)
    warm = median_ms(build, repeats)
    pre = median_ms(lambda: subprocess.run(preprocess, capture_output=True, check=True),
                    max(3, repeats // 4))
    return [name, headers, f"{first.seconds * 1e3:.0f}", f"{cold:.2f}", f"{warm:.2f}",
            f"{pre:.0f}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, help="write the table as JSON here too")
    args = parser.parse_args()
    settings = load_settings()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = builds.BuildCache(Path(tmp) / "build")
        nvcc = find_nvcc(settings)
        spec = load_spec(ROOT / "examples" / "silu_and_mul.toml")
        req = tasks.build_request(spec, "sm_90")
        src = Path(tmp) / "kernel.cu"
        src.write_text(req.source)
        rows.append(measure("nvcc: examples/silu_and_mul.cu",
                            cache.manifest(cuda_build.cache_key(req, nvcc)),
                            lambda: cuda_build.build(req, nvcc, cache),
                            [nvcc.path, f"-arch={req.arch}", "-M",
                             *builds.source_arguments(req, src)], args.repeats))
        cc = cpu_build.find_compiler(settings, cxx=True)
        cspec = load_spec(ROOT / "examples" / "cpu" / "conv1d.toml")
        creq = tasks.build_request(cspec, "host")
        csrc = Path(tmp) / "conv1d.cpp"
        csrc.write_text(creq.source)
        rows.append(measure("cc: examples/cpu/conv1d.cpp",
                            cache.manifest(cpu_build.cache_key(creq, cc)),
                            lambda: cpu_build.build(creq, cc, cache),
                            [cc.path, "-M", *builds.source_arguments(creq, csrc)], args.repeats))
    head = ["build", "headers", "compile ms", "manifest cold ms", "manifest warm ms",
            "preprocessor ms"]
    print(tabulate(rows, head, tablefmt="github"))
    if args.out:
        args.out.write_text(json.dumps([dict(zip(head, r, strict=True)) for r in rows],
                                       indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
