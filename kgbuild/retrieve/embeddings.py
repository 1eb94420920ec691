"""Semantic seed matching: node labels and a question compared through embeddings.

Any OpenAI-compatible embeddings endpoint works (OpenAI, Ollama, vLLM, llama.cpp) through the
``openai`` client. Vectors are cached on disk per model, keyed by a hash of the embedded text,
so a graph's labels are sent once; a question is embedded on every call. Only the texts of
nodes the caller passes are embedded: traversal passes its principal's visible nodes, so a
hidden node's label never leaves the machine on its behalf.

An endpoint that does not serve embeddings for the model (HTTP 404, 405 or 501, or a 400,
422 or 500 whose message names embeddings, as llama.cpp's servers answer for a model loaded
without them) costs one request, never retried: the answer is one :class:`KgbuildError`
line, remembered beside the vectors so later calls fail at once without a request (delete
the ``.unsupported.json`` file named in the message to ask again).

Every request is bounded (:mod:`kgbuild.io.http`): ``timeout`` seconds per attempt in all,
its answer at most ``max_response_bytes`` received and decompressed (else one error, code
``embeddings-too-large``). The endpoint is shown and remembered with credentials redacted.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from pathlib import Path
from typing import Iterable

import numpy as np

from ..errors import KgbuildError
from ..io.atomic import atomic_write
from ..io.http import Bounds, Client, ResponseTooLarge
from ..io.urls import redact_url

BATCH = 256
MAX_RESPONSE_BYTES = 64 << 20  # 256 vectors of 3072 floats are about 16 MB of JSON
_KEY = re.compile(r"[0-9a-f]{32}")
_NOT_SERVED = re.compile(r"embedding", re.I)


def node_text(label: str, type_name: str, description: str | None = None) -> str:
    """What a node is embedded as: its label, its type and its description."""
    return f"{label} ({type_name})" + (f": {description}" if description else "")


class EmbeddingMatcher:
    """Embeds texts with one model through an OpenAI-compatible client, caching vectors."""

    def __init__(self, client, model: str, cache_dir: str | Path | None = None):
        self.client = client
        self.model = model
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model)
        self.cache_file = Path(cache_dir) / f"embeddings-{slug}.npz" if cache_dir else None
        self.endpoint = redact_url(str(getattr(client, "base_url", "") or "").rstrip("/"))
        self._cache: dict[str, np.ndarray] = self._load()
        self._unsupported: str | None = self._load_unsupported()
        self._confirmed = False  # an answer came: later requests may be retried
        self.requests = 0

    @classmethod
    def from_env(cls, model: str, base_url: str | None = None, api_key: str | None = None,
                 cache_dir: str | Path | None = None, timeout: float = 60.0,
                 max_response_bytes: int = MAX_RESPONSE_BYTES) -> "EmbeddingMatcher":
        """A matcher on an ``openai.OpenAI`` client (``OPENAI_BASE_URL``/``OPENAI_API_KEY``
        apply when ``base_url``/``api_key`` are not given; local servers need no real key)."""
        import openai  # imported here so the CLI starts fast when nothing is embedded

        key = api_key or os.environ.get("OPENAI_API_KEY") or "unused"
        http = Client(Bounds(timeout, max_response_bytes), follow_redirects=True,
                      limits=openai.DEFAULT_CONNECTION_LIMITS)
        return cls(openai.OpenAI(base_url=base_url, api_key=key, max_retries=1, timeout=timeout,
                                 http_client=http), model, cache_dir)

    def _load(self) -> dict[str, np.ndarray]:
        """The cached vectors: keys are SHA-256 prefixes of the embedded texts, values unit
        vectors of one size. A cache that is damaged (truncated, garbage, not a regular file)
        or does not look like that is dropped and rebuilt, never trusted."""
        try:
            if self.cache_file is None or not self.cache_file.is_file():
                return {}
            with np.load(self.cache_file, allow_pickle=False) as data:
                cache = {k: data[k] for k in data.files}
        except Exception:  # noqa: BLE001 - BadZipFile, EOFError, zlib errors, ValueError, ...
            return {}
        sizes = {v.shape for v in cache.values()}
        if any(not _KEY.fullmatch(k) for k in cache) or len(sizes) > 1 or any(
                v.ndim != 1 or v.dtype != np.float32 or not np.all(np.isfinite(v))
                for v in cache.values()):
            return {}
        return cache

    def _save(self) -> None:
        """Write the cache; skipped where it cannot be written (a read-only store)."""
        if self.cache_file is None:
            return
        try:
            buf = io.BytesIO()
            np.savez(buf, **self._cache)
            atomic_write(self.cache_file, buf.getvalue())
        except Exception:  # noqa: BLE001 - the vectors stay in memory for this run
            pass

    @property
    def _unsupported_file(self) -> Path | None:
        return self.cache_file.with_suffix(".unsupported.json") if self.cache_file else None

    def _load_unsupported(self) -> str | None:
        """What this endpoint answered when it was last asked for this model's embeddings
        and does not serve them, or None."""
        try:
            data = json.loads(self._unsupported_file.read_text())  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - absent, unreadable or damaged: ask the endpoint
            return None
        if isinstance(data, dict) and data.get("endpoint") == self.endpoint \
                and isinstance(data.get("message"), str):
            return data["message"]
        return None

    def _not_served(self, message: str) -> KgbuildError:
        where = self._unsupported_file
        remembered = f" (remembered in {where}; delete it to ask again)" if where else ""
        return KgbuildError(f"the embeddings endpoint {self.endpoint or '(default)'} does not "
                            f"serve embeddings for model {self.model!r}: {message}{remembered}",
                            code="embeddings-unsupported")

    def _request(self, texts: list[str]):
        """One embeddings request. The first one goes without retries, so an endpoint that
        does not serve embeddings costs exactly one request; transient failures of it are
        then retried as usual."""
        import openai

        if self._unsupported:
            raise self._not_served(self._unsupported)
        first = not self._confirmed and hasattr(self.client, "with_options")
        client = self.client.with_options(max_retries=0) if first else self.client
        try:
            try:
                self.requests += 1
                response = client.embeddings.create(model=self.model, input=texts)
            except openai.APIStatusError as exc:
                if not_served(exc):
                    self._remember_unsupported(exc)
                    raise self._not_served(self._unsupported or "") from None
                if not first or not (exc.status_code in (408, 409, 429) or exc.status_code >= 500):
                    raise
                self.requests += 1
                response = self.client.embeddings.create(model=self.model, input=texts)
            except (openai.APITimeoutError, openai.APIConnectionError):
                if not first:
                    raise
                self.requests += 1
                response = self.client.embeddings.create(model=self.model, input=texts)
        except ResponseTooLarge as exc:
            raise KgbuildError(f"embeddings: {exc.message}", code="embeddings-too-large") from None
        except KgbuildError:
            raise
        except Exception as exc:  # the client raises many transport and API error types
            raise KgbuildError(f"embeddings endpoint failed ({type(exc).__name__}): "
                               f"{_short(exc)}", code="embeddings") from None
        self._confirmed = True
        return response

    def _remember_unsupported(self, exc) -> None:
        self._unsupported = f"HTTP {exc.status_code}: {_short(exc)}"
        if self._unsupported_file is None:
            return
        record = {"endpoint": self.endpoint, "model": self.model, "message": self._unsupported}
        try:
            atomic_write(self._unsupported_file, json.dumps(record, sort_keys=True) + "\n")
        except Exception:  # noqa: BLE001 - remembered for this run only
            pass

    def embed(self, texts: Iterable[str]) -> np.ndarray:
        """Unit vectors for ``texts`` (rows in order); only uncached texts are requested."""
        texts = list(texts)
        # keyed by endpoint and text: two servers with one model name never share vectors
        keys = [hashlib.sha256(f"{self.endpoint}\n{t}".encode()).hexdigest()[:32] for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts) if k not in self._cache}.items(),
                         key=lambda kt: kt[1])  # requested in text order: deterministic
        for start in range(0, len(missing), BATCH):
            chunk = missing[start:start + BATCH]
            response = self._request([t for _, t in chunk])
            rows = sorted(response.data, key=lambda d: d.index)
            if len(rows) != len(chunk):
                raise KgbuildError(f"embeddings endpoint returned {len(rows)} vectors for {len(chunk)} texts")
            for (key, _), row in zip(chunk, rows):
                self._cache[key] = _unit(row.embedding)
        if missing:
            self._save()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([self._cache[k] for k in keys])

    def match(self, question: str, candidates: list[tuple[str, str]], top: int = 3,
              min_score: float = 0.5) -> list[tuple[str, float]]:
        """The ``top`` candidate IDs most similar to ``question`` (cosine >= ``min_score``);
        ``candidates`` are ``(id, text)``. Ties break on ID, so results are deterministic."""
        if not candidates or top <= 0:
            return []
        matrix = self.embed(t for _, t in candidates)
        q = self.embed([question])[0]
        if matrix.shape[1] != q.shape[0]:
            raise KgbuildError("question and node vectors have different sizes: was the model changed?")
        scores = matrix @ q
        ranked = sorted(((-float(s), cid) for (cid, _), s in zip(candidates, scores)))
        return [(cid, round(-s, 4)) for s, cid in ranked[:top] if -s >= min_score]


def not_served(exc) -> bool:
    """Whether an API error says the endpoint does not serve embeddings (for this model)."""
    status = getattr(exc, "status_code", None)
    if status in (404, 405, 501):
        return True
    if status not in (400, 422, 500):
        return False
    body = getattr(exc, "body", None)
    return bool(_NOT_SERVED.search(f"{exc} {json.dumps(body) if isinstance(body, (dict, list)) else body or ''}"))


def _unit(embedding) -> np.ndarray:
    """A unit vector from one answer row. A row of one vector per token (llama-cpp-python's
    server for a model without a pooling layer, e.g. a chat model loaded with
    ``--embedding true``) is mean-pooled first."""
    vec = np.asarray(embedding, dtype=np.float32)
    if vec.ndim == 2 and vec.shape[0] and vec.shape[1]:
        vec = vec.mean(axis=0)
    if vec.ndim != 1 or not vec.size or not np.all(np.isfinite(vec)):
        raise KgbuildError(f"embeddings endpoint returned a vector of shape {vec.shape}, not a "
                           f"list of finite numbers (or one such list per token)", code="embeddings")
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm else vec


def _short(exc: Exception, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
