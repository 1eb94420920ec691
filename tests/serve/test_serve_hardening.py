"""The server's bounds under hostile or careless clients: timed-out work that cannot pile up,
header and body deadlines and a connection cap on a real server (raw sockets), a client gone
mid-body as one log line; and what public answers may say: /health, free text naming hidden
entities, the Host header, the spec's numbers."""

from __future__ import annotations

import shutil
import socket
import threading
import time

import httpx
import pytest
from conftest import FIXTURE_CATALOG
from helpers import ADMIN_TOKEN, PCI_TOKEN, bearer, cli_json, start_serve, write_config
from starlette.testclient import TestClient

from kgbuild.errors import KgbuildError
from kgbuild.project.pipeline import build_graph
from kgbuild.schema.loader import load_schema
from kgbuild.serve import app as app_module
from kgbuild.serve.app import create_app
from kgbuild.serve.config import load_serve_config
from kgbuild.serve.openapi import openapi
from kgbuild.serve.spec import BOUNDS, ApiError, parse_spec


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
    (store / "real").mkdir()
    config = write_config(store / "real", header_timeout=1, body_timeout=1, max_connections=6,
                          keep_alive=1)
    proc, base = start_serve(store / "store", config, store)
    port = int(base.rsplit(":", 1)[1])
    try:
        yield port, store / "server.log"
    finally:
        proc.kill()
        proc.wait(10)


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
def test_a_client_still_sending_when_cut_off_reads_the_whole_answer(server):
    """Regression (CI, stop 30): the server closed a refused connection with the client's later
    bytes unread, the kernel reset it, and the client lost the 408 it had not read yet."""
    port, _ = server
    with connect(port) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        end = time.monotonic() + 1.6  # past the 1 s header deadline, still sending
        while time.monotonic() < end:
            sock.sendall(b"a")
            time.sleep(0.02)
        time.sleep(0.2)  # the answer, and (before the fix) the reset, have arrived
        answer = read_all(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ") and b'"code": "header-timeout"' in body
    assert f"content-length: {len(body)}".encode() in head  # the whole answer


@pytest.mark.server
def test_a_header_beyond_the_size_bound_is_refused(server):
    from kgbuild.serve.server import MAX_HEADER_BYTES

    port, _ = server
    with connect(port) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(MAX_HEADER_BYTES // 8192):  # just over the bound, then nothing more
            sock.sendall(b"X-Big: " + b"a" * 8185 + b"\r\n")
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 431 ") and b'"code": "header-too-large"' in answer
    with connect(port) as sock:  # a header within the bound is answered
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Ok: " + b"a" * 30000
                     + b"\r\nConnection: close\r\n\r\n")
        assert read_all(sock).startswith(b"HTTP/1.1 200 ")


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


@pytest.mark.server
def test_a_foreign_host_is_refused_by_the_real_server(server):
    port, _ = server
    for host, status in ((b"attacker.example", b"421"), (b"127.0.0.1:%d" % port, b"200"),
                         (b"localhost", b"200"), (b"[::1]:80", b"200"), (b"", b"421")):
        with connect(port) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 " + status), (host, answer)
        if status == b"421":
            assert b'"code": "bad-host"' in answer


# -- what public answers say ------------------------------------------------------------------------
def test_health_tells_the_public_only_that_it_is_up(store):
    config = load_serve_config(write_config(store))
    with TestClient(create_app(store / "store", load_schema(), config, watch=False)) as client:
        for headers in ({}, bearer(PCI_TOKEN)):  # a labelled token: no whole-store counts either
            short = client.get("/health", headers=headers).json()
            assert short == {"status": "ok", "generation": short["generation"]}
        full = client.get("/health", headers=bearer(ADMIN_TOKEN)).json()
        assert full["generation"] == short["generation"] and full["store"] == str(store / "store")
        assert full["nodes"] > 0 and full["edges"] > 0 and full["reloads"] == 0


SCREENED = "component:default/web-shop"


@pytest.fixture(scope="module")
def titled(tmp_path_factory):
    """The catalog with a public entity whose title and a tag name the hidden Payments DB."""
    folder = tmp_path_factory.mktemp("titled")
    shutil.copytree(FIXTURE_CATALOG, folder / "catalog")
    f = folder / "catalog" / "components" / "web-shop.yaml"
    f.write_text(f.read_text().replace("  title: Web Shop\n", "  title: Web Shop (Payments DB "
                                       "console)\n  tags: [payments-db, shop]\n"))
    build_graph([folder / "catalog"], load_schema(), store=folder / "store", timestamp=0).store.close()
    return folder


def test_titles_tags_and_labels_naming_a_hidden_entity_are_withheld(titled):
    config = load_serve_config(write_config(titled))
    with TestClient(create_app(titled / "store", load_schema(), config, watch=False)) as client:
        public = client.get("/node", params={"id": SCREENED}).json()
        assert public["label"] == "web-shop" and "title" not in public["attributes"]
        assert public["attributes"]["tag"] == ["shop"]
        assert public["attributes"]["description"] == ["The customer-facing shop website."]
        spec = {"seeds": [SCREENED], "follow": ["dependsOn", "ownedBy"], "hops": 2}
        walked = client.post("/traverse", json=spec)
        assert "payments db" not in walked.text.lower() and "payments-db" not in walked.text
        assert walked.json() == cli_json(titled / "store", spec)  # the CLI's view: the same
        pci = client.get("/node", params={"id": SCREENED}, headers=bearer(PCI_TOKEN)).json()
        assert pci["label"] == "Web Shop (Payments DB console)"
        assert pci["attributes"]["tag"] == ["payments-db", "shop"]


def test_the_host_header_is_checked_against_the_allowed_names(store, tmp_path):
    app = create_app(store / "store", load_schema(), watch=False, bind="127.0.0.1")
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        assert client.get("/health").status_code == 200
        for host in ("localhost", "LOCALHOST.:8000", "[::1]:8000"):
            assert client.get("/health", headers={"host": host}).status_code == 200
        for host in ("attacker.example", "127.0.0.1.attacker.example", "localhost.example:80"):
            refused = client.get("/health", headers={"host": host})
            assert refused.status_code == 421 and refused.json()["code"] == "bad-host"
    (tmp_path / "serve.yaml").write_text("hosts: [KG.example.com]\n")
    config = load_serve_config(tmp_path / "serve.yaml")
    with TestClient(create_app(store / "store", load_schema(), config, watch=False,
                               bind="0.0.0.0"), base_url="http://kg.example.com") as client:
        assert client.get("/health").status_code == 200
        assert client.get("/health", headers={"host": "localhost"}).status_code == 421
    for bad in ("hosts: 3\n", "hosts: ['kg.example.com:8080']\n", "hosts: ['http://x']\n"):
        (tmp_path / "serve.yaml").write_text(bad)
        with pytest.raises(KgbuildError, match="'hosts' must be a list of host names"):
            load_serve_config(tmp_path / "serve.yaml")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999", "-5", "1.5",
                                   "1" + "0" * 400])
def test_semantic_min_out_of_range_is_refused(store, value):
    with TestClient(create_app(store / "store", load_schema(), watch=False)) as client:
        r = client.post("/traverse", content=f'{{"seeds": ["api:default/payments-api"], '
                        f'"semantic_min": {value}}}', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] in ("bad-json", "error"), r.text


def test_every_numeric_spec_field_is_range_checked_in_one_place(schema):
    assert {"hops", "cap", "semantic", "semantic_min", "min_confidence"} <= set(BOUNDS)
    described = openapi()["components"]["schemas"]["TraversalSpec"]["properties"]
    for name, (low, high) in BOUNDS.items():
        assert (described[name]["minimum"], described[name]["maximum"]) == (low, high)
        for bad in (low - 1, high + 1, 10**400, float("nan"), float("inf"), -float("inf")):
            if isinstance(low, int) and isinstance(bad, float):
                continue  # (an integer field refuses a float by its type)
            with pytest.raises((KgbuildError, ApiError), match=name):
                parse_spec({"seeds": ["x"], name: bad}, schema, semantic=True)
        parse_spec({"seeds": ["x"], name: high}, schema, semantic=True)
