"""Test tiers: unit (always), toolchain (needs nvcc), gpu (needs a CUDA GPU; skipped without)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _has_nvcc() -> bool:
    return bool(shutil.which("nvcc") or os.environ.get("PRAGMA_NCU_NVCC")
                or Path("/usr/local/cuda/bin/nvcc").is_file())


@pytest.fixture(scope="session")
def gpu_device():  # type: ignore[no-untyped-def]
    """The device a real worker opens, or skip: GPU tests are real runs, never mocks."""
    from pragma_ncu.infra.errors import NoGPUError
    from pragma_ncu.pool.runner import Runner
    from pragma_ncu.worker import serve

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        command = serve.command(sys.executable, "pragma_ncu.backends.cuda.worker")
        with Runner(command, timeout_s=120, env=env) as r:
            return r.hello()
    except NoGPUError as exc:
        pytest.skip(f"no GPU: {exc.reason}")


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
