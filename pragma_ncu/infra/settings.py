"""Settings: the one place that reads environment variables and default tool paths.

Everything else receives a `Settings` value. Environment variables:

- PRAGMA_NCU_CACHE: cache directory (compiled kernels, measured ceilings); default
  $XDG_CACHE_HOME/pragma-ncu or ~/.cache/pragma-ncu.
- PRAGMA_NCU_DATA: data directory (the generated metric compendium, run stores); default
  $XDG_DATA_HOME/pragma-ncu or ~/.local/share/pragma-ncu.
- PRAGMA_NCU_NVCC: the nvcc to use; default `nvcc` on PATH, then $CUDA_HOME/bin/nvcc.
- PRAGMA_NCU_NCU: the ncu to use; default `ncu` on PATH.
- PRAGMA_NCU_NCU_PYTHON: folder holding ncu_report.py; default found from the ncu install.
- PRAGMA_NCU_PYTHON: the Python interpreter that runs workers; default this one.
- PRAGMA_NCU_LLM_BASE_URL: an OpenAI-compatible endpoint (e.g. http://localhost:8000/v1); default
  none (the openai client's own default when only a key is given).
- PRAGMA_NCU_LLM_MODEL: the model to ask; no LLM is used without it.
- PRAGMA_NCU_LLM_API_KEY: the endpoint's key; default $OPENAI_API_KEY.
- CC / CXX: the C and C++ compilers for CPU kernels; default `cc` / `c++` on PATH.
- PRAGMA_NCU_PERF / PRAGMA_NCU_VALGRIND: the CPU collectors; default `perf` / `valgrind` on
  PATH.
- PRAGMA_NCU_CXXFILT: the C++ demangler for reports that carry mangled kernel names only;
  default `c++filt` (GNU binutils) or `llvm-cxxfilt` on PATH.
- COLUMNS: the width text output is laid out to, where set (as terminals and shells set it);
  else the terminal's, else 100 (pragma_ncu.report.terminal).
- NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS, NVCC_CCBIN, CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH:
  read by the compilers themselves; recorded here only so that the compile cache keys on them.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    cache_dir: Path
    data_dir: Path
    nvcc: str | None
    ncu: str | None
    ncu_python_dir: Path | None
    python: str
    jobs: int
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)  # never printed
    cc: str | None = None  # C compiler (CPU kernels)
    cxx: str | None = None  # C++ compiler (CPU kernels)
    perf: str | None = None  # Linux perf (CPU counters)
    valgrind: str | None = None  # valgrind (cachegrind: the CPU fallback collector)
    cxxfilt: str | None = None  # c++filt (demangles kernel names of raw CSV pages)
    # the environment variables that change what a compiler builds (COMPILER_ENV), as set:
    # part of every compile cache key
    compiler_env: tuple[tuple[str, str], ...] = ()
    columns: int | None = None  # $COLUMNS, where set to a positive number


    def with_(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def _default_cache_dir(env: dict[str, str]) -> Path:
    if env.get("PRAGMA_NCU_CACHE"):
        return Path(env["PRAGMA_NCU_CACHE"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pragma-ncu"


def _default_data_dir(env: dict[str, str]) -> Path:
    if env.get("PRAGMA_NCU_DATA"):
        return Path(env["PRAGMA_NCU_DATA"]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "pragma-ncu"


def _find_nvcc(env: dict[str, str]) -> str | None:
    if env.get("PRAGMA_NCU_NVCC"):
        return env["PRAGMA_NCU_NVCC"]
    found = shutil.which("nvcc")
    if found:
        return found
    for home in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and Path(home, "bin", "nvcc").is_file():
            return str(Path(home, "bin", "nvcc"))
    return None


# Read by nvcc or by gcc/clang themselves: extra flags, the host compiler, include folders.
COMPILER_ENV = ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "CPATH",
                "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH")


def load_settings(env: dict[str, str] | None = None) -> Settings:
    """Read settings from the environment (or from `env`, for tests)."""
    env = dict(os.environ if env is None else env)
    ncu_py = env.get("PRAGMA_NCU_NCU_PYTHON")
    return Settings(
        cache_dir=_default_cache_dir(env),
        data_dir=_default_data_dir(env),
        nvcc=_find_nvcc(env),
        ncu=env.get("PRAGMA_NCU_NCU") or shutil.which("ncu"),
        ncu_python_dir=Path(ncu_py) if ncu_py else None,
        python=env.get("PRAGMA_NCU_PYTHON") or sys.executable,
        jobs=max(1, os.cpu_count() or 1),
        llm_base_url=env.get("PRAGMA_NCU_LLM_BASE_URL") or None,
        llm_model=env.get("PRAGMA_NCU_LLM_MODEL") or None,
        llm_api_key=env.get("PRAGMA_NCU_LLM_API_KEY") or env.get("OPENAI_API_KEY") or None,
        cc=_tool(env.get("CC"), "cc", "gcc", "clang"),
        cxx=_tool(env.get("CXX"), "c++", "g++", "clang++"),
        perf=_tool(env.get("PRAGMA_NCU_PERF"), "perf"),
        valgrind=_tool(env.get("PRAGMA_NCU_VALGRIND"), "valgrind"),
        cxxfilt=_tool(env.get("PRAGMA_NCU_CXXFILT"), "c++filt", "llvm-cxxfilt"),
        compiler_env=tuple((k, env[k]) for k in COMPILER_ENV if k in env),
        columns=_positive(env.get("COLUMNS")),
    )


def process_environment() -> dict[str, str]:
    """A copy of this process's environment, for a child process started with changes (a Ray
    actor's worker): the one other read of the environment, here beside the settings."""
    return dict(os.environ)


def omp_threads() -> str | None:
    """OMP_NUM_THREADS as this process has it (None: unset), to hand to a worker on another
    node, where Ray sets its own."""
    return os.environ.get("OMP_NUM_THREADS")


def _positive(text: str | None) -> int | None:
    """A positive whole number given as text ($COLUMNS), else None."""
    try:
        value = int(text or "")
    except ValueError:
        return None
    return value if value > 0 else None


def _tool(override: str | None, *names: str) -> str | None:
    """An explicit path (or command) wins; else the first of `names` on PATH."""
    if override:
        return shutil.which(override) or override
    return next((found for found in map(shutil.which, names) if found), None)
