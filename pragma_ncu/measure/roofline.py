"""The attainable roofline of one kernel at one shape: the time it cannot beat on this device.

    bound = max(bytes / copy ceiling, flops / compute ceiling)

with both ceilings *measured* on the device (a large copy; each unit's microbenchmark), the
binding one named. A kernel with no FLOP count (most memory-bound kernels) is bound by bytes
alone, so its "% of roofline" is the familiar fraction of the copy ceiling. FLOPs and bytes
come from the spec (`metrics.flops`, `metrics.bytes`, `metrics.compute` for the unit they run
on), else from ncu's counted instructions and DRAM bytes (explain, triage).
"""

from __future__ import annotations

from dataclasses import dataclass

# spec's metrics.compute -> (the ComputeCeiling.per_second key, what to call it)
COMPUTE_KINDS: dict[str, tuple[str, str]] = {
    "fp32": ("fp32_fma", "FP32 FMA"),
    "fp64": ("fp64_fma", "FP64 FMA"),
    "fp16_tensor": ("fp16_tensor", "FP16 tensor cores"),
    "bf16_tensor": ("bf16_tensor", "BF16 tensor cores"),
    "fp8_tensor": ("fp8_tensor", "FP8 tensor cores"),
    "sfu": ("sfu", "special-function unit"),
}
MEMORY = "memory (copy ceiling)"
# ComputeCeiling.per_second key -> the datasheet's figure in knowledge/hardware.toml (TFLOP/s)
DATASHEET_KEYS: dict[str, str] = {
    "fp32_fma": "fp32_tflops",
    "fp64_fma": "fp64_tflops",
    "fp16_tensor": "fp16_tensor_tflops",
    "bf16_tensor": "bf16_tensor_tflops",
    "fp8_tensor": "fp8_tensor_tflops",
}


@dataclass(frozen=True)
class ComputeRate:
    """The device's measured compute ceilings (ComputeCeiling.per_second) and the kind of work
    a kernel's FLOPs are (the spec's metrics.compute)."""

    kind: str
    per_second: dict[str, float]


@dataclass(frozen=True)
class Attainable:
    """The roofline bound of one kernel run and which ceiling sets it."""

    time_us: float  # the larger of the two times below
    memory_us: float | None  # bytes at the copy ceiling
    compute_us: float | None  # FLOPs at the compute ceiling
    binding: str  # MEMORY or a COMPUTE_KINDS name
    intensity: float | None  # FLOP per byte
    compute_rate: float | None  # the compute ceiling, operations per second

    def fraction(self, measured_us: float) -> float | None:
        """How close a measured time is to the bound (1.0 = at the roofline)."""
        return self.time_us / measured_us if measured_us > 0 else None


def shape_fraction(median_us: float, copy_us: float | None, flops: float | None,
                   compute: ComputeRate | None) -> tuple[float | None, str]:
    """(fraction of the attainable roofline, the binding ceiling) of one timed shape: the larger
    of a same-size copy's time and the FLOPs at the compute ceiling, over the measured time."""
    bound = attainable(None, flops, compute.kind if compute else "fp32", None,
                       compute.per_second if compute else None, memory_us=copy_us)
    if bound is None or median_us <= 0:
        return None, ""
    return bound.time_us / median_us, bound.binding


def attainable(bytes_moved: float | None, flops: float | None, kind: str,
               copy_gbps: float | None, per_second: dict[str, float] | None,
               memory_us: float | None = None) -> Attainable | None:
    """The bound from the work and the ceilings; `memory_us` (a same-size copy measured on
    the device) replaces bytes / copy ceiling when given. None when neither side is known."""
    if memory_us is None and bytes_moved and copy_gbps:
        memory_us = bytes_moved / (copy_gbps * 1e3)
    key, name = COMPUTE_KINDS.get(kind, COMPUTE_KINDS["fp32"])
    rate = (per_second or {}).get(key)
    compute_us = flops / rate * 1e6 if flops and rate else None
    times = [t for t in (memory_us, compute_us) if t is not None]
    if not times:
        return None
    binding = name if compute_us is not None and compute_us >= (memory_us or 0.0) else MEMORY
    intensity = flops / bytes_moved if flops and bytes_moved else None
    return Attainable(max(times), memory_us, compute_us, binding, intensity, rate)
