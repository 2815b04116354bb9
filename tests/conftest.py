"""Test tiers: unit (always), toolchain (needs nvcc), gpu (needs a CUDA GPU; skipped without)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pragma_ncu.infra.toolchain import NvccInfo
    from pragma_ncu.knowledge.compendium import Compendium
    from pragma_ncu.pool.runner import Runner

ROOT = Path(__file__).resolve().parents[1]


def _has_nvcc() -> bool:
    return bool(shutil.which("nvcc") or os.environ.get("PRAGMA_NCU_NVCC")
                or Path("/usr/local/cuda/bin/nvcc").is_file())


def _cuda_worker(timeout_s: float) -> Runner:
    """A Runner of the CUDA worker, this checkout first on its path."""
    from pragma_ncu.pool.runner import Runner
    from pragma_ncu.worker import serve

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = serve.command(sys.executable, "pragma_ncu.backends.cuda.worker")
    return Runner(command, timeout_s=timeout_s, env=env)


@pytest.fixture(scope="session")
def gpu_device():  # type: ignore[no-untyped-def]
    """The device a real worker opens, or skip: GPU tests are real runs, never mocks."""
    from pragma_ncu.infra.errors import NoGPUError

    try:
        with _cuda_worker(120) as r:
            return r.hello()
    except NoGPUError as exc:
        pytest.skip(f"no GPU: {exc.reason}")


@pytest.fixture(scope="module")
def runner(gpu_device: object) -> Iterator[Runner]:
    """A CUDA worker for a module's GPU tests (skipped without a GPU)."""
    with _cuda_worker(60) as r:
        yield r


@pytest.fixture(scope="module")
def nvcc() -> NvccInfo:
    """The nvcc the settings find (the toolchain tests are skipped without one)."""
    from pragma_ncu.infra.settings import load_settings
    from pragma_ncu.infra.toolchain import find_nvcc

    return find_nvcc(load_settings())


@pytest.fixture(scope="module")
def knowledge() -> Compendium:
    """The metric compendium (knowledge/), loaded once a module."""
    from pragma_ncu.knowledge.compendium import Compendium

    return Compendium.load()


@pytest.fixture
def toy():  # type: ignore[no-untyped-def]
    """The test-only target "toy" (tests/fakes/toy_backend) registered for one test."""
    from pragma_ncu import backends
    from tests.fakes.toy_backend import TARGET

    backends.register(TARGET)
    try:
        yield
    finally:
        backends.unregister(TARGET.name)


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    skip_nvcc = pytest.mark.skip(reason="nvcc not found")
    for item in items:
        if "toolchain" in item.keywords and not _has_nvcc():
            item.add_marker(skip_nvcc)
