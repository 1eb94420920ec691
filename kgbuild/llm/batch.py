"""Answers through an OpenAI-compatible Batch API (``/v1/files`` and ``/v1/batches``).

A :class:`BatchClient` stands in for the live :class:`~kgbuild.llm.client.LLMClient` and
sends nothing while it is asked: :meth:`~BatchClient.run` answers from the response cache and
records every request the cache cannot answer (:attr:`~BatchClient.wanted`). Then:

* :meth:`~BatchClient.poll` asks the server about every batch of this endpoint and model not
  yet folded and folds what it has: each answer of an output file is checked like a live
  answer and put in the cache under its request's key (a failed line is not: the next plan
  asks again). A batch that failed, expired or was cancelled is folded as far as its output
  goes, one the server no longer knows (HTTP 404) is dropped; folding again is a no-op.
* :meth:`~BatchClient.plan` turns the wanted requests not already in a pending batch into
  JSON lines, each body :func:`~kgbuild.llm.client.chat_body` (what the live client sends),
  with estimated prompt tokens and cost (characters / 4; the settings' price);
* :meth:`~BatchClient.submit` uploads them (``files.create``, purpose ``batch``) and creates
  the batches (``batches.create``, 24 h window), at most 50,000 lines or 190 MiB each.

Batches are remembered in ``batches.json`` in the cache folder (written atomically after each
change). There is no mode probe: a batch uses the mode the endpoint confirmed before, else
the configured one (``json_schema`` for ``auto``), and an answer in it confirms it (remembered
as a live probe's). An answer failing the check is kept as invalid (no repair round), as a
live answer whose repair failed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Sequence

from ..errors import KgbuildError
from ..io.atomic import atomic_write
from .client import Check, Completion, LLMClient, Request, chat_body, estimate_tokens
from .connect import openai_client, short
from .settings import LLMSettings

AWAITING = "awaiting a batch answer"
STATE_FILE = "batches.json"
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
ENDPOINT = "/v1/chat/completions"
MAX_LINES = 50_000  # per batch (OpenAI's limit)
MAX_INPUT_BYTES = 190 << 20  # per input file (OpenAI's limit is 200 MB)
MAX_FILE_BYTES = 1 << 30  # an output file read back


class BatchClient(LLMClient):
    """A client that answers from the cache only and plans, submits and folds batches for
    the rest (see the module docstring). ``cache_dir`` is required: it keeps the batches."""

    def __init__(self, settings: LLMSettings, cache_dir: str | Path):
        super().__init__(settings, cache_dir)
        self.state_file = Path(cache_dir) / STATE_FILE
        self.batches: list[dict] = _load(self.state_file)
        self.wanted: dict[str, tuple[Request, Check | None]] = {}  # cache key -> request, check
        self._api = None

    def run(self, requests: Sequence[Request], check: Check | None = None,
            progress=None) -> list[Completion]:
        """Cached answers; a request the cache cannot answer is recorded in :attr:`wanted`
        and answered with the error :data:`AWAITING`. Nothing is sent."""
        out = []
        for request in requests:
            found = self._cached(request)
            if found is None:
                key = self._keys(request)[0][1]
                self.wanted.setdefault(key, (request, check))
                found = Completion(None, self.mode, error=AWAITING)
            out.append(found)
        return out

    def pending_keys(self) -> set[str]:
        """Cache keys asked in batches of this endpoint and model that have not ended yet."""
        return {k for b in self._ours() if not b.get("done") for k in b["requests"].values()}

    def _ours(self) -> list[dict]:
        """The remembered batches of this endpoint and model (others are left alone)."""
        s = self.settings
        return [b for b in self.batches if b["endpoint"] == s.endpoint and b["model"] == s.model]

    # -- the server -------------------------------------------------------------------------------
    def _client(self):
        if self._api is None:
            s = self.settings
            self._api = openai_client(s.base_url, s.api_key, timeout=s.timeout,
                                      max_retries=s.max_retries,
                                      max_bytes=max(s.max_response_bytes, MAX_FILE_BYTES))
        return self._api

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None

    def _call(self, what: str, fn, *args, **kwargs):
        import openai

        try:
            return fn(*args, **kwargs)
        except openai.APIError as exc:
            raise self._failed_call(what, exc) from None

    def _failed_call(self, what: str, exc: Exception) -> KgbuildError:
        return KgbuildError(f"LLM endpoint {self.settings.endpoint}: {what}: "
                            f"{type(exc).__name__}: {short(exc, self._secrets)}",
                            code="llm-batch")

    def poll(self) -> list[dict]:
        """Every remembered batch not folded yet: its status asked, its output (and error)
        file folded once each; returns what each batch holds now."""
        import openai

        reports = []
        for b in self._ours():
            if b.get("done"):
                continue
            api = self._client()
            try:
                info = api.batches.retrieve(b["id"])
            except openai.NotFoundError:  # the server lost it: its requests are asked again
                b["status"], b["done"] = "missing", True
                _save(self.state_file, self.batches)
                reports.append(report(b))
                continue
            except openai.APIError as exc:
                raise self._failed_call(f"batch {b['id']}", exc) from None
            b["status"] = info.status
            errors = getattr(getattr(info, "errors", None), "data", None) or []
            if errors:  # why the server refused the whole batch (e.g. its input file)
                b["errors"] = [short(Exception(e.message or e.code), self._secrets)
                               for e in errors[:5]]
            counts = getattr(info, "request_counts", None)
            if counts is not None:
                b["counts"] = {"total": counts.total, "completed": counts.completed,
                               "failed": counts.failed}
            for file_id in (info.output_file_id, info.error_file_id):
                if file_id and file_id not in b["folded"]:
                    text = self._call(f"file {file_id}", api.files.content, file_id).text
                    self._fold(b, text)
                    b["folded"].append(file_id)
            b["done"] = info.status in TERMINAL
            _save(self.state_file, self.batches)
            reports.append(report(b))
        return reports

    def _fold(self, batch: dict, text: str) -> None:
        """Each line of an output or error file: an answer into the cache, or a failure."""
        keys, mode = batch["requests"], batch["mode"]
        for line in text.splitlines():
            try:
                item = json.loads(line)
                key = keys[item["custom_id"]]
            except (ValueError, KeyError, TypeError):
                continue  # not a line of ours
            response = item.get("response") or {}
            body = response.get("body") if isinstance(response, dict) else None
            if item.get("error") or response.get("status_code") != 200 \
                    or not isinstance(body, dict):
                batch["failed"][item["custom_id"]] = _why(item)
                continue
            batch["failed"].pop(item["custom_id"], None)
            if self.cache.get(key) is not None:
                continue  # folded before
            choices = body.get("choices") or [{}]
            message = (choices[0] or {}).get("message") or {}
            answer = message.get("content") or ""
            usage = _usage(body.get("usage"))
            wanted = self.wanted.get(key)
            check = wanted[1] if wanted else None
            problem = check(answer) if check else None
            self.cache.put(key, {"text": answer, "usage": usage, "repaired": False,
                                 "invalid": problem, "model": self.settings.model, "mode": mode,
                                 "batch": batch["id"]})
            self._fresh.add(key)  # (answered in this run: no cache hit)
            if not self.confirmed and mode == self.mode:  # the endpoint answers in this mode
                self.confirmed = True
                self.cache.remember_mode(self.settings.endpoint, self.settings.model, mode,
                                         self.usage.rejected_modes)
            self.usage.completions += 1
            self.usage.modes[mode] = self.usage.modes.get(mode, 0) + 1
            self.usage.add_tokens(usage)

    def plan(self) -> dict:
        """The wanted requests no pending batch asks already, as batch lines, with estimated
        prompt tokens and cost (``lines``: ``(custom_id, cache key, JSON line)``)."""
        pending = self.pending_keys()
        lines, tokens = [], 0
        for key, (request, _) in self.wanted.items():
            if key in pending:
                continue
            body = chat_body(self.settings, request, self.mode)
            tokens += sum(estimate_tokens(m["content"]) for m in body["messages"])
            custom_id = key[:40]
            lines.append((custom_id, key, json.dumps(
                {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body},
                ensure_ascii=False, separators=(",", ":"))))
        price = self.settings.price
        most = len(lines) * self.settings.max_tokens
        return {"requests": len(lines), "awaiting": len(self.wanted) - len(lines),
                "mode": self.mode, "estimated_prompt_tokens": tokens,
                "max_completion_tokens": most,
                "estimated_cost_usd": round(price.cost(tokens, 0), 6) if price else None,
                "max_cost_usd": round(price.cost(tokens, most), 6) if price else None,
                "lines": lines}

    def submit(self, plan: dict) -> list[dict]:
        """Upload the plan's lines and create its batches (remembered at once)."""
        made = []
        for part in _parts(plan["lines"]):
            api = self._client()
            data = "".join(line + "\n" for _, _, line in part).encode("utf-8")
            upload = self._call("upload", api.files.create,
                                file=("kgbuild-batch.jsonl", data, "application/jsonl"),
                                purpose="batch")
            info = self._call("create batch", api.batches.create, input_file_id=upload.id,
                              endpoint=ENDPOINT, completion_window="24h",
                              metadata={"made_by": "kgbuild extract"})
            b = {"id": info.id, "input_file_id": upload.id, "status": info.status,
                 "mode": plan["mode"], "model": self.settings.model,
                 "endpoint": self.settings.endpoint, "created": int(time.time()),
                 "requests": {cid: key for cid, key, _ in part}, "folded": [], "failed": {},
                 "done": False}
            self.batches.append(b)
            _save(self.state_file, self.batches)
            made.append(report(b))
        return made


def report(batch: dict) -> dict:
    """What one remembered batch is at: ID, status, lines, lines failed."""
    return {"id": batch["id"], "status": batch["status"], "requests": len(batch["requests"]),
            "failed": len(batch["failed"]), "counts": batch.get("counts"),
            "errors": batch.get("errors", []), "folded": bool(batch.get("done"))}


def _parts(lines: list[tuple[str, str, str]]):
    part, size = [], 0
    for item in lines:
        n = len(item[2].encode("utf-8")) + 1
        if part and (len(part) >= MAX_LINES or size + n > MAX_INPUT_BYTES):
            yield part
            part, size = [], 0
        part.append(item)
        size += n
    if part:
        yield part


def _why(item: dict) -> str:
    error = item.get("error") or {}
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:300]
    response = item.get("response") or {}
    body = response.get("body") if isinstance(response, dict) else None
    message = body.get("error", {}).get("message") if isinstance(body, dict) and \
        isinstance(body.get("error"), dict) else None
    return str(message or f"HTTP {response.get('status_code')}")[:300]


def _usage(u) -> dict:
    if not isinstance(u, dict):
        return {}
    out = {"prompt_tokens": int(u.get("prompt_tokens") or 0),
           "completion_tokens": int(u.get("completion_tokens") or 0)}
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens")
    if cached:
        out["cached_tokens"] = int(cached)
    return out


def _load(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise KgbuildError(f"{path}: not a batch list kgbuild wrote ({exc})",
                           code="llm-batch") from None
    if not isinstance(data, dict) or not isinstance(data.get("batches"), list):
        raise KgbuildError(f"{path}: not a batch list kgbuild wrote", code="llm-batch")
    return data["batches"]


def _save(path: Path, batches: list[dict]) -> None:
    atomic_write(path, json.dumps({"batches": batches}, indent=1, sort_keys=True))
