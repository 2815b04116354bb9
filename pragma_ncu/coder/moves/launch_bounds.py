"""launch_bounds: `__launch_bounds__(THREADS, MIN_BLOCKS)` on a kernel whose registers cap
the blocks an SM holds.

Called for when registers per thread limit occupancy: asking for MIN_BLOCKS resident blocks of
THREADS threads makes the compiler fit the kernel in 65536 / (MIN_BLOCKS * THREADS) registers,
for this kernel alone (finer than a file-wide -maxrregcount, which also squeezes device
functions); the search weighs the extra warps against any spills. MIN_BLOCKS runs over the
block counts above what the registers allow now, up to what the SM's thread and block limits
allow; 0 (no bounds) is the source as written. THREADS is the launch's block size: the block
parameter itself when the launch names one (`block = ["BLOCK"]`), else the largest block the
spec launches, with the parameters it depends on held at the best's values.
"""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Refused, Subject
from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.spec import expr

NAME = "launch_bounds"
KNOB = "PNCU_MIN_BLOCKS"
WARP = 32
REG_UNIT = 256  # registers are allocated per warp in chunks of 256
MAX_VALUES = 4


def apply(subject: Subject) -> Applied | Refused:
    if any(c.type == "launch_bounds" for c in subject.kernel.children) or \
            "__maxnreg__" in ts.text(subject.kernel.child_by_field_name("declarator")):
        return Refused(NAME, "the kernel has launch bounds already")
    if subject.registers is None:
        return Refused(NAME, "the registers per thread of the best build are unknown")
    threads = _threads(subject)
    if isinstance(threads, Refused):
        return threads
    text, count, fixed = threads
    now = _blocks_by_registers(subject, count)
    most = min(subject.max_threads_per_sm // count, subject.max_blocks_per_sm)
    if now >= most:
        return Refused(NAME, f"registers do not limit occupancy ({subject.registers} per thread "
                             f"leave room for {now} blocks of {count} threads, the most an SM "
                             "holds)")
    values = _levels(now, most)
    on = f"__launch_bounds__({tpl.literal(text)}, " + tpl.value(KNOB) + ") "
    declarator = ts.declarator_of(subject.kernel)
    edit = Edit(declarator.start_byte, declarator.start_byte, tpl.insert(KNOB, on))
    site = (f"the kernel {subject.spec.kernel_name}: {subject.registers} registers allow "
            f"{now} block(s) of {count} threads per SM; asks for {', '.join(map(str, values))}")
    return Applied(NAME, (Knob(KNOB, (0, *values), 0),), (edit,), (site,), fixed=fixed,
                   writes_block=text.isdigit())


def _threads(subject: Subject) -> tuple[str, int, tuple[str, ...]] | Refused:
    """The block size as the template writes it, its largest value, and the parameters it
    holds fixed."""
    spec = subject.spec
    dims = [d for d in spec.launch.block if d.strip() != "1"]
    try:
        counts = [spec.resolve(s, subject.point).launch.threads_per_block for s in spec.shapes]
    except PragmaError as exc:
        return Refused(NAME, f"the block size could not be computed: {exc}")
    count = max(counts)
    if len(dims) == 1 and dims[0].strip() in subject.macros:
        return dims[0].strip(), count, ()  # a -D knob: the bounds follow it through the search
    names = tuple(sorted(set().union(*(expr.names(d) for d in spec.launch.block))
                         & set(subject.point)))
    return str(count), count, names


def _blocks_by_registers(subject: Subject, threads: int) -> int:
    assert subject.registers is not None
    warps = -(-threads // WARP)
    per_warp = -(-subject.registers * WARP // REG_UNIT) * REG_UNIT
    return subject.max_registers_per_sm // (warps * per_warp)


def _levels(now: int, most: int) -> tuple[int, ...]:
    """Block counts above `now`: the next one, doublings, and the most, at most MAX_VALUES."""
    wanted = {now + 1, 2 * now, 3 * now, 4 * now, most}
    values = sorted(v for v in wanted if now < v <= most)
    if len(values) > MAX_VALUES:
        values = [*values[:MAX_VALUES - 1], values[-1]]
    return tuple(values)


MOVE = Move(
    NAME, ("occupancy_registers",),
    "asks the compiler for more resident blocks per SM (__launch_bounds__) when registers cap "
    "occupancy", apply,
    knobs=(KNOB,),
    never="never changes the block size or replaces bounds the kernel already has")
