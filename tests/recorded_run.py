"""A recorded tune run for the tests that read one from the store (`pragma-ncu trace`, the
exit codes): four rounds (a baseline, a search, a retune that failed verification, a repair
by the coder, slower) with their decisions, citations and analysis, and the run's summary."""

from __future__ import annotations

import hashlib

from pragma_ncu.infra.store import Store
from pragma_ncu.measure.records import (
    Bullet,
    Citation,
    Decision,
    KernelState,
    LLMCall,
    RangeChange,
    RoundRecord,
)

SOURCE = "__global__ void k(const float* x, float* y, int n) { if (a<b) y[0] = x[0]; }\n"
REPAIR = "__global__ void k2(const float4* x, float4* y, int n) { /* tail guarded */ }\n"
ENTRY = "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
FAILURE = "wrong_answer at shape odd-T: max abs error 3.1 at index 17"
SUMMARY = {"baseline_us": 64.1, "best_us": 36.2, "speedup": 64.1 / 36.2, "best_round": 1,
           "rounds": 4, "ceiling_gbps": 4100.0, "device": "NVIDIA H200",
           "stop_reason": "no candidate beat the best by more than the noise", "llm": "gpt-test"}


def _variant(name: str, source: str, origin: str = "original") -> dict[str, object]:
    return {"name": name, "filename": "k.cu", "source": source, "overlay": {}, "origin": origin,
            "note": "", "source_hash": hashlib.sha256(source.encode()).hexdigest()[:16]}


def _state(round_: int, variant: str, times: dict[str, float], *, verified: bool = True,
           failure: str = "", fraction: float | None = None, dram: float = 50.0,
           registers: int = 32, classification: str = "memory-latency",
           vec: int = 8) -> KernelState:
    objective = (times["T=4096"] * times["T=4097"]) ** 0.5 if verified else None
    return KernelState(
        round=round_, variant=variant, variant_key=f"key-{variant}", source_hash="abc",
        params={"VEC": vec}, times_us=times if verified else {},
        noise_us={k: 0.2 for k in times} if verified else {}, objective_us=objective,
        verified=verified, failure=failure, ceiling_fraction=fraction,
        metrics={"dram__throughput.avg.pct_of_peak_sustained_elapsed": dram,
                 "launch__registers_per_thread": float(registers)} if verified else {},
        registers=registers, classification=classification)


BASE = _state(0, "original", {"T=4096": 64.1, "T=4097": 64.1}, fraction=0.52, vec=4)
BEST = _state(1, "original", {"T=4096": 36.0, "T=4097": 36.4}, fraction=0.921, dram=91.5,
              registers=28, classification="dram-bandwidth")
BAD = _state(2, "original", {"T=4096": 30.0, "T=4097": 30.0}, verified=False,
             failure=FAILURE, classification="", vec=16)
SLOWER = _state(3, "llm repair 3", {"T=4096": 37.1, "T=4097": 37.0}, fraction=0.90, dram=89.0,
                vec=16)


def run_rounds() -> list[RoundRecord]:
    """The four rounds, as the loop closes them."""
    cite = Citation(ENTRY, ENTRY, "Long scoreboard stalls",
                    "Warps waited on an L1TEX (global, local) memory result.", "ncu docs")
    search = {"strategy": "grid", "evaluated": 8, "verified": 7, "pruned": {"registers": 2},
              "failed": {"wrong_answer": 1}, "wall_s": 12.34}
    original = _variant("original", SOURCE)
    return [
        RoundRecord(0, "baseline", original, {}, {}, None, BASE, BASE,
                    Decision(0, "tune", "the baseline is latency-bound; search VEC",
                             accepted=True, acceptance="the first verified kernel",
                             analysis=(Bullet("warps stall on long scoreboard",
                                              {"stall_long_sb": "61%"}, (ENTRY,)),),
                             citations=(cite,))),
        RoundRecord(1, "tune", original, {"VEC": [2, 4, 8]}, search, BASE, BEST, BEST,
                    Decision(1, "retune", "VEC=8 is at the top of its range",
                             accepted=True, acceptance="1.77× faster, noise 0.6%",
                             speedup_vs_best=64.1 / 36.2,
                             analysis=(Bullet("DRAM at 91.5% of peak",
                                              {"dram": "91.5%"}, ("dram__throughput",)),),
                             retune=(RangeChange("VEC", (2, 4, 8), (8, 16), "best at the edge"),))),
        RoundRecord(2, "retune", original, {"VEC": [8, 16]}, {**search, "verified": 0}, BEST,
                    BAD, BEST,
                    Decision(2, "repair", "VEC=16 computed wrong results on a ragged shape",
                             acceptance="not verified", route="coder",
                             guidance=("guard the tail when n % 4 != 0; keep <b> out of it",))),
        RoundRecord(3, "repair", _variant("llm repair 3", REPAIR, "llm"), {"VEC": [16]},
                    search, BEST, SLOWER, BEST,
                    Decision(3, "stop", str(SUMMARY["stop_reason"]), accepted=False,
                             acceptance="37.05 µs is not faster than 36.20 µs beyond the noise",
                             speedup_vs_best=0.977,
                             llm_note="an LLM could have tried a persistent-CTA layout"),
                    llm_calls=(LLMCall("coder", "gpt-test", 1200, 800, 4.21, 2, "ok"),)),
    ]


def write_run(store: Store, summary: dict[str, object] | None = SUMMARY,
               kernel: str = "silu_and_mul") -> str:
    """The run of `kernel` in `store`: its rounds closed, done with `summary`; its id."""
    run = store.create_run(kernel, "examples/silu_and_mul.toml", {"budget": 4},
                           device="NVIDIA H200")
    for record in run_rounds():
        store.close_round(run, record.round, record.decision.action, record.to_json())
    store.set_run_status(run, "done", summary=dict(summary) if summary is not None else None)
    return run
