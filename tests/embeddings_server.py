"""Minimal JSON servers on 127.0.0.1 for tests: :class:`JsonServer` answers each ``POST`` from
a function of its path and body; :class:`EmbeddingsServer` is an OpenAI-compatible
``POST /v1/embeddings`` whose vectors come from the test's own ``vector`` function (every
text sent is recorded)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class JsonServer:
    """Serves until :meth:`close` (or the end of a ``with`` block): each ``POST`` is answered
    with the JSON of ``answer(path, body)`` -> ``(status, payload)``; ``url`` is the base URL
    (``.../v1``)."""

    def __init__(self, answer: Callable[[str, dict], tuple[int, object]]):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, payload = answer(self.path, body)
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class EmbeddingsServer(JsonServer):
    """``inputs``: every text received, in order. Paths other than ``/embeddings`` answer 404."""

    def __init__(self, vector: Callable[[str], list[float]]):
        self.inputs: list[str] = []

        def answer(path: str, body: dict) -> tuple[int, object]:
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            self.inputs.extend(texts)
            return (200 if path.endswith("/embeddings") else 404,
                    {"object": "list", "model": body["model"],
                     "usage": {"prompt_tokens": 0, "total_tokens": 0},
                     "data": [{"object": "embedding", "index": i, "embedding": vector(t)}
                              for i, t in enumerate(texts)]})

        super().__init__(answer)
