"""Fixtures of the LLM tests: a scripted OpenAI-compatible server on 127.0.0.1 (fakellm).

Imported by the test modules (not a conftest.py: the root conftest is imported by name)."""

from __future__ import annotations

import pytest
from fakellm import FakeLLM


@pytest.fixture
def fake_llm():
    """``fake_llm(responder)`` starts a server (stopped after the test) and returns it."""
    servers: list[FakeLLM] = []

    def start(responder=None) -> FakeLLM:
        server = FakeLLM(responder).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def no_ambient_llm_settings(monkeypatch):
    """Tests see no OPENAI_*/KGBUILD_MODEL of the machine (and never reach the internet)."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "KGBUILD_MODEL"):
        monkeypatch.delenv(name, raising=False)
