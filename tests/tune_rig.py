"""Runs of `tune` without a GPU, for the tests of more than one module: the simulated backend
(`SimBackend`) playing recorded H200 measurements and ncu profiles, a real run store on disk,
the coder on a scripted `FakeLLMServer` when one is given. `make_rig` and `templated_rig` (the
templated silu_and_mul) give the context that `loop.run` takes; `run_moves` runs a kernel of
examples/moves/ (no knobs of its own) with planted move effects."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pragma_ncu import loop
from pragma_ncu.coder.llm_coder import LLMCoder
from pragma_ncu.conductor.situation import Policy
from pragma_ncu.infra.llm import LLMClient, LLMConfig
from pragma_ncu.infra.store import Store
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.loop.context import Context, RunPlan, State
from pragma_ncu.loop.rounds import variant_checker
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget, Evaluation
from pragma_ncu.spec.file import load_spec
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.replay import load_recording
from tests.fakes.tune import SimBackend, load_profile, text_hash
from tests.fakes.tuner import measurement

ROOT = Path(__file__).resolve().parents[1]
TEMPLATED = ROOT / "examples" / "templated" / "silu_and_mul.toml"
TUNED = ("llama-7b", "llama-13b", "llama-70b")  # "odd" is the check shape
SEARCH = SearchOptions(strategy="exhaustive", budget=Budget(evaluations=100), top_k=2, rounds=2)
MOVES = ROOT / "examples" / "moves"
MOVES_SEARCH = SearchOptions(strategy="exhaustive", budget=Budget(evaluations=60), top_k=2,
                             rounds=2)
# the copy-ceiling target is out of reach, so the run goes on past its first search
RESUME_POLICY = Policy(target_fraction=1.5, max_rounds=4)


@cache
def _silu() -> tuple[Evaluation, ...]:
    evaluations, _ = load_recording(ROOT / "tests/fixtures/tuner/silu_and_mul-h200.results.json.gz")
    return tuple(evaluations)


def silu() -> list[Evaluation]:
    """The templated silu's recorded search (BLOCK x VEC x ROWS, 72 points, all verified)."""
    return list(_silu())


@cache
def compendium() -> Compendium:
    return Compendium.load()


@dataclass
class Rig:
    ctx: Context
    backend: SimBackend
    server: FakeLLMServer | None = None
    notices: list[str] = field(default_factory=list)

    @property
    def store(self) -> Store:
        return self.ctx.store

    @property
    def run_id(self) -> str:
        return self.ctx.run_id


def make_rig(tmp: Path, spec_path: Path, recordings: dict[str, list[Evaluation]],
             profiles: dict[str, str], *, policy: Policy | None = None,
             server: FakeLLMServer | None = None, llm: dict[str, Any] | None = None,
             store_path: Path | None = None, run_id: str | None = None,
             save_profiles: bool = False,
             notice: Callable[[str], None] | None = None) -> Rig:
    """A run of `tune` over SimBackend: `recordings`/`profiles` keyed by kernel source text
    (the text is hashed here), the coder on `server` when given."""
    spec = load_spec(spec_path)
    backend = SimBackend({text_hash(k): v for k, v in recordings.items()},
                         {text_hash(k): load_profile(v) for k, v in profiles.items()},
                         save_profiles=save_profiles)
    store = Store.open(store_path or tmp / "runs.sqlite")
    run_id = run_id or store.create_run(spec.kernel_name, str(spec.spec_path), {},
                                        backend.device)
    run_dir = tmp / "run"
    base = tomllib.loads(spec.spec_path.read_text())
    coder = None
    if server is not None:
        config = LLMConfig(model="fake-coder", base_url=server.base_url, api_key="sk-test",
                           **{"timeout_s": 5.0, "max_retries": 1, "backoff_s": 0.0,
                              **(llm or {})})
        coder = LLMCoder(LLMClient(config), variant_checker(spec, base, run_dir, backend))
    notices: list[str] = []
    ctx = Context(spec, base, spec.spec_path.read_text(), backend, compendium(), store, run_id,
                  run_dir, RunPlan(TUNED, policy or Policy(), SEARCH, side_rounds=2), coder,
                  "fake-coder@local" if coder else "none", notice or notices.append)
    return Rig(ctx, backend, server, notices)


def templated_rig(tmp: Path, **kw: Any) -> Rig:
    source = TEMPLATED.with_name("silu_and_mul.cu").read_text()
    return make_rig(tmp, TEMPLATED, {source: silu()}, {source: "silu_and_mul"}, **kw)


def resumable_rig(tmp: Path, run_id: str | None = None) -> Rig:
    """The run that is killed and resumed: the templated silu, a retune after the search."""
    return templated_rig(tmp, policy=RESUME_POLICY, run_id=run_id, save_profiles=True)


def base_recording(us: float = 100.0) -> list[Evaluation]:
    """The kernel as written (no parameters): one point, verified at both shapes."""
    return [Evaluation(0, {}, "ok", measurements=(measurement("main", us),),
                       checked=(measurement("odd", 1.0),), registers=32, compile_s=0.5)]


def run_moves(tmp: Path, name: str, profile: str, effects: dict[tuple[str, Any], Any],
              after: dict[tuple[tuple[str, Any], ...], str] | None = None,
              checks: dict[tuple[str, Any], str] | None = None) -> tuple[State, Context]:
    """Tune examples/moves/`name` (its base point recorded, its profile the recorded page
    `profile`) with the planted `effects` ((knob, value) -> a factor on the times, or a
    Status), `after` (a point's knob values -> its profile) and `checks` ((knob, value) -> a
    compile error); the final State and the Context."""
    spec = load_spec(MOVES / f"{name}.toml")
    source = spec.source_path.read_text()
    backend = SimBackend({text_hash(source): base_recording()},
                         {text_hash(source): load_profile(profile)}, move_effects=effects,
                         move_profiles=after or {}, move_checks=checks or {})
    store = Store.open(tmp / "runs.sqlite")
    run_id = store.create_run(spec.kernel_name, str(spec.spec_path), {}, backend.device)
    ctx = Context(spec, tomllib.loads(spec.spec_path.read_text()), spec.spec_path.read_text(),
                  backend, compendium(), store, run_id, tmp / "run",
                  RunPlan(("main",), Policy(max_rounds=4), MOVES_SEARCH, side_rounds=2))
    return loop.run(ctx), ctx
