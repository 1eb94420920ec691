"""An OpenAI-compatible Files and Batch API on 127.0.0.1, for the batch extraction tests.

``POST /v1/files`` (multipart, as the ``openai`` client uploads), ``GET /v1/files/{id}/content``,
``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``POST /v1/batches/{id}/cancel``. A batch
waits (``in_progress``) until the test calls :meth:`BatchServer.finish`, which answers its
lines with ``answer(body) -> content`` (a chat completion each) and ends it in a status.
"""

from __future__ import annotations

import json
import re
import threading
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class BatchServer:
    """``with BatchServer(answer) as srv: ... srv.base_url ... srv.finish(...)``."""

    def __init__(self, answer: Callable[[dict], str]):
        self.answer = answer
        self.files: dict[str, tuple[str, bytes]] = {}  # id -> purpose, content
        self.batches: dict[str, dict] = {}
        self.seen: list[str] = []  # "METHOD path" of every request
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                server._route(self, "GET")

            def do_POST(self):
                server._route(self, "POST")

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "BatchServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- what the test drives ---------------------------------------------------------------------
    def lines(self, batch_id: str) -> list[dict]:
        """The request lines of a batch's input file."""
        _, data = self.files[self.batches[batch_id]["input_file_id"]]
        return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]

    def finish(self, batch_id: str, status: str = "completed",
               answered: Callable[[int], bool] = lambda i: True, refused: str = "") -> None:
        """End a batch in ``status``: the lines ``answered(i)`` picks get a chat completion
        in the output file, the others an error line in the error file; ``refused``: the
        batch fails validation with this message, nothing answered."""
        if refused:
            self.batches[batch_id].update(status="failed", errors={"object": "list", "data": [
                {"code": "invalid_request", "message": refused, "line": 1}]})
            return
        out, errors = [], []
        for i, line in enumerate(self.lines(batch_id)):
            if answered(i):
                content = self.answer(line["body"])
                out.append({"id": f"req-{i}", "custom_id": line["custom_id"], "error": None,
                            "response": {"status_code": 200, "request_id": f"r{i}", "body": {
                                "id": f"chatcmpl-{i}", "object": "chat.completion", "created": 0,
                                "model": line["body"]["model"],
                                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                    "role": "assistant", "content": content}}],
                                "usage": {"prompt_tokens": 100, "completion_tokens": 10,
                                          "total_tokens": 110}}}})
            else:
                errors.append({"id": f"req-{i}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "batch_expired",
                                         "message": "This request could not be executed "
                                                    "before the completion window expired."}})
        b = self.batches[batch_id]
        with self.lock:
            if out:
                b["output_file_id"] = self._add_file("batch_output", _jsonl(out))
            if errors:
                b["error_file_id"] = self._add_file("batch_output", _jsonl(errors))
            b["status"] = status
            b["request_counts"] = {"total": len(out) + len(errors), "completed": len(out),
                                   "failed": len(errors)}

    # -- the endpoints ----------------------------------------------------------------------------
    def _add_file(self, purpose: str, data: bytes) -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = (purpose, data)
        return file_id

    def _route(self, h: BaseHTTPRequestHandler, method: str) -> None:
        raw = h.rfile.read(int(h.headers.get("content-length") or 0))
        path = h.path.split("?")[0]
        with self.lock:
            self.seen.append(f"{method} {path}")
        if method == "POST" and path == "/v1/files":
            fields = _multipart(h.headers.get("content-type", ""), raw)
            with self.lock:
                file_id = self._add_file(fields["purpose"].decode(), fields["file"])
            return _send(h, 200, {"id": file_id, "object": "file", "bytes": len(fields["file"]),
                                  "created_at": 0, "filename": "input.jsonl",
                                  "purpose": fields["purpose"].decode(), "status": "processed"})
        m = re.fullmatch(r"/v1/files/([\w-]+)/content", path)
        if method == "GET" and m:
            if m.group(1) not in self.files:
                return _send(h, 404, {"error": {"message": "no such file"}})
            data = self.files[m.group(1)][1]
            h.send_response(200)
            h.send_header("content-type", "application/octet-stream")
            h.send_header("content-length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
            return None
        if method == "POST" and path == "/v1/batches":
            body = json.loads(raw)
            if body.get("input_file_id") not in self.files:
                return _send(h, 400, {"error": {"message": "input_file_id not found"}})
            with self.lock:
                batch_id = f"batch_{len(self.batches) + 1}"
                self.batches[batch_id] = {
                    "id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                    "input_file_id": body["input_file_id"],
                    "completion_window": body["completion_window"], "status": "in_progress",
                    "created_at": 0, "metadata": body.get("metadata")}
            return _send(h, 200, self.batches[batch_id])
        m = re.fullmatch(r"/v1/batches/([\w-]+)(/cancel)?", path)
        if m and m.group(1) in self.batches:
            if m.group(2):
                self.batches[m.group(1)]["status"] = "cancelling"
            return _send(h, 200, self.batches[m.group(1)])
        return _send(h, 404, {"error": {"message": f"no route {method} {path}"}})


def _send(h: BaseHTTPRequestHandler, status: int, data: dict) -> None:
    raw = json.dumps(data).encode()
    h.send_response(status)
    h.send_header("content-type", "application/json")
    h.send_header("content-length", str(len(raw)))
    h.end_headers()
    h.wfile.write(raw)


def _jsonl(items: list[dict]) -> bytes:
    return "".join(json.dumps(x) + "\n" for x in items).encode()


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    msg = BytesParser(policy=email_policy).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    return {part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
            for part in msg.iter_parts()}
