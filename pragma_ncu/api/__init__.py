"""The library API: every command as a typed function returning a result object, so a script
does what `pragma-ncu` does without click (the commands are thin wrappers over these).

    from pragma_ncu import api
    from pragma_ncu.spec.describe import Arg, task_spec

    spec = task_spec("examples/cpu/conv1d.cpp", ...)   # or a path: "examples/sgemm.cu"
    result = api.autotune(spec, api.AutotuneOptions(budget=20))  # a SearchResult
    print(result.best_point, result.general.speedup)

A spec is a `TaskSpec` (from `spec.describe.task_spec` or `spec.file.load_spec`), a kernel file (its
spec is the .toml beside it, or `spec_path=`), or a .toml spec. Settings come from the
environment unless given (`settings=`); `progress` (a callable, or None) receives events
(`pragma_ncu.infra.progress`: each step's line, and a search's or re-test's count). A candidate's
failure is part of the result; bad input and a broken environment raise `PragmaError`s (a
missing GPU is a `NoGPUError`, except where the result says so: `tune`, `bench`).
"""

from pragma_ncu.api.commands import (
    Explanation,
    Initialized,
    bench,
    explain,
    init,
    profile,
)
from pragma_ncu.api.common import SpecLike, load, shapes_of
from pragma_ncu.api.knowledge import (
    KnowledgeBuild,
    KnowledgeEntry,
    compendium,
    knowledge,
    knowledge_build,
    knowledge_search,
)
from pragma_ncu.api.machine import Ceilings, Doctor, ceilings, doctor
from pragma_ncu.api.moves import MoveReview, MovesReport, moves
from pragma_ncu.api.search import (
    AutotuneInterrupted,
    AutotuneOptions,
    ShapesResult,
    autotune,
    autotune_shapes,
    convert_table,
    default_out,
)
from pragma_ncu.api.trace import runs, trace
from pragma_ncu.api.triage import triage
from pragma_ncu.api.tune import (
    DeviceCheckError,
    TuneInterrupted,
    TuneResult,
    llm_config,
    tune,
)
from pragma_ncu.backends.base import PoolRequest, ProfileOptions, UsageError
from pragma_ncu.backends.results import BenchReport, ProfileRun
from pragma_ncu.search.output import TableFormat
from pragma_ncu.search.results import SearchResult
from pragma_ncu.triage.report import TriageReport

__all__ = [
    "AutotuneInterrupted", "AutotuneOptions", "BenchReport", "Ceilings", "DeviceCheckError",
    "Doctor", "Explanation", "Initialized", "KnowledgeBuild", "KnowledgeEntry", "MoveReview",
    "MovesReport",
    "PoolRequest", "ProfileOptions", "ProfileRun", "SearchResult", "ShapesResult", "SpecLike",
    "TableFormat", "TriageReport", "TuneInterrupted", "TuneResult", "UsageError", "autotune",
    "autotune_shapes", "bench", "ceilings", "compendium", "convert_table", "default_out",
    "doctor", "explain", "init", "knowledge", "knowledge_build", "knowledge_search",
    "llm_config", "load", "moves", "profile", "runs", "shapes_of", "trace", "triage", "tune",
]
