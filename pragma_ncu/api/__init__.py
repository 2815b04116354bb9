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

The names the functions' options and results use come from here too (the command line imports
nothing else of the package but the rendering and the errors): the types (`TaskSpec`,
`GpuSelection`, `MetricEntry`, ...), defaults and ranges (`DEFAULT_STORE`, `bounds`,
`strategies`, `TABLE_LAYOUTS`, ...), the progress events (`progress`) and the log (`logs`).
"""

from pragma_ncu.api.commands import (
    Explanation,
    Initialized,
    bench,
    explain,
    init,
    profile,
)
from pragma_ncu.api.common import SpecLike, configured_columns, load, shapes_of
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
    LLMRequest,
    TuneInterrupted,
    TuneOptions,
    TuneResult,
    llm_config,
    tune,
)
from pragma_ncu.backends.base import PoolRequest, ProfileOptions, UsageError
from pragma_ncu.backends.results import BenchReport, ProfileRun
from pragma_ncu.infra import bounds, logs, progress
from pragma_ncu.infra.store import DEFAULT_NAME as DEFAULT_STORE
from pragma_ncu.knowledge.adapters import adapter_names
from pragma_ncu.knowledge.docs import render_entry
from pragma_ncu.knowledge.schema import MetricEntry
from pragma_ncu.pool.ceilings import DeviceCeilings
from pragma_ncu.pool.devices import GpuSelection, parse_gpus
from pragma_ncu.search import strategies
from pragma_ncu.search.output import LAYOUTS as TABLE_LAYOUTS
from pragma_ncu.search.output import TableFormat
from pragma_ncu.search.results import SearchResult
from pragma_ncu.search.vllm_table import ENGINES as ENGINE_LAYOUTS
from pragma_ncu.search.vllm_table import NamingError as TableNamingError
from pragma_ncu.search.vllm_table import parse_block_shape, parse_dim_map
from pragma_ncu.spec.model import ParamValue, TaskSpec
from pragma_ncu.triage.engine import DEFAULT_THRESHOLD_PCT, MAX_THRESHOLD_PCT
from pragma_ncu.triage.report import TriageReport

__all__ = [
    "AutotuneInterrupted", "AutotuneOptions", "BenchReport", "Ceilings", "DEFAULT_STORE",
    "DEFAULT_THRESHOLD_PCT", "DeviceCeilings", "DeviceCheckError", "Doctor", "ENGINE_LAYOUTS",
    "Explanation", "GpuSelection", "Initialized", "KnowledgeBuild", "KnowledgeEntry", "LLMRequest",
    "MAX_THRESHOLD_PCT", "MetricEntry", "MoveReview", "MovesReport", "ParamValue", "PoolRequest",
    "ProfileOptions", "ProfileRun", "SearchResult", "ShapesResult", "SpecLike", "TABLE_LAYOUTS",
    "TableFormat", "TableNamingError", "TaskSpec", "TriageReport", "TuneInterrupted", "TuneOptions",
    "TuneResult", "UsageError", "adapter_names", "autotune", "autotune_shapes", "bench", "bounds",
    "ceilings", "compendium", "configured_columns", "convert_table", "default_out", "doctor",
    "explain", "init", "knowledge", "knowledge_build", "knowledge_search", "llm_config", "load",
    "logs", "moves", "parse_block_shape", "parse_dim_map", "parse_gpus", "profile", "progress",
    "render_entry", "runs", "shapes_of", "strategies", "trace", "triage", "tune",
]
