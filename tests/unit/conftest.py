"""Fixtures shared by unit tests: the scripted OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import FakeLLMServer


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A FakeLLMServer on 127.0.0.1 (random port), stopped after the test."""
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
