"""kgbuild.io.http: every request ends within its deadline and reads at most its cap, against
hostile loopback servers (a one-byte-a-second drip, gzip bombs, huge answers)."""

from __future__ import annotations

import asyncio
import gzip
import re
import time
import zlib

import httpx2
import pytest
from loopback_http import Loopback, answer, drip, gzip_bomb

from kgbuild.io.http import AsyncClient, Bounds, Client, ResponseTooLarge

TIMEOUT = 2.0  # the drip sends a byte a second: a per-read timeout of 2 s never fires


def bound(timeout: float = TIMEOUT) -> float:
    return timeout * 3 + 2  # a bound, not a benchmark


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_slow_drip_ends_at_the_deadline(phase):
    with Loopback(drip(phase)) as srv, Client(Bounds(TIMEOUT, 1 << 20)) as client:
        start = time.monotonic()
        with pytest.raises(httpx2.TimeoutException):
            client.post(srv.url, content=b"{}")
        assert time.monotonic() - start < bound()


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_slow_drip_ends_at_the_deadline_async(phase):
    async def ask(url):
        async with AsyncClient(Bounds(TIMEOUT, 1 << 20)) as client:
            await client.post(url, content=b"{}")

    with Loopback(drip(phase)) as srv:
        start = time.monotonic()
        with pytest.raises(httpx2.TimeoutException):
            asyncio.run(ask(srv.url))
        assert time.monotonic() - start < bound()


@pytest.mark.slow
def test_each_request_has_its_own_deadline():
    with Loopback(answer(200, b"ok")) as srv, Client(Bounds(1.0, 1 << 20)) as client:
        for _ in range(3):
            assert client.get(srv.url).content == b"ok"
            time.sleep(0.5)  # 1.5 s after the first request began: a later one is not late


@pytest.mark.parametrize("body, headers, how", [
    (gzip_bomb(8 << 20), {"Content-Encoding": "gzip"}, "once decompressed"),
    (b" " * (3 << 20), {}, "larger than 1 MiB (the limit)"),
    # a small gzip answer followed by junk: decoded it is tiny, received it is not
    (gzip.compress(b"{}") + b"\0" * (3 << 20), {"Content-Encoding": "gzip"},
     "larger than 1 MiB (the limit)"),
], ids=["gzip-bomb", "plain", "gzip-then-junk"])
def test_an_answer_over_the_cap_is_refused(body, headers, how):
    with Loopback(answer(200, body, headers)) as srv, Client(Bounds(10, 1 << 20)) as client, \
            pytest.raises(ResponseTooLarge, match=re.escape(how)) as err:
        client.get(srv.url)
    assert err.value.code == "too-large" and srv.url in str(err.value)


def test_a_gigabyte_bomb_under_a_32_mib_cap_costs_little_memory():
    import resource

    bomb = gzip_bomb(1 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with Loopback(answer(200, bomb, {"Content-Encoding": "gzip"})) as srv, \
            Client(Bounds(30, 32 << 20)) as client:
        start = time.monotonic()
        with pytest.raises(ResponseTooLarge):
            client.get(srv.url)
        assert time.monotonic() - start < 10
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB on Linux
    assert grown < 200 << 10


@pytest.mark.parametrize("coding, encode", [
    ("gzip", gzip.compress),
    ("deflate", zlib.compress),
    ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send
])
def test_compressed_answers_are_decoded(coding, encode):
    data = b'{"results": "' + b"abc" * 100_000 + b'"}'
    with Loopback(answer(200, encode(data), {"Content-Encoding": coding})) as srv, \
            Client(Bounds(10, 1 << 20)) as client:
        response = client.get(srv.url)
    assert response.content == data and "content-encoding" not in response.headers
    assert srv.seen[0]["headers"]["accept-encoding"] == "gzip, deflate"


def test_a_coding_not_asked_for_is_an_error():
    with Loopback(answer(200, b"xx", {"Content-Encoding": "br"})) as srv, \
            Client(Bounds(10, 1 << 20)) as client, pytest.raises(httpx2.DecodingError, match="br"):
        client.get(srv.url)
