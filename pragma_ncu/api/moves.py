"""`moves` as a library call: what `tune` may do to a kernel's source, without a GPU.

Every source move (`pragma_ncu.coder.moves.MOVES`) is read against the kernel as written, by the
same function tune's rounds read the historical best with (`loop.moves.read`): whether it fits,
its knobs (values, default first), where it would edit and the launch it would search, or why it
does not fit. With `diff`, each move that fits is rendered at its boldest point (each knob at its
last value), shown as a unified diff against the source, and compiled (the target's compile
without a device: nvcc for CUDA), as a moves round checks it before its search. Offline there is
no profile: no hot lines and no registers are known, and the moves that read them fall back as
they do in a run without them (the report says so).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from pragma_ncu.api.arguments import checked
from pragma_ncu.api.common import SpecLike, load, settings_or_default, target_of
from pragma_ncu.backends.base import Target
from pragma_ncu.coder.moves import MOVES, Applied, Knob, Move, Refused
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant
from pragma_ncu.infra.progress import Progress, logged, notes
from pragma_ncu.infra.settings import Settings
from pragma_ncu.loop import moves as loop_moves
from pragma_ncu.loop.context import variant_specs
from pragma_ncu.spec.file import spec_tables
from pragma_ncu.spec.model import Param, ParamValue, TaskSpec

FITS, REFUSED, DROPPED = "fits", "refused", "dropped"
OFFLINE = ("no profile offline: no hot lines are known (unroll takes the innermost loops that "
           "load through a pointer parameter, as in a run without source counters) and no "
           "registers (launch_bounds, which needs the registers of the best's build, is "
           "refused); a run reads both from the best's profile and build")


@dataclass(frozen=True)
class MoveReview:
    """One move read against the kernel: `status` is "fits", "refused" (with `reason`: why the
    move does not fit this source) or "dropped" (it fits, but its rewrite does not give the
    source back at its defaults, or does not parse or compile at its boldest point)."""

    move: str
    answers: tuple[str, ...]  # the diagnosis classes that call for it
    why: str  # what it changes and why that answers them
    status: str
    reason: str = ""
    knobs: tuple[Knob, ...] = ()  # values, the default (the source as written) first
    sites: tuple[str, ...] = ()  # where it edits: "the loop at line 12"
    grid: tuple[str, ...] | None = None  # the launch it searches; None: as the spec writes it
    block: tuple[str, ...] | None = None
    boldest: dict[str, ParamValue] = field(default_factory=dict)  # each knob's last value
    flags: tuple[str, ...] = ()  # the nvcc flags its knobs add at the boldest point
    diff: str = ""  # its rewrite at the boldest point against the source (with diff=True)
    compiled: bool | None = None  # None: not compiled (no diff asked, or it does not fit)
    compile_error: str = ""  # the first error the compiler gave

    @property
    def applies(self) -> bool:
        return self.status == FITS


@dataclass(frozen=True)
class MovesReport:
    """Every move read against `kernel`'s source (`source`), in the registry's order; `unread`
    says why no move can read the source at all ("" when they could); `notes` what is not
    known offline; `arch` what the rewrites were compiled for (with diff)."""

    kernel: str
    source: Path
    grid: tuple[str, ...]
    block: tuple[str, ...]
    moves: tuple[MoveReview, ...]
    unread: str = ""
    notes: tuple[str, ...] = ()
    arch: str | None = None

    @property
    def applicable(self) -> tuple[MoveReview, ...]:
        return tuple(m for m in self.moves if m.applies)


@checked
def moves(spec: SpecLike, *, spec_path: Path | None = None, diff: bool = False,
          arch: str | None = None, settings: Settings | None = None,
          progress: Progress | None = None) -> MovesReport:
    """Which source moves `spec`'s kernel admits, with their knobs and launch, or why each does
    not fit; with `diff`, each fitting move's rewrite at its boldest point as a unified diff
    against the source, compiled without a device (for `arch`, else the target's default)."""
    task, settings = load(spec, spec_path), settings_or_default(settings)
    say = notes(logged(progress))
    with tempfile.TemporaryDirectory(prefix="pragma-ncu-moves-") as work:
        spec_for = variant_specs(task, spec_tables(task), Path(work))
        variant = original_variant(task)
        read = loop_moves.read(spec_for, variant, task.default_params())
        report = MovesReport(task.kernel_name, task.source_path, task.launch.grid,
                             task.launch.block, (), arch=arch if diff else None)
        if isinstance(read, str):
            return replace(report, unread=read, moves=tuple(
                MoveReview(m.name, m.answers, m.why, REFUSED, read) for m in MOVES))
        base, subject = read
        compiler = _Compiler(target_of(task), settings, arch)
        reviews = []
        for m, got in zip(MOVES, asm.try_moves(subject, MOVES), strict=True):
            review = _review(m, got, base)
            if diff and review.applies and isinstance(got, Applied):
                say(f"compiling {m.name} at its boldest point")
                review = _rendered(review, got, base, spec_for, compiler, task)
            reviews.append(review)
        return replace(report, moves=tuple(reviews), notes=(OFFLINE,))


def _review(move: Move, got: Applied | Refused, base: asm.Base) -> MoveReview:
    """What a move proposes (its knobs, sites, launch, flags at its boldest), or why not."""
    if isinstance(got, Refused):
        return MoveReview(move.name, move.answers, move.why, REFUSED, got.reason)
    launch = asm.launch_of(base.launch, [got])
    moved = launch["grid"] != base.launch["grid"] or launch["block"] != base.launch["block"]
    bold = loop_moves.boldest(got)
    flags = tuple(f for k in got.knobs if k.flag
                  for f in Param(k.name, k.default, k.values, k.flag).flags_for(bold[k.name]))
    return MoveReview(move.name, move.answers, move.why, FITS, knobs=got.knobs, sites=got.sites,
                      grid=tuple(launch["grid"]) if moved else None,
                      block=tuple(launch["block"]) if moved else None, boldest=bold,
                      flags=flags)


def _rendered(review: MoveReview, got: Applied, base: asm.Base,
              spec_for: loop_moves.SpecFor, compiler: _Compiler, task: TaskSpec) -> MoveReview:
    """The move alone at its boldest point: its diff against the source, and whether it
    compiles (a move whose template does not give the source back, or whose rewrite does not
    parse, is dropped, as in a run)."""
    variant, kept, refused = asm.assemble(base, [got], f"moves {got.move}", "",
                                          task.source_path.resolve().parent)
    if not kept:
        return replace(review, status=DROPPED, reason=refused[0].reason if refused else
                       "its rewrite could not be composed")
    text, _ = loop_moves.at_boldest(variant, got)
    shown = replace(review, diff=asm.diff(base.text, text, base.filename))
    error = loop_moves.rewrite_error(spec_for, compiler, variant, got, base)
    if error == loop_moves.UNPARSED:
        return replace(shown, status=DROPPED, reason=error)
    if not compiler.answered:  # a target that compiles nothing without its device
        return shown
    return replace(shown, compiled=not error, compile_error=error)


class _Compiler:
    """A spec's compile at its defaults without a device (the target's no-device check,
    which raises the compiler's error when it does not build): None when it builds.
    `answered` is False after a target that cannot compile without its device."""

    def __init__(self, target: Target, settings: Settings, arch: str | None) -> None:
        self.target, self.settings, self.arch = target, settings, arch
        self.answered = True

    def __call__(self, spec: TaskSpec) -> str | None:
        self.answered = self.target.without_device(spec, self.settings, self.arch) is not None
        return None
