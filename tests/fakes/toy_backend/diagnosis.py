"""The toy's one diagnosis rule: blocks so small that their fixed cost dominates."""

from __future__ import annotations

from pragma_ncu.diagnose.cite import Knowledge
from pragma_ncu.diagnose.findings import Diagnosis, Evidence, Finding, Roofline
from pragma_ncu.profile.profiles import KernelProfile

PER_BLOCK_US = 8.0  # the toy cost model's fixed cost of a block, per 1000 elements


def diagnose_toy(kernel: KernelProfile, knowledge: Knowledge,
                 ceiling_gbps: float | None = None, source_file: str | None = None,
                 resources: dict[str, float] | None = None,
                 compute: dict[str, float] | None = None) -> Diagnosis:
    cost = kernel.value("toy_cost_us") or 0.0
    block = kernel.value("toy_param_BLOCK") or 1.0
    elements = kernel.value("toy_elements") or 0.0
    overhead = elements / 2000.0 * PER_BLOCK_US / block  # n elements: y and x, n each
    share = min(1.0, overhead / cost) if cost else 0.0
    findings = () if share < 0.02 else (Finding(
        "launch_overhead", "Per-block overhead dominates", round(share, 4),
        f"{share:.0%} of the time is the fixed cost of blocks of {block:g}: larger blocks "
        "pay it less often.",
        (Evidence("toy_param_BLOCK", block, ""), Evidence("toy_cost_us", cost, "us"))),)
    roofline = Roofline(cost * 1e3, None, None, None, None, "", None, "", None)
    return Diagnosis(kernel.name, findings[0].bottleneck if findings else "none", roofline,
                     findings, (), (), (), hotspot_counts="calls")
