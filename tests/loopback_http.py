"""Hostile HTTP servers on 127.0.0.1 for the bound tests: a raw socket per connection, so a
test controls every byte (a slow drip, a gzip bomb, a huge answer).

``with Loopback(handler) as srv: ... srv.url ... srv.seen`` runs ``handler(conn, head)`` on
its own thread for each request (``head``: the request line and headers, lower-cased names,
also recorded in ``seen``). Handlers: :func:`drip`, :func:`answer`, :func:`chat`."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
import zlib


class Loopback:
    def __init__(self, handler):
        self.handler = handler
        self.seen: list[dict] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                head = _read_request(conn)
                if head is not None:
                    self.seen.append(head)
                    self.handler(conn, head)
            except OSError:  # the client gave up: what these servers are for
                pass

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Loopback:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _read_request(conn: socket.socket) -> dict | None:
    data = b""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            return None
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    first, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    while len(body) < int(headers.get("content-length", 0)):
        body += conn.recv(65536)
    return {"line": first, "headers": headers, "body": body}


def response(status: int = 200, body: bytes = b"", headers: dict | None = None) -> bytes:
    head = {"Content-Type": "application/json", "Content-Length": str(len(body)),
            "Connection": "close", **(headers or {})}
    return (f"HTTP/1.1 {status} X\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items())
            + "\r\n").encode() + body


def drip(phase: str = "headers", every: float = 1.0, count: int = 40):
    """A handler sending one byte each ``every`` seconds (``count`` of them, then closing):
    from the status line on (``headers``), or after whole headers announcing a long body
    (``body``)."""
    def handler(conn, head):
        if phase == "body":
            conn.sendall(response(200, b"", {"Content-Length": "100000"}))
        for byte in response(200, b" " * count)[:count] if phase == "headers" else b" " * count:
            conn.sendall(bytes([byte]))
            time.sleep(every)
    return handler


def answer(status: int = 200, body: bytes = b"", headers: dict | None = None):
    """A handler answering every request alike."""
    def handler(conn, head):
        conn.sendall(response(status, body, headers))
    return handler


def completion(content: str = '{"relations": []}') -> bytes:
    """The JSON of an OpenAI chat completion answering ``content``."""
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                 "total_tokens": 2}}).encode()


def chat(content: str = '{"relations": []}'):
    """A handler answering every request with one chat completion."""
    return answer(200, completion(content))


def gzip_bomb(size: int) -> bytes:
    """A valid gzip stream of ``size`` zero bytes (a multiple of 1 MiB; about size/1000 bytes),
    one compressed MiB repeated: a full flush makes each copy stand alone."""
    mib = bytes(1 << 20)
    z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = z.compress(mib) + z.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(size >> 20):
        crc = zlib.crc32(mib, crc)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + block * (size >> 20) + z.flush()
            + struct.pack("<II", crc, size & 0xFFFFFFFF))
