"""The one list of documentation sources `knowledge build` reads, in crawl order.

Adding a profiler means adding its documentation adapters here (and its collector in profile/).
"""

from __future__ import annotations

from collections.abc import Sequence

from pragma_ncu.infra.errors import SpecError
from pragma_ncu.knowledge.ncu_sources import NcuDocs, NcuMetricList, NcuRules, NcuSections
from pragma_ncu.knowledge.perf_sources import OnlinePages, PerfEvents, PerfManPages
from pragma_ncu.knowledge.sources import SourceAdapter

NCU_URLS = (
    "https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html",
    "https://docs.nvidia.com/nsight-compute/NsightComputeCli/index.html",
)
PERF_URLS = (
    "https://perfwiki.github.io/main/tutorial/",
    "https://perfwiki.github.io/main/top-down-analysis/",
)

ADAPTERS: tuple[SourceAdapter, ...] = (
    NcuDocs(),
    NcuMetricList(),
    NcuSections(),
    NcuRules(),
    PerfEvents(),
    PerfManPages(),
    OnlinePages("ncu-online", "ncu", NCU_URLS),
    OnlinePages("perf-online", "perf", PERF_URLS),
)


def adapter_names() -> tuple[str, ...]:
    return tuple(a.name for a in ADAPTERS)


def select_adapters(names: Sequence[str] = ()) -> tuple[SourceAdapter, ...]:
    """The adapters named (all when none are); SpecError names an unknown one."""
    if not names:
        return ADAPTERS
    by_name = {a.name: a for a in ADAPTERS}
    for name in names:
        if name not in by_name:
            raise SpecError("--source", "source", f"one of {', '.join(by_name)}", name)
    return tuple(a for a in ADAPTERS if a.name in set(names))
