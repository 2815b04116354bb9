"""The device's ceilings: copy bandwidth (the best of several ways to copy a large buffer) and
compute (each unit's microbenchmark in peaks.cu, and the vendor GEMM for reference)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pragma_ncu.backends.cuda.worker.gpu import Gpu

REPS = 10


def measure(gpu: Gpu, harness: str, nbytes: int) -> dict[str, Any]:
    """GB/s counting bytes read plus bytes written, per method, and the best of them."""
    nbytes = int(min(nbytes, gpu.memory_free() // 4)) // 4096 * 4096
    src, dst = gpu.alloc(nbytes), gpu.alloc(nbytes)
    try:
        gpu.launch(gpu.kernel(harness, "fill_u32"), gpu.grid_for(nbytes // 4), (256, 1, 1), 0,
                   src.ptr, np.uint64(nbytes // 4), np.uint32(0x3C003C00))
        methods = {"driver memcpy": _best(gpu, lambda: gpu.copy(dst.ptr, src.ptr, nbytes))}
        kernel = gpu.kernel(harness, "copy_vec16")
        n16 = nbytes // 16
        for label, grid in (("16B copy, 4 blocks/SM", gpu.sm_count * 4),
                            ("16B copy, 16 blocks/SM", gpu.sm_count * 16),
                            ("16B copy, 1 element/thread", -(-n16 // 256))):
            methods[label] = _best(gpu, lambda g=grid: gpu.launch(
                kernel, (g, 1, 1), (256, 1, 1), 0, src.ptr, dst.ptr, np.uint64(n16)))
        gbps = {k: 2 * nbytes / (us * 1e3) for k, us in methods.items()}
        best = max(gbps, key=lambda k: gbps[k])
        return {"gbps": gbps[best], "method": best, "methods": gbps, "bytes": nbytes}
    finally:
        gpu.sync()
        gpu.free(src)
        gpu.free(dst)


def _best(gpu: Gpu, work: Any) -> float:
    work()
    gpu.sync()
    return float(np.median([gpu.time_ms(work) * 1e3 for _ in range(REPS)]))


# -- compute ceilings ---------------------------------------------------------------------------
CHAINS = 8  # independent chains per thread in peaks.cu
MMA_FLOP = 2 * 16 * 16 * 16  # one wmma 16x16x16 mma_sync
FP8_MMA_FLOP = 2 * 16 * 8 * 32  # one mma.sync m16n8k32 e4m3
TARGET_MS = 5.0  # each microbenchmark runs about this long (one launch)
OPERAND_BYTES = 1024


def measure_compute(gpu: Gpu, peaks: str) -> dict[str, Any]:
    """Operations per second of each unit's microbenchmark (peaks.cu), best of several
    launches; tensor rates through mma.sync (FP8 where the GPU has it, sm_89 on); the vendor
    library's GEMM where cupy or torch is there."""
    threads = gpu.sm_count * 8 * 256  # 8 blocks of 256 per SM: full occupancy for most
    out = gpu.alloc(threads * 8 + (1 << 20))
    ab = gpu.alloc(OPERAND_BYTES)
    try:
        # Tensor cores run faster on zeros: give the MMA operands random bits (finite as fp16,
        # bf16 and e4m3: the top bit of each byte's exponent cleared).
        bits = np.random.default_rng(7).integers(0, 256, OPERAND_BYTES, dtype=np.uint8) & 0x3F
        gpu.upload(ab.ptr, bits)
        gpu.launch(gpu.kernel(peaks, "peak_ffma"), (1, 1, 1), (32, 1, 1), 0, out.ptr,
                   np.int32(1), np.float32(1.0))  # load the module before timing
        rates = {
            "fp32_fma": _rate(gpu, peaks, "peak_ffma", threads, 2 * CHAINS, out.ptr,
                              extra=(np.float32(1.0),)),
            "fp64_fma": _rate(gpu, peaks, "peak_dfma", threads, 2 * CHAINS, out.ptr,
                              extra=(np.float64(1.0),)),
            "sfu": _rate(gpu, peaks, "peak_mufu", threads, 4, out.ptr),
            "fp16_tensor": _mma_rate(gpu, peaks, "peak_hmma_fp16", out.ptr, (ab.ptr, ab.ptr),
                                     MMA_FLOP),
            "bf16_tensor": _mma_rate(gpu, peaks, "peak_hmma_bf16", out.ptr, (ab.ptr, ab.ptr),
                                     MMA_FLOP),
        }
        if _sm(gpu) >= 89:
            rates["fp8_tensor"] = _mma_rate(gpu, peaks, "peak_mma_fp8", out.ptr, (ab.ptr,),
                                            FP8_MMA_FLOP)
    finally:
        gpu.sync()
        gpu.free(out)
        gpu.free(ab)
    return {"per_second": rates, "vendor": _vendor_gemm()}


def _sm(gpu: Gpu) -> int:
    arch = str(gpu.info().get("arch", "sm_0"))
    digits = "".join(ch for ch in arch if ch.isdigit())
    return int(digits or 0)


def _rate(gpu: Gpu, peaks: str, name: str, threads: int, ops_per_iter: int, out: int,
          extra: tuple[Any, ...] = ()) -> float:
    kernel = gpu.kernel(peaks, name)
    grid = (threads // 256, 1, 1)

    def run(iters: int) -> float:
        return _best(gpu, lambda: gpu.launch(kernel, grid, (256, 1, 1), 0, out,
                                             np.int32(iters), *extra)) / 1e3  # ms

    iters = _sized(run)
    return threads * ops_per_iter * iters / (run(iters) * 1e-3)


def _mma_rate(gpu: Gpu, peaks: str, name: str, out: int, operands: tuple[int, ...],
              flop_per_mma: int) -> float:
    kernel = gpu.kernel(peaks, name)
    warps = gpu.sm_count * 16  # 4 blocks of 4 warps per SM
    gpu.launch(kernel, (1, 1, 1), (32, 1, 1), 0, out, *operands, np.int32(1))  # warm up

    def run(iters: int) -> float:
        return _best(gpu, lambda: gpu.launch(kernel, (warps // 4, 1, 1), (128, 1, 1), 0, out,
                                             *operands, np.int32(iters))) / 1e3

    iters = _sized(run)
    return warps * 4 * flop_per_mma * iters / (run(iters) * 1e-3)


def _sized(run: Any, start: int = 256) -> int:
    """Iterations that make one launch take about TARGET_MS."""
    iters = start
    for _ in range(8):
        ms = run(iters)
        if ms >= TARGET_MS / 2:
            break
        iters = int(iters * min(16.0, TARGET_MS / max(ms, 1e-3)))
    return iters


def _vendor_gemm(n: int = 4096) -> dict[str, float]:
    """TFLOP/s of the vendor GEMM at n^3 on random data: cuBLAS through cupy (fp32 SGEMM
    without TF32, fp16 with tensor cores) and, where torch is installed, bf16 through torch;
    empty when neither library is there."""
    out: dict[str, float] = {}
    try:
        import cupy
    except Exception:
        cupy = None
    if cupy is not None:
        for label, dtype in (("sgemm_fp32", cupy.float32), ("hgemm_fp16", cupy.float16)):
            a = cupy.random.random((n, n)).astype(dtype)
            b = cupy.random.random((n, n)).astype(dtype)
            out[label] = _gemm_tflops(n, lambda a=a, b=b: cupy.matmul(a, b), cupy.cuda.Event,
                                      cupy.cuda.get_elapsed_time)
    try:
        import torch
    except Exception:
        return out
    if torch.cuda.is_available():
        a = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
        b = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
        out["bf16_gemm_torch"] = _gemm_tflops(
            n, lambda: torch.matmul(a, b), lambda: torch.cuda.Event(enable_timing=True),
            lambda s, e: s.elapsed_time(e))
    return out


def _gemm_tflops(n: int, matmul: Any, event: Any, elapsed_ms: Any) -> float:
    matmul()
    times = []
    for _ in range(5):
        start, stop = event(), event()
        start.record()
        matmul()
        stop.record()
        stop.synchronize()
        times.append(elapsed_ms(start, stop))
    return 2 * n**3 / (float(np.median(times)) * 1e-3) / 1e12
