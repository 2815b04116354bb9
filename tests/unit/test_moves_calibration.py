"""The source-moves calibration sets (examples/moves/, held-out kernels in heldout/; the
structural ones of examples/moves/structural/ with their held-aside part, and the extra ones of
structural/extra/, written with the moves that need them): plain kernels with no knobs of their
own, a tuned shape and an odd one each, NumPy references that run, and at least one calibration
kernel for every move of the catalog."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pragma_ncu.coder.moves import MOVES, Applied
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant
from pragma_ncu.spec.file import load_spec
from pragma_ncu.worker.reference import load_function, run_numpy_reference
from tests.fakes.tuner import H200_LIMITS

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION = sorted((ROOT / "examples" / "moves").glob("*.toml"))
HELD_OUT = sorted((ROOT / "examples" / "moves" / "heldout").glob("*.toml"))
STRUCTURAL = sorted((ROOT / "examples" / "moves" / "structural").glob("*.toml"))
HELD_ASIDE = sorted([*(ROOT / "examples" / "moves" / "structural" / "heldaside").glob("*.toml"),
                     *(ROOT / "examples" / "moves" / "structural" / "heldaside2").glob("*.toml")])
EXTRA = sorted((ROOT / "examples" / "moves" / "structural" / "extra").glob("*.toml"))


def test_the_set_is_large_enough_and_declares_no_knobs() -> None:
    assert len(CALIBRATION) >= 8 and len(HELD_OUT) >= 3
    assert len(STRUCTURAL) + len(HELD_ASIDE) >= 12 and len(HELD_ASIDE) >= 4
    for path in CALIBRATION + HELD_OUT + STRUCTURAL + HELD_ASIDE + EXTRA:
        spec = load_spec(path)
        assert spec.params == (), path.name  # a user's kernel as written
        assert [s.name for s in spec.shapes] == ["main", "odd"], path.name


def test_every_move_has_a_calibration_kernel_it_fits() -> None:
    fits: dict[str, list[str]] = {m.name: [] for m in MOVES}
    for path in CALIBRATION + STRUCTURAL + EXTRA:
        spec = load_spec(path)
        base = asm.base_of(original_variant(spec), spec, {})
        subject = asm.subject_of(base, spec, {}, (), 128, H200_LIMITS)
        assert not isinstance(subject, str), (path.name, subject)
        for r in asm.try_moves(subject, MOVES):
            if isinstance(r, Applied):
                fits[r.move].append(path.stem)
    assert all(fits.values()), fits


@pytest.mark.parametrize("path", [p for p in CALIBRATION + HELD_OUT + STRUCTURAL + HELD_ASIDE
                                  + EXTRA if load_spec(p).reference.function],
                         ids=lambda p: p.stem)
def test_the_references_run_at_the_odd_shape(path: Path) -> None:
    spec = load_spec(path)
    task = spec.resolve(spec.shape_named("odd"))
    rng = np.random.default_rng(0)
    arrays = {a.name: rng.standard_normal(a.numel).astype(np.float32) if "fp" in a.dtype
              else rng.integers(0, 100, a.numel).astype(np.int32)
              for a in task.args if a.role != "scalar"}
    fn = load_function(str(spec.reference.function), str(path.parent))
    out = run_numpy_reference(fn, task.args, arrays.__getitem__)
    assert out and all(np.isfinite(v).all() for v in out.values())
