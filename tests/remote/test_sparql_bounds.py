"""The SPARQL client is bounded: each attempt ends at its deadline whatever the server sends
(a one-byte-a-second drip), an answer over the cap, received or decompressed, is one
``remote-too-large`` error; ``push``/``pull`` take both bounds as flags."""

from __future__ import annotations

import time

import pytest
from loopback_http import Loopback, answer, drip, gzip_bomb
from servers import build_store, run

from kgbuild.remote.sparql import RemoteError, SparqlClient

TIMEOUT = 2.0  # the drip sends a byte a second: a per-read timeout of 2 s never fires
EMPTY = b'{"head": {"vars": []}, "results": {"bindings": []}}'


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_query_ends_at_its_deadline(phase):
    with Loopback(drip(phase)) as srv, SparqlClient(srv.url + "/query", timeout=TIMEOUT,
                                                    retries=0) as client:
        start = time.monotonic()
        with pytest.raises(RemoteError, match=f"no complete answer .* within {TIMEOUT:g} s"):
            client.select("SELECT * WHERE { ?s ?p ?o }")
        assert time.monotonic() - start < TIMEOUT * 3 + 2


@pytest.mark.slow
def test_each_retry_has_its_own_deadline():
    with Loopback(drip()) as srv, SparqlClient(srv.url + "/query", timeout=TIMEOUT, retries=1,
                                               backoff=0.01) as client:
        start = time.monotonic()
        with pytest.raises(RemoteError, match="after 2 attempts"):
            client.select("SELECT * WHERE { ?s ?p ?o }")
        assert time.monotonic() - start < 2 * (TIMEOUT * 3 + 2)
    assert len(srv.seen) == 2


@pytest.mark.slow
def test_push_with_a_timeout_ends_in_about_that_time(tmp_path):
    store = build_store(tmp_path)
    with Loopback(drip()) as srv:
        start = time.monotonic()
        r = run("push", "--endpoint", srv.url + "/query", "--store", store, "--timeout",
                TIMEOUT, "--retries", 0)
        took = time.monotonic() - start
    assert r.exit_code == 2 and f"within {TIMEOUT:g} s" in r.output and "[remote]" in r.output
    assert took < TIMEOUT * 3 + 2


@pytest.mark.parametrize("body, headers, how", [
    (gzip_bomb(64 << 20), {"Content-Encoding": "gzip"}, "more than 1 MiB"),
    (EMPTY + b" " * (2 << 20), {}, "more than 1 MiB"),
], ids=["gzip-bomb", "plain"])
def test_an_answer_over_the_cap_is_one_error(body, headers, how):
    with Loopback(answer(200, body, headers)) as srv, \
            SparqlClient(srv.url + "/query", max_response_bytes=1 << 20) as client, \
            pytest.raises(RemoteError, match=how) as err:
        client.select("SELECT * WHERE { ?s ?p ?o }")
    assert err.value.code == "remote-too-large" and len(srv.seen) == 1  # never retried


def test_pull_max_response_size_flag(tmp_path):
    big = (b'{"head": {"vars": ["g"]}, "results": {"bindings": [' + b" " * (2 << 20) + b"]}}")
    with Loopback(answer(200, big)) as srv:
        r = run("pull", "--endpoint", srv.url + "/query", "-o", tmp_path / "out.nq",
                "--max-response-size", 1)
        assert r.exit_code == 2 and "[remote-too-large]" in r.output, r.output
        r = run("pull", "--endpoint", srv.url + "/query", "-o", tmp_path / "out.nq",
                "--max-response-size", 3)
        assert r.exit_code == 0, r.output
