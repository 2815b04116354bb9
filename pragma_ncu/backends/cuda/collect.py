"""Collection: run one candidate at one shape in a worker under ncu and keep the `.ncu-rep`.

ncu runs with the measurement rules of DESIGN.md: `--clock-control none`, a kernel filter on the
exact (mangled) symbol, warm-up launches skipped, one launch profiled, `--target-processes all`,
an explicit section list plus requested metrics, ncu's own output sent to a log file (the
worker's stdout is the protocol channel), and a timeout that kills the whole process group.
"""

from __future__ import annotations

import logging
import re
import shlex
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.pool.runner import Runner, WorkerDied
from pragma_ncu.worker.protocol import EvalRequest

_log = logging.getLogger(__name__)  # ("log" is ncu's log file here)

DEFAULT_SECTIONS = ("SpeedOfLight", "LaunchStats", "Occupancy", "MemoryWorkloadAnalysis",
                    "ComputeWorkloadAnalysis", "SchedulerStats", "WarpStateStats")
SOURCE_SECTIONS = ("SourceCounters",)

# Metrics the diagnosis reads that the default sections do not carry (Hopper names, ncu 2025;
# each is in `ncu --query-metrics --chip gh100`): sector use and counts, local memory (and
# whether a warp's lanes scatter over their own slots), shared conflicts, atomics, lanes.
DIAGNOSIS_METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    "smsp__sass_inst_executed_op_local_ld.sum",
    "smsp__sass_inst_executed_op_local_st.sum",
    "smsp__sass_inst_executed_op_global_ld.sum",
    "smsp__sass_inst_executed_op_global_st.sum",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
    "l1tex__t_sector_hit_rate.pct",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "smsp__sass_inst_executed_op_global_atom.sum",
    "smsp__sass_inst_executed_op_global_red.sum",
    "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "smsp__inst_executed.sum",
    # FLOPs for the roofline: per-thread FP32/FP64 instructions and tensor-core instructions
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "smsp__inst_executed_pipe_tensor_op_hmma.sum",
    "smsp__thread_inst_executed.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
)


class CollectStatus(StrEnum):
    OK = "ok"
    NO_PERMISSION = "no_permission"  # ERR_NVGPUCTRPERM
    NO_KERNEL = "no_kernel"  # the filter matched nothing
    NCU_FAILED = "ncu_failed"  # ncu reported an error (bad option, unknown metric, ...)
    TIMEOUT = "timeout"
    CRASH = "crash"  # the kernel or the worker died under replay
    NO_GPU = "no_gpu"


@dataclass(frozen=True)
class CollectRequest:
    sections: tuple[str, ...] = DEFAULT_SECTIONS
    metrics: tuple[str, ...] = DIAGNOSIS_METRICS
    source: bool = False  # add SourceCounters (needs a -lineinfo build for source lines)
    warmup: int = 2  # launches skipped before the profiled one
    seed: int = 1
    timeout_s: float = 180.0

    def all_sections(self) -> tuple[str, ...]:
        extra = SOURCE_SECTIONS if self.source else ()
        return tuple(dict.fromkeys(self.sections + extra))


@dataclass(frozen=True)
class Collection:
    """What one ncu run produced; `report` is set only for status ok."""

    status: CollectStatus
    message: str
    report: Path | None
    log_path: Path
    wall_s: float
    command: tuple[str, ...]
    request: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is CollectStatus.OK


def ncu_command(ncu: str, symbol: str, req: CollectRequest, report: Path, log: Path
                ) -> list[str]:
    """The ncu argument list (without the profiled program) for one candidate launch."""
    cmd = [ncu, "--clock-control", "none", "--target-processes", "all",
           "--kernel-name-base", "mangled", "--kernel-name", symbol,
           "--launch-skip", str(req.warmup), "--launch-count", "1",
           "--export", str(report), "--force-overwrite", "--log-file", str(log)]
    for section in req.all_sections():
        cmd += ["--section", section]
    if req.metrics:
        cmd += ["--metrics", ",".join(dict.fromkeys(req.metrics))]
    if req.source:
        cmd += ["--import-source", "yes"]
    return cmd


def collect(ncu: str, worker: Sequence[str], eval_req: EvalRequest, req: CollectRequest,
            out_dir: Path, stem: str, env: dict[str, str] | None = None) -> Collection:
    """Profile `eval_req`'s candidate once; ncu's findings and failures become a status.
    `env`: ncu's (and so its worker's) environment, e.g. pinned to one GPU of a pool."""
    out_dir.mkdir(parents=True, exist_ok=True)
    report, log = out_dir / f"{stem}.ncu-rep", out_dir / f"{stem}.ncu.log"
    report.unlink(missing_ok=True)
    cmd = ncu_command(ncu, eval_req.candidate.symbol, req, report, log) + list(worker)
    start = time.perf_counter()
    _log.info("ncu: %s", shlex.join(cmd))
    status, message = _drive(cmd, eval_req, req, env)
    wall = time.perf_counter() - start
    log_text = log.read_text(errors="replace") if log.is_file() else ""
    if status is not CollectStatus.TIMEOUT:
        status, message = classify_log(log_text, report.is_file(), status, message,
                                       eval_req.candidate.symbol)
    _log.info("ncu finished in %.1f s: %s%s", wall, status.value,
              f" ({message.splitlines()[0][:300]})" if message.strip() else "")
    return Collection(status, message, report if status is CollectStatus.OK else None, log,
                      wall, tuple(cmd), asdict(req))


def _drive(cmd: list[str], eval_req: EvalRequest, req: CollectRequest,
           env: dict[str, str] | None = None) -> tuple[CollectStatus, str]:
    runner = Runner(cmd, timeout_s=req.timeout_s, env=env)
    try:
        runner.hello()
        answer = runner.call({"op": "launch", "request": eval_req.to_message(),
                              "warmup": req.warmup, "seed": req.seed})
    except NoGPUError as exc:
        runner.close()
        return CollectStatus.NO_GPU, exc.reason
    except WorkerDied as exc:
        runner.close()
        status = CollectStatus.TIMEOUT if exc.status == "timeout" else CollectStatus.CRASH
        return status, str(exc)
    runner.close(wait_s=req.timeout_s)  # ncu writes the report after the worker exits
    if not answer.get("ok"):
        return CollectStatus.CRASH, f"the profiled launch failed: {answer.get('error')}"
    return CollectStatus.OK, ""


_PERM = "ERR_NVGPUCTRPERM"
PERMISSION_FIX = (
    "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM). Run as root, or allow "
    "profiling for all users: add 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' to a "
    "file in /etc/modprobe.d and reboot (see https://developer.nvidia.com/ERR_NVGPUCTRPERM). "
    "Until then pragma-ncu works timing-only: bench and tune still verify and time kernels.")


def classify_log(log: str, have_report: bool, status: CollectStatus, message: str,
                 symbol: str) -> tuple[CollectStatus, str]:
    """Turn ncu's log into a status with a message a person can act on."""
    if _PERM in log:
        return CollectStatus.NO_PERMISSION, PERMISSION_FIX
    errors = [line for line in log.splitlines() if line.startswith("==ERROR==")]
    if status is CollectStatus.NO_GPU:
        return (CollectStatus.NCU_FAILED, "; ".join(errors[:5])) if errors else (status, message)
    if status is CollectStatus.CRASH:
        detail = "; ".join(errors[:3])
        return status, f"{message}{' | ncu: ' + detail if detail else ''}"
    if re.search(r"No kernels were profiled", log) or (not have_report and not errors):
        return CollectStatus.NO_KERNEL, (
            f"ncu profiled no kernel: the filter '{symbol}' matched no launch. ncu said: "
            + (_tail(log) or "nothing"))
    if errors or not have_report:
        return CollectStatus.NCU_FAILED, "; ".join(errors[:5]) or _tail(log)
    return CollectStatus.OK, ""


def _tail(text: str, n: int = 4) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-n:])[:600]
