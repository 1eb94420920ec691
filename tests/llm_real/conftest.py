"""The real llama.cpp server (llama-cpp-python's OpenAI-compatible server) with a real small
model, started on 127.0.0.1 for the session, and a summary of what it was asked and answered
printed at the end of the run (CI's log shows the mode and the accepted/rejected counts).

``.ci/steps/20-llama.sh`` provisions it and exports ``KGBUILD_LLAMA_MODEL`` (a GGUF file);
when llama-cpp-python cannot be built there it exports ``KGBUILD_LLAMA_UNAVAILABLE`` with the
reason instead, and these tests skip with it. Anywhere else a missing server skips locally and
fails under CI (:func:`conftest.require`).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import free_port, require

STARTUP_SECONDS = 180  # loading a 100 MB model takes a second or two; the machine is shared
REPORT: list[str] = []  # lines for the terminal summary


@dataclass
class LlamaServer:
    base_url: str
    model: str  # the alias requests name
    log: Path


def report(line: str) -> None:
    """Record a line for the end-of-run summary (printed even without ``-s``)."""
    REPORT.append(line)


def pytest_terminal_summary(terminalreporter):
    if REPORT:
        terminalreporter.section("real LLM server (llama-cpp-python)")
        for line in REPORT:
            terminalreporter.write_line(line)


def _model_file() -> Path:
    reason = os.environ.get("KGBUILD_LLAMA_UNAVAILABLE")
    if reason:
        report(f"skipped: {reason}")
        pytest.skip(f"llama-cpp-python is unavailable here: {reason}")
    model = os.environ.get("KGBUILD_LLAMA_MODEL", "")
    require(bool(model) and Path(model).is_file(),
            "no $KGBUILD_LLAMA_MODEL (a GGUF file; .ci/steps/20-llama.sh provides one)")
    require(importlib.util.find_spec("llama_cpp") is not None,
            "llama-cpp-python[server] is not installed (.ci/steps/20-llama.sh installs it)")
    return Path(model)


def _start(tmp: Path, alias: str, *extra: str):
    model = _model_file()
    port = free_port()
    log = tmp / f"{alias}.log"
    # 2 threads and a 4k context: the CI machine has 2 cores, and a chunk's prompt with the
    # schema's instructions is about 1.5k tokens
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias",
           alias, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
           "--n_threads", "2", "--n_threads_batch", "2", *extra]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                preexec_fn=_die_with_parent)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-1500:]
            pytest.fail(f"llama_cpp.server exited with {proc.returncode} before serving:\n{tail}",
                        pytrace=False)
        try:
            with urllib.request.urlopen(base + "/models", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"llama_cpp.server did not answer {base}/models within "
                        f"{STARTUP_SECONDS} s (log: {log})", pytrace=False)
        time.sleep(0.25)
    return proc, LlamaServer(base, alias, log)


def _die_with_parent() -> None:
    """In the server's process: be killed when the test process dies (a killed or timed-out
    pytest run leaves no server behind; Linux only, elsewhere the fixture's stop suffices)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def llama_chat(tmp_path_factory):
    """The chat server: the model loaded for completions only (no embeddings)."""
    proc, server = _start(tmp_path_factory.mktemp("llama"), "smollm2-135m")
    try:
        yield server
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def llama_embeddings(tmp_path_factory):
    """The same model in a second server process loaded for embeddings (llama-cpp-python
    serves /v1/embeddings only from a model loaded with ``--embedding true``)."""
    proc, server = _start(tmp_path_factory.mktemp("llama-embed"), "smollm2-135m-embed",
                          "--embedding", "true")
    try:
        yield server
    finally:
        _stop(proc)


@pytest.fixture(autouse=True)
def _no_ambient_llm_settings(monkeypatch):
    """Only what a test passes reaches the client: no developer's key, model or endpoint."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KGBUILD_MODEL", "KGBUILD_EMBEDDINGS_MODEL"):
        monkeypatch.delenv(name, raising=False)
