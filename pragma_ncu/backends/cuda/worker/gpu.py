"""The worker's handle on the GPU: context, stream, modules, memory, launches and events.

cuda.core loads cubins, launches kernels and records events; a few plain driver calls
(cuda.bindings) cover memory allocation and copies. Only the worker process imports this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

FATAL_ERRORS = (
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ASSERT", "CUDA_ERROR_LAUNCH_TIMEOUT",
    "CUDA_ERROR_ECC_UNCORRECTABLE", "CUDA_ERROR_UNKNOWN", "CUDA_ERROR_CONTEXT_IS_DESTROYED",
)


class CudaFailure(Exception):
    """A CUDA call failed; `fatal` when the context is unusable afterwards (sticky error)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.fatal = any(code in message for code in FATAL_ERRORS)


def check(result: Any, what: str) -> Any:
    """Unpack a cuda.bindings result tuple, raising CudaFailure on an error code."""
    from cuda.bindings import driver

    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(err)
        _, text = driver.cuGetErrorString(err)
        raise CudaFailure(f"{what}: {name.decode() if name else err}: "
                          f"{text.decode() if text else ''}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


@dataclass
class DeviceMemory:
    ptr: int
    nbytes: int


class Gpu:
    """One device, one stream, cached modules; wraps CUDA errors in CudaFailure."""

    def __init__(self, ordinal: int = 0) -> None:
        from cuda.core import Device, EventOptions, StreamOptions

        self.device = Device(ordinal)
        self.device.set_current()
        # Blocking w.r.t. the legacy default stream, which the synchronous driver copies use.
        self.stream = self.device.create_stream(options=StreamOptions(nonblocking=False))
        self._timing = EventOptions(timing_enabled=True)
        self._kernels: dict[tuple[str, str], Any] = {}
        self._modules: dict[str, Any] = {}
        props = self.device.properties
        self.sm_count = int(props.multiprocessor_count)
        self.l2_bytes = int(props.l2_cache_size)
        self.max_threads_per_sm = int(props.max_threads_per_multiprocessor)

    def info(self) -> dict[str, Any]:
        from cuda.bindings import driver

        p = self.device.properties
        cc = self.device.compute_capability
        total = check(driver.cuDeviceTotalMem(self.device.device_id), "cuDeviceTotalMem")
        return {
            "name": self.device.name, "uuid": str(self.device.uuid),
            "compute_capability": f"{cc.major}.{cc.minor}", "arch": f"sm_{cc.major}{cc.minor}",
            "sm_count": self.sm_count, "l2_bytes": self.l2_bytes, "memory_bytes": int(total),
            "max_threads_per_block": int(p.max_threads_per_block),
            "max_threads_per_sm": self.max_threads_per_sm,
            "max_blocks_per_sm": int(p.max_blocks_per_multiprocessor),
            "max_registers_per_sm": int(p.max_registers_per_multiprocessor),
            "max_registers_per_block": int(p.max_registers_per_block),
            "max_shared_per_block": int(p.max_shared_memory_per_block),
            "max_shared_per_block_optin": int(p.max_shared_memory_per_block_optin),
            "max_shared_per_sm": int(p.max_shared_memory_per_multiprocessor),
            "clock_khz": int(p.clock_rate), "memory_clock_khz": int(p.memory_clock_rate),
            "memory_bus_bits": int(p.global_memory_bus_width),
            "driver_version": int(check(driver.cuDriverGetVersion(), "cuDriverGetVersion")),
        }

    # --- code -------------------------------------------------------------------------------
    def kernel(self, cubin: str, symbol: str) -> Any:
        from cuda.core import ObjectCode

        key = (cubin, symbol)
        if key not in self._kernels:
            if cubin not in self._modules:
                self._modules[cubin] = ObjectCode.from_cubin(cubin)
            self._kernels[key] = self._modules[cubin].get_kernel(symbol)
        return self._kernels[key]

    def launch(self, kernel: Any, grid: tuple[int, ...], block: tuple[int, ...], shared_mem: int,
               *args: Any, target: Any = None) -> None:
        from cuda.core import LaunchConfig, launch

        config = LaunchConfig(grid=tuple(grid), block=tuple(block), shmem_size=int(shared_mem))
        try:
            launch(target if target is not None else self.stream, config, kernel, *args)
        except Exception as exc:  # cuda.core raises CUDAError and friends; keep the message
            raise CudaFailure(f"launch failed: {exc}") from None

    def grid_for(self, count: int, block: int = 256) -> tuple[int, int, int]:
        """A grid-stride grid: enough blocks to fill the device, no more than needed."""
        return (max(1, min(-(-count // block), self.sm_count * 16)), 1, 1)

    def sync(self) -> None:
        try:
            self.stream.sync()
        except Exception as exc:
            raise CudaFailure(f"kernel execution failed: {exc}") from None

    def allow_dynamic_shared(self, kernel: Any, nbytes: int) -> None:
        """Raise the kernel's dynamic shared memory limit when it asks for more than 48 KiB."""
        if nbytes <= 48 * 1024:
            return
        from cuda.bindings import driver

        attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(driver.cuKernelSetAttribute(attr, nbytes, kernel.handle,
                                          self.device.device_id), "cuKernelSetAttribute")

    # --- memory -----------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> DeviceMemory:
        from cuda.bindings import driver

        ptr = check(driver.cuMemAlloc(max(nbytes, 1)), f"cuMemAlloc({nbytes})")
        return DeviceMemory(int(ptr), nbytes)

    def free(self, mem: DeviceMemory) -> None:
        from cuda.bindings import driver

        check(driver.cuMemFree(mem.ptr), "cuMemFree")

    def upload(self, ptr: int, host: np.ndarray) -> None:
        from cuda.bindings import driver

        host = np.ascontiguousarray(host)
        check(driver.cuMemcpyHtoD(ptr, host.ctypes.data, host.nbytes), "cuMemcpyHtoD")

    def download(self, ptr: int, nbytes: int, dtype: Any = np.uint8) -> np.ndarray:
        from cuda.bindings import driver

        self.sync()
        host = np.empty(nbytes // np.dtype(dtype).itemsize, dtype=dtype)
        check(driver.cuMemcpyDtoH(host.ctypes.data, ptr, host.nbytes), "cuMemcpyDtoH")
        return host

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        from cuda.bindings import driver

        check(driver.cuMemcpyDtoDAsync(dst, src, nbytes, self.stream.handle), "cuMemcpyDtoDAsync")

    def memory_free(self) -> int:
        from cuda.bindings import driver

        free, _ = check(driver.cuMemGetInfo(), "cuMemGetInfo")
        return int(free)

    # --- timing -----------------------------------------------------------------------------
    def record(self, event: Any = None) -> Any:
        return self.stream.record(event, options=None if event is not None else self._timing)

    def time_ms(self, work: Callable[[], None]) -> float:
        """Run `work` (enqueues on the stream) between two events and return the elapsed ms."""
        start = self.record()
        work()
        end = self.record()
        end.sync()
        return float(end - start)

    def graph(self, enqueue: Callable[[Any], None]) -> Any:
        """Capture what `enqueue(target)` launches into an executable graph."""
        builder = self.stream.create_graph_builder()
        builder.begin_building()
        enqueue(builder)
        builder.end_building()
        return builder.complete()
