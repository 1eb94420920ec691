"""A small OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks.

It answers ``POST /v1/chat/completions`` with scripted replies and records what it saw: every
request body, how many were in flight at once (the maximum too). A *responder* decides each
reply from the request body; :class:`Script` is the usual one (replies chosen by a substring of
the user messages, consumed in order, the last one repeating).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Reply:
    """One scripted answer: ``content`` (the assistant message) with HTTP 200, or an error
    ``status`` with ``error`` text; ``delay`` seconds before answering; extra ``headers``."""

    content: str | None = None
    status: int = 200
    error: str = ""
    delay: float = 0.0
    headers: dict = field(default_factory=dict)

    @classmethod
    def relations(cls, *relations: dict, **kwargs) -> "Reply":
        return cls(json.dumps({"relations": list(relations)}), **kwargs)


def rel(subject, predicate, obj, evidence, subject_type=None, object_type=None) -> dict:
    return {"subject": subject, "subject_type": subject_type, "predicate": predicate,
            "object": obj, "object_type": object_type, "evidence": evidence}


def last_user(body: dict) -> str:
    users = [m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user"]
    return users[-1] if users else ""


def prompt_text(body: dict) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []))


class Script:
    """Replies by a substring of the user messages (first matching rule wins; a repair or a
    gleaning request repeats the conversation, so it matches the same rule as the request
    before it); each rule's replies are consumed in order and its last one repeats.
    ``default`` answers the rest."""

    def __init__(self, rules: list[tuple[str, list[Reply]]] | None = None,
                 default: Reply | None = None):
        self.rules = [(needle, list(replies)) for needle, replies in (rules or [])]
        self.default = default or Reply.relations()
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", [])
                         if m.get("role") == "user")
        with self._lock:
            for needle, replies in self.rules:
                if needle in text:
                    return replies.pop(0) if len(replies) > 1 else replies[0]
        return self.default


class FakeLLM:
    """The server: ``with FakeLLM(responder) as llm: ... llm.base_url ... llm.count``."""

    def __init__(self, responder: Callable[[dict], Reply] | None = None):
        self.responder = responder or Script()
        self.bodies: list[dict] = []
        self.inflight = 0
        self.max_inflight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as real servers do: no 40 ms delayed-ACK stalls

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                with server._lock:
                    server.bodies.append(body)
                    server.inflight += 1
                    server.max_inflight = max(server.max_inflight, server.inflight)
                try:
                    reply = server.responder(body)
                    if reply.delay:
                        time.sleep(reply.delay)
                    self._answer(body, reply)
                finally:
                    with server._lock:
                        server.inflight -= 1

            def _answer(self, body: dict, reply: Reply) -> None:
                if reply.status != 200:
                    payload = {"error": {"message": reply.error or f"status {reply.status}",
                                         "type": "server_error", "code": reply.status}}
                else:
                    content = reply.content or ""
                    prompt = prompt_text(body)
                    payload = {
                        "id": f"chatcmpl-{len(server.bodies)}", "object": "chat.completion",
                        "created": 0, "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": len(prompt) // 4,
                                  "completion_tokens": len(content) // 4,
                                  "total_tokens": len(prompt) // 4 + len(content) // 4}}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, str(v))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def count(self) -> int:
        return len(self.bodies)

    def formats(self) -> list[str]:
        """The response_format type of every request seen (``json_object+schema`` when a
        schema rode along with JSON mode)."""
        out = []
        for b in self.bodies:
            rf = b.get("response_format") or {}
            out.append(rf.get("type", "none") + ("+schema" if "schema" in rf else ""))
        return out

    def __enter__(self) -> "FakeLLM":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
