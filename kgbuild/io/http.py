"""HTTP clients whose every request is bounded in time and in size (LLM, embeddings, SPARQL).

httpx bounds each socket operation, not a request: a server sending one byte a second keeps
a request alive for ever, and an answer is read whole however large (a 3 MB gzip answer
inflates to 3 GB). :class:`Client` and :class:`AsyncClient` are ``httpx2`` clients (the
``openai`` client takes one as ``http_client``) adding two bounds to every request:

* **a deadline**: ``timeout`` seconds for the whole request (connection, request, headers,
  body), counted from when the transport is handed it; every socket operation waits at most
  what is left, and one past the deadline raises the ``httpx2`` timeout it would have
  (``ConnectTimeout``, ``ReadTimeout``, ...), which callers already handle. A redirect or an
  auth round trip shares its request's deadline; a caller's retry is a new request with its
  own.
* **a size cap**: at most ``max_bytes`` of body are received, and at most ``max_bytes``
  decoded: only gzip and deflate are asked for, decoded here in pieces of at most
  :data:`PIECE` bytes; beyond the cap :class:`ResponseTooLarge`, as soon as it is passed.
"""

from __future__ import annotations

import time
import zlib
from contextvars import ContextVar
from dataclasses import dataclass

import httpcore2
import httpx2

from ..errors import KgbuildError
from .urls import redact_url

PIECE = 1 << 20  # most bytes one decoding step produces
_DEADLINE: ContextVar[float | None] = ContextVar("kgbuild_http_deadline", default=None)
_KEY = "kgbuild.deadline"  # in a request's extensions (copied onto its redirects)
# a request's own deadline, earlier than its client's bound (``time.monotonic()`` seconds):
# ``client.get(url, extensions={DEADLINE: deadline})``, e.g. the rest of a paged listing's
DEADLINE = _KEY


class ResponseTooLarge(KgbuildError):
    """An answer's body is larger than the cap (received or decoded)."""

    code = "too-large"


@dataclass(frozen=True)
class Bounds:
    """``timeout``: seconds for a whole request; ``max_bytes``: of one answer's body, received
    and decoded each."""

    timeout: float
    max_bytes: int


def mib(n: int) -> str:
    """A byte count for people: ``32 MiB`` (or bytes below one MiB)."""
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n} bytes"


def _left(timeout: float | None, exc: type[Exception]) -> float | None:
    """``timeout`` shortened to what is left before the current request's deadline."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise exc("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore2.NetworkStream):
    def __init__(self, inner):
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for i in range(0, len(buffer), 1 << 16):  # a slow reader cannot stretch one big write
            self.inner.write(buffer[i:i + (1 << 16)], _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return _Stream(self.inner.start_tls(ssl_context, server_hostname,
                                            _left(timeout, httpcore2.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self.inner.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    def __init__(self, inner):
        self.inner = inner

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _Stream(self.inner.connect_tcp(host, port, _left(timeout, httpcore2.ConnectTimeout),
                                              local_address, socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _Stream(self.inner.connect_unix_socket(
            path, _left(timeout, httpcore2.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class _AsyncStream(httpcore2.AsyncNetworkStream):
    def __init__(self, inner):
        self.inner = inner

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self.inner.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for i in range(0, len(buffer), 1 << 16):
            await self.inner.write(buffer[i:i + (1 << 16)], _left(timeout, httpcore2.WriteTimeout))

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return _AsyncStream(await self.inner.start_tls(
            ssl_context, server_hostname, _left(timeout, httpcore2.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self.inner.get_extra_info(info)


class _AsyncBackend(httpcore2.AsyncNetworkBackend):
    def __init__(self, inner):
        self.inner = inner

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _AsyncStream(await self.inner.connect_tcp(
            host, port, _left(timeout, httpcore2.ConnectTimeout), local_address, socket_options))

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _AsyncStream(await self.inner.connect_unix_socket(
            path, _left(timeout, httpcore2.ConnectTimeout), socket_options))

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def _clamp(transport, backend: type) -> None:
    """Make ``transport``'s connections wait on sockets at most until the deadline (httpx2
    builds its connection pool without a way to pass a network backend)."""
    pool = getattr(transport, "_pool", None)
    if pool is not None and hasattr(pool, "_network_backend"):
        pool._network_backend = backend(pool._network_backend)


class _Inflate:
    """One content coding undone in pieces of at most :data:`PIECE` bytes."""

    def __init__(self, coding: str):
        self.coding = coding
        self.z = zlib.decompressobj(zlib.MAX_WBITS | 16 if coding in ("gzip", "x-gzip")
                                    else zlib.MAX_WBITS)
        self.first = True

    def decode(self, data: bytes):
        try:
            piece = self.z.decompress(data, PIECE)
        except zlib.error as exc:
            if not (self.first and self.coding == "deflate"):
                raise httpx2.DecodingError(f"bad {self.coding} data: {exc}") from None
            self.z = zlib.decompressobj(-zlib.MAX_WBITS)  # deflate without its zlib header
            piece = self.z.decompress(data, PIECE)
        self.first = False
        while piece:
            yield piece
            piece = self.z.decompress(self.z.unconsumed_tail, PIECE)

    def flush(self) -> bytes:
        return self.z.flush()


class _Body:
    """A response body: raw chunks read before the deadline, counted, decoded, counted."""

    def __init__(self, inner, request: httpx2.Request, deadline: float, cap: int,
                 coding: str | None):
        self.inner, self.deadline, self.cap = inner, deadline, cap
        self.url = redact_url(str(request.url))
        self.decoder = _Inflate(coding) if coding else None
        self.received = self.decoded = 0

    def _feed(self, raw: bytes | None):
        """What ``raw`` (None: the end) decodes to; both counted against the cap."""
        if raw is not None:
            self.received += len(raw)
            if self.received > self.cap:
                self._too_large("")
            if self.decoder is None:
                yield raw
        if self.decoder is None:
            return
        for piece in self.decoder.decode(raw) if raw is not None else [self.decoder.flush()]:
            self.decoded += len(piece)
            if self.decoded > self.cap:
                self._too_large(" once decompressed")
            yield piece

    def _too_large(self, how: str):
        raise ResponseTooLarge(f"the answer of {self.url} is larger than {mib(self.cap)}{how} "
                               f"(the limit)")


class _SyncBody(_Body, httpx2.SyncByteStream):
    def __iter__(self):
        chunks = iter(self.inner)
        while True:
            token = _DEADLINE.set(self.deadline)
            try:
                raw = next(chunks, None)
            finally:
                _DEADLINE.reset(token)
            yield from self._feed(raw)
            if raw is None:
                break

    def close(self) -> None:
        self.inner.close()


class _AsyncBody(_Body, httpx2.AsyncByteStream):
    async def __aiter__(self):
        chunks = self.inner.__aiter__()
        while True:
            token = _DEADLINE.set(self.deadline)
            try:
                raw = await chunks.__anext__()
            except StopAsyncIteration:
                break
            finally:
                _DEADLINE.reset(token)
            for piece in self._feed(raw):
                yield piece
        for piece in self._feed(None):
            yield piece

    async def aclose(self) -> None:
        await self.inner.aclose()


def _start(request: httpx2.Request, bounds: Bounds) -> float:
    """The request's deadline (set when its first hop starts); its waits shortened to it."""
    deadline = request.extensions.setdefault(_KEY, time.monotonic() + bounds.timeout)
    left = max(deadline - time.monotonic(), 0.001)
    request.extensions["timeout"] = {k: left if v is None else min(v, left)
                                     for k, v in request.extensions.get("timeout", {}).items()}
    request.headers["Accept-Encoding"] = "gzip, deflate"
    return deadline


def _answer(response: httpx2.Response, request, deadline, bounds, body: type) -> httpx2.Response:
    """``response`` with a bounded body, decoded here (so its headers say identity)."""
    codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
        raise httpx2.DecodingError(f"{redact_url(str(request.url))} answered in a content "
                                   f"coding not asked for: {', '.join(codings)}")
    headers = response.headers.copy()
    if codings:
        for name in ("content-encoding", "content-length"):
            headers.pop(name, None)
    return httpx2.Response(response.status_code, headers=headers,
                           stream=body(response.stream, request, deadline, bounds.max_bytes,
                                       codings[0] if codings else None),
                           extensions=response.extensions)


class _Transport(httpx2.BaseTransport):
    def __init__(self, inner: httpx2.BaseTransport, bounds: Bounds):
        self.inner, self.bounds = inner, bounds
        _clamp(inner, _Backend)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = _start(request, self.bounds)
        token = _DEADLINE.set(deadline)
        try:
            response = self.inner.handle_request(request)
        finally:
            _DEADLINE.reset(token)
        try:
            return _answer(response, request, deadline, self.bounds, _SyncBody)
        except BaseException:
            response.close()
            raise

    def close(self) -> None:
        self.inner.close()


class _AsyncTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, bounds: Bounds):
        self.inner, self.bounds = inner, bounds
        _clamp(inner, _AsyncBackend)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = _start(request, self.bounds)
        token = _DEADLINE.set(deadline)
        try:
            response = await self.inner.handle_async_request(request)
        finally:
            _DEADLINE.reset(token)
        try:
            return _answer(response, request, deadline, self.bounds, _AsyncBody)
        except BaseException:
            await response.aclose()
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()


class Client(httpx2.Client):
    """An ``httpx2.Client`` whose requests are bounded by ``bounds`` (see the module doc);
    other arguments are ``httpx2.Client``'s (``timeout`` defaults to ``bounds.timeout`` and
    stays the bound of each socket operation)."""

    def __init__(self, bounds: Bounds, **kwargs):
        self.bounds = bounds
        kwargs.setdefault("timeout", bounds.timeout)
        super().__init__(**kwargs)

    def _init_transport(self, *args, **kwargs):
        return _Transport(super()._init_transport(*args, **kwargs), self.bounds)

    def _init_proxy_transport(self, *args, **kwargs):
        return _Transport(super()._init_proxy_transport(*args, **kwargs), self.bounds)


class AsyncClient(httpx2.AsyncClient):
    """The asynchronous :class:`Client`."""

    def __init__(self, bounds: Bounds, **kwargs):
        self.bounds = bounds
        kwargs.setdefault("timeout", bounds.timeout)
        super().__init__(**kwargs)

    def _init_transport(self, *args, **kwargs):
        return _AsyncTransport(super()._init_transport(*args, **kwargs), self.bounds)

    def _init_proxy_transport(self, *args, **kwargs):
        return _AsyncTransport(super()._init_proxy_transport(*args, **kwargs), self.bounds)
