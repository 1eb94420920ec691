"""The HTTP server around the app: uvicorn on its httptools protocol, with the bounds uvicorn
lacks. uvicorn times out only an idle kept-alive connection; a client that opens a connection
and sends its header (or body) a byte at a time holds it forever. Here each request's header
must be complete within ``limits.header_timeout`` of the connection's opening (or of the
request's first byte on a kept-alive connection), its body within ``limits.body_timeout`` of
the header (the app answers 408 at that time; the connection is closed a second later if the
body is still coming), a header larger than :data:`MAX_HEADER_BYTES` is answered 431 and
closed (httptools sets no bound: within the deadline a client could send any amount), and a
connection beyond ``limits.max_connections`` open at once is answered 503 and closed as it is
accepted. A refused connection is closed in stages: answered, half-closed, and what the client
still sends is dropped for :data:`LINGER` seconds, so the client reads the answer instead of a
reset.
"""

from __future__ import annotations

import asyncio
import json

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .config import Limits

BODY_GRACE = 1.0  # seconds after the app's own 408 before a still-incoming body's connection closes
MAX_HEADER_BYTES = 64 << 10  # a request line and headers, as received (nginx allows 4 x 8 KiB)
LINGER = 2.0  # seconds a refused connection's further bytes are read and dropped before it closes


def _answer(status: int, reason: str, message: str, code: str) -> bytes:
    body = json.dumps({"code": code, "error": message}, sort_keys=True).encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


def guarded_protocol(limits: Limits) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with header and body deadlines and a connection cap."""

    class Guarded(HttpToolsProtocol):
        _timer: asyncio.TimerHandle | None = None
        _header_bytes: int | None = 0  # received of the current header; None: header complete
        _refused = False  # answered and half-closed: what the client still sends is dropped

        def _arm(self, seconds: float, expired) -> None:
            self._disarm()
            self._timer = asyncio.get_running_loop().call_later(seconds, expired)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _idle(self) -> bool:  # no request being answered on this connection
            return self.cycle is None or self.cycle.response_complete

        def _refuse(self, answer: bytes) -> None:
            """Answer and close in stages: closing a socket with unread bytes in it resets the
            connection, and the client may lose the answer it has not read yet (RFC 9112 9.6)."""
            if self.transport.is_closing() or self._refused:
                return
            if not self._idle() or not self.transport.can_write_eof():
                self.transport.close()
                return
            self._refused = True
            self.transport.write(answer)
            self.transport.write_eof()
            self._arm(LINGER, self.transport.close)

        def _header_expired(self) -> None:
            self._timer = None
            self._refuse(_answer(408, "Request Timeout", f"the request header was not received "
                                 f"within {limits.header_timeout:g} s", "header-timeout"))

        def _body_expired(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                self._refuse(_answer(503, "Service Unavailable", f"too many connections (at most "
                                     f"{limits.max_connections}); try again", "busy"))
            else:
                self._arm(limits.header_timeout, self._header_expired)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._timer is None:  # (a kept-alive connection's next request)
                self._arm(limits.header_timeout, self._header_expired)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._header_bytes is not None:
                self._header_bytes += len(data)
            super().data_received(data)
            if self._header_bytes is not None and self._header_bytes > MAX_HEADER_BYTES:
                self._refuse(_answer(431, "Request Header Fields Too Large", f"the request "
                                     f"header is over {MAX_HEADER_BYTES:,} bytes",
                                     "header-too-large"))

        def on_headers_complete(self) -> None:
            self._header_bytes = None
            self._arm(limits.body_timeout + BODY_GRACE, self._body_expired)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()
            self._header_bytes = 0
            super().on_message_complete()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Guarded


def server_config(app, limits: Limits, host: str, port: int, **options) -> uvicorn.Config:
    """uvicorn's settings for ``kgbuild serve``: the guarded protocol and ``limits``' keep-alive."""
    return uvicorn.Config(app, host=host, port=port, http=guarded_protocol(limits),
                          timeout_keep_alive=limits.keep_alive, log_level="warning",
                          access_log=False, timeout_graceful_shutdown=5, **options)
