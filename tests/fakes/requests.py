"""An evaluation request for the fake worker: its candidate's symbol picks the behaviour."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.spec.file import load_spec
from pragma_ncu.worker.protocol import EvalRequest, KernelRef, ReferenceSpec

ROOT = Path(__file__).resolve().parents[2]


def fake_request(symbol: str) -> EvalRequest:
    spec = load_spec(ROOT / "examples" / "silu_and_mul.toml")
    task = spec.resolve(spec.shape_named("odd"))
    cand = KernelRef("k.cubin", symbol, task.launch)
    return EvalRequest("harness.cubin", cand, task, ReferenceSpec("kernel", kernel=cand))
