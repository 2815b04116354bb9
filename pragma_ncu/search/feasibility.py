"""The hardware-feasible region u(θ; h) ≤ r(h): which points can run at all, decided before
anything is compiled (launch geometry, restrictions) and right after (registers, shared memory).

Every pruned point gets a reason code and a sentence, so a run can say how many points each
limit removed. Limits come from the device (`Limits.from_device`), never from a table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pragma_ncu.build.compile import KernelResources
from pragma_ncu.infra.errors import ExpressionError, SpecError
from pragma_ncu.pool.runner import DeviceInfo
from pragma_ncu.spec import expr
from pragma_ncu.spec.model import ParamValue, ResolvedLaunch, Shape, TaskSpec, rules_of
from pragma_ncu.targets.rules import LaunchLimits

WARP = 32
REG_ALLOC_UNIT = 256  # registers are allocated per warp in chunks of 256 (sm_50 and later)


@dataclass(frozen=True)
class Limits:
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_registers_per_block: int
    max_registers_per_sm: int
    max_shared_per_block_optin: int
    max_shared_per_sm: int

    @staticmethod
    def host() -> Limits:
        """A CPU function has no launch geometry to bound: its one "thread" always fits
        (its spec's restrictions still apply)."""
        big = 1 << 30
        return Limits(1, 1, 1, big, big, big, big)

    @staticmethod
    def from_device(device: DeviceInfo) -> Limits:
        return Limits(device.max_threads_per_block, device.max_threads_per_sm,
                      device.max_blocks_per_sm, device.max_registers_per_block,
                      device.max_registers_per_sm, device.max_shared_per_block_optin,
                      device.max_shared_per_sm)


@dataclass(frozen=True)
class Infeasible:
    code: str  # restriction | spec | threads_per_block | block_dims | grid_dims |
    #            shared_memory | registers | no_occupancy
    message: str


def check_point(spec: TaskSpec, point: dict[str, ParamValue], shapes: Sequence[Shape],
                limits: Limits) -> Infeasible | None:
    """Before compiling: restrictions and launch geometry at every shape."""
    values = {**spec.default_params(), **point}
    model = rules_of(spec.source_path).launch_limits
    for shape in shapes:
        env = {**{k: v for k, v in values.items() if not isinstance(v, str)}, **shape.as_dict()}
        for text in spec.restrictions:
            try:
                ok = bool(expr.evaluate(text, env))
            except ExpressionError as exc:
                return Infeasible("spec", f"restriction {text!r} at {shape.name}: {exc}")
            if not ok:
                return Infeasible("restriction", f"{text} is false at shape {shape.name}")
        try:
            launch = spec.resolve(shape, values).launch
        except SpecError as exc:
            return Infeasible("spec", f"at shape {shape.name}: {exc.expected}, got {exc.got!r}")
        problem = check_launch(launch, limits, model)
        if problem is not None:
            return Infeasible(problem.code, f"{problem.message} at shape {shape.name}")
    return None


def check_launch(launch: ResolvedLaunch, limits: Limits,
                 model: LaunchLimits | None = None) -> Infeasible | None:
    """The device's `limits` and those its programming model (`model`, the spec's target's)
    fixes of every launch."""
    threads = launch.threads_per_block
    if threads > limits.max_threads_per_block:
        return Infeasible("threads_per_block", f"{threads} threads per block > "
                          f"{limits.max_threads_per_block}")
    over = model.exceeded(launch.grid, launch.block) if model is not None else None
    if over is not None:
        return Infeasible(over.code, f"{over.what} = {over.value} > {over.top}")
    if launch.shared_mem > limits.max_shared_per_block_optin:
        return Infeasible("shared_memory", f"{launch.shared_mem} bytes of dynamic shared memory "
                          f"> {limits.max_shared_per_block_optin}")
    return None


def check_build(resources: KernelResources, launch: ResolvedLaunch,
                limits: Limits) -> Infeasible | None:
    """After compiling: the kernel's registers and static shared memory at this launch."""
    threads = launch.threads_per_block
    regs = registers_per_block(resources.registers, threads)
    if regs > limits.max_registers_per_block:
        return Infeasible("registers", f"{resources.registers} registers × {threads} threads "
                          f"= {regs} allocated > {limits.max_registers_per_block} per block")
    shared = resources.shared_static + launch.shared_mem
    if shared > limits.max_shared_per_block_optin:
        return Infeasible("shared_memory", f"{resources.shared_static} static + "
                          f"{launch.shared_mem} dynamic bytes of shared memory > "
                          f"{limits.max_shared_per_block_optin}")
    if blocks_per_sm(resources, launch, limits) == 0:
        return Infeasible("no_occupancy", "not even one block fits on an SM")
    return None


def registers_per_block(registers: int, threads: int) -> int:
    per_warp = math.ceil(max(registers, 1) * WARP / REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    return per_warp * math.ceil(threads / WARP)


def blocks_per_sm(resources: KernelResources, launch: ResolvedLaunch, limits: Limits) -> int:
    """Theoretical resident blocks per SM (threads, registers, shared memory, block slots)."""
    threads = launch.threads_per_block
    by_threads = limits.max_threads_per_sm // threads
    regs = registers_per_block(resources.registers, threads)
    by_regs = limits.max_registers_per_sm // regs
    shared = resources.shared_static + launch.shared_mem
    by_shared = limits.max_shared_per_sm // shared if shared else limits.max_blocks_per_sm
    return max(0, min(by_threads, by_regs, by_shared, limits.max_blocks_per_sm))
