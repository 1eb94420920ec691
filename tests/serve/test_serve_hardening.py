"""The server's bounds under hostile or careless clients: timed-out work that cannot pile up,
header and body deadlines and a connection cap on a real server (raw sockets), a client gone
mid-body as one log line."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from conftest import FIXTURE_CATALOG, free_port
from helpers import write_config
from starlette.testclient import TestClient

from kgbuild.build.pipeline import build_graph
from kgbuild.schema.loader import load_schema
from kgbuild.serve import app as app_module
from kgbuild.serve.app import create_app
from kgbuild.serve.config import load_serve_config


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hardening")
    shutil.copytree(FIXTURE_CATALOG, folder / "catalog")
    build_graph([folder / "catalog"], load_schema(), store=folder / "store", timestamp=0).store.close()
    return folder


# -- timed-out work --------------------------------------------------------------------------------
def test_timed_out_work_keeps_its_thread_and_waiting_work_never_starts(store, monkeypatch):
    running, started, most = [0], [0], [0]
    lock = threading.Lock()

    def slow(view, node_id):
        with lock:
            running[0] += 1
            started[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(1.5)
        with lock:
            running[0] -= 1

    monkeypatch.setattr(app_module, "node_record", slow)
    config = load_serve_config(write_config(store, workers=2, request_timeout=0.3))
    with TestClient(create_app(store / "store", load_schema(), config, watch=False)) as client:
        answers = []

        def ask():
            answers.append(client.get("/node", params={"id": "x"}))
        threads = [threading.Thread(target=ask) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert [r.status_code for r in answers] == [503] * 6
        assert {r.json()["code"] for r in answers} == {"timeout"}
        assert running[0] <= 2  # after the last answer: only the pool's threads still work
        assert most[0] == 2 and started[0] == 2  # the other four timed out waiting: never ran


# -- a real server, raw sockets ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(store):
    port = free_port()
    config = write_config(store, header_timeout=1, body_timeout=1, max_connections=6,
                          keep_alive=1)
    log = open(store / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "kgbuild.cli", "serve", "--store",
                             str(store / "store"), "--port", str(port), "--config", str(config)],
                            stdout=log, stderr=subprocess.STDOUT, cwd=store)
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert proc.poll() is None, (store / "server.log").read_text()
        assert time.monotonic() < deadline, "the server did not answer within 60 s"
        time.sleep(0.2)
    try:
        yield port, store / "server.log"
    finally:
        proc.kill()
        proc.wait(10)
        log.close()


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (10 s at most)."""
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


@pytest.mark.server
def test_a_header_sent_a_byte_at_a_time_is_cut_off(server):
    port, _ = server
    start = time.monotonic()
    with connect(port) as sock:
        sock.settimeout(0.25)
        closed = b""
        for byte in b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 40:
            try:
                sock.send(bytes([byte]))
                closed = sock.recv(65536)
                break
            except TimeoutError:
                continue
            except OSError:
                break
        sock.settimeout(10)
        closed += read_all(sock) if closed else b""
    took = time.monotonic() - start
    assert closed.startswith(b"HTTP/1.1 408 ") and b'"code": "header-timeout"' in closed
    assert 0.9 < took < 3
    with connect(port) as silent:  # a connection that never sends a byte
        start = time.monotonic()
        assert read_all(silent).startswith(b"HTTP/1.1 408 ")
        assert 0.9 < time.monotonic() - start < 3


@pytest.mark.server
def test_a_body_sent_too_slowly_is_answered_408(server):
    port, _ = server
    with connect(port) as sock:
        sock.sendall(b"POST /traverse HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 100\r\n\r\n{\"seeds\": ")
        start = time.monotonic()
        answer = read_all(sock)  # closed after the answer
    assert answer.startswith(b"HTTP/1.1 408 ") and b'"code": "body-timeout"' in answer
    assert 0.9 < time.monotonic() - start < 3


@pytest.mark.server
def test_connections_beyond_the_cap_are_refused_and_idle_ones_closed(server):
    port, _ = server
    held = [connect(port) for _ in range(6)]  # the cap: 6 open at once
    try:
        time.sleep(0.2)
        with connect(port) as extra:
            assert read_all(extra).startswith(b"HTTP/1.1 503 ")
        start = time.monotonic()
        for sock in held:  # none sent a header: each is closed at the header deadline
            assert read_all(sock).startswith(b"HTTP/1.1 408 ")
        assert time.monotonic() - start < 3
    finally:
        for sock in held:
            sock.close()
    assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200


@pytest.mark.server
def test_a_client_gone_mid_body_is_one_log_line(server):
    port, log = server
    before = log.read_text()
    with connect(port) as sock:
        sock.sendall(b"POST /traverse HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 1000\r\n\r\n{\"seeds\": ")
        time.sleep(0.2)
    deadline = time.monotonic() + 5
    while log.read_text() == before and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    added = log.read_text()[len(before):].strip().splitlines()
    assert len(added) == 1 and "went away" in added[0] and "POST /traverse" in added[0], added
