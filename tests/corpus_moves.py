"""The conductor's situation on a kernel of the diagnosis corpus (examples/corpus, its ncu
pages recorded on an H200 in tests/fixtures/corpus/ours): the recorded profile diagnosed and
the source moves read against the kernel's source, as the tune loop reads them after round 0
or a later round."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pragma_ncu.backends import diagnose_in
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant
from pragma_ncu.conductor.situation import MoveOption, Situation
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.loop.moves import hot_lines, options_of
from pragma_ncu.measure.records import Decision, KernelState
from pragma_ncu.spec.file import load_spec
from pragma_ncu.spec.model import Param, TaskSpec
from tests.corpus_eval import EXPECTED, collection, knowledge
from tests.fakes.tuner import H200_LIMITS

ROOT = Path(__file__).resolve().parents[1]


@cache
def read(name: str) -> tuple[Diagnosis, tuple[MoveOption, ...], tuple[Param, ...]]:
    """The recorded profile's diagnosis and the moves read against the kernel's source."""
    profile, kernel = collection("ours")[name]
    diagnosis = diagnose_in(profile, kernel, knowledge())
    spec = load_spec((ROOT / "examples" / "corpus" / str(EXPECTED[name]["spec"])).resolve())
    registers = kernel.value("launch__registers_per_thread")
    return diagnosis, moves_of(spec, diagnosis, int(registers) if registers else None), \
        spec.params


def moves_of(spec: TaskSpec, diagnosis: Diagnosis, registers: int | None
             ) -> tuple[MoveOption, ...]:
    """The moves read against the spec's kernel at its defaults, with the profile's hot lines."""
    point = spec.default_params()
    base = asm.base_of(original_variant(spec), spec, point)
    return options_of(asm.subject_of(base, spec, point, hot_lines(diagnosis, base.filename),
                                     registers, H200_LIMITS))


def baseline(fraction: float) -> KernelState:
    """The original at round 0, verified, at `fraction` of its roofline."""
    return KernelState(0, "original", "k", "h", {}, {"main": 100.0}, {"main": 1.0}, 100.0, True,
                       ceiling_fraction=fraction)


def situation(name: str, round_: int = 0, history: tuple[Decision, ...] = (),
              fraction: float = 0.5, accepted: bool = False) -> Situation:
    diagnosis, options, params = read(name)
    best = baseline(fraction)
    return Situation(round_, best, best if round_ else None, best if round_ else None, accepted,
                     "", None, diagnosis, params, history=history, moves=options)
