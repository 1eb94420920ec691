"""An embeddings client: texts to unit vectors through any OpenAI-compatible embeddings
endpoint (OpenAI, Ollama, vLLM, llama.cpp).

Each text is sent once, in text order (deterministic whatever order the caller has),
:data:`BATCH` texts a request. A row of one vector per token (llama-cpp-python's server for
a model without a pooling layer) is mean-pooled; a row that is not a list of finite numbers
is an error, not a wrong ranking.

An endpoint that does not serve embeddings for the model (HTTP 404, 405 or 501, or a 400,
422 or 500 whose message names embeddings, as llama.cpp's servers answer for a model loaded
without them) costs one request: the first request goes without retries (a transient
failure of it is then retried as usual). The answer is one :class:`KgbuildError` line (code
``embeddings-unsupported``), remembered in the ``memory`` file when there is one, so later
calls fail at once without a request (delete the file to ask again).

Every request is bounded (:mod:`kgbuild.llm.connect`): ``timeout`` seconds per attempt in
all, its answer at most ``max_response_bytes`` received and decompressed (else one error,
code ``embeddings-too-large``); any other failure is code ``embeddings``. The endpoint is
shown and remembered with credentials redacted.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterable

import numpy as np

from ..errors import KgbuildError
from ..io.atomic import atomic_write
from ..io.http import ResponseTooLarge
from ..io.urls import redact_url, url_secrets
from .connect import openai_client, says, short, transient

BATCH = 256  # texts per request
TIMEOUT = 60.0  # seconds per request attempt
MAX_RESPONSE_BYTES = 64 << 20  # 256 vectors of 3072 floats are about 16 MB of JSON
_NOT_SERVED = re.compile(r"embedding", re.I)


def embeddings_client(base_url: str | None, api_key: str | None = None, *,
                      timeout: float = TIMEOUT, max_response_bytes: int = MAX_RESPONSE_BYTES):
    """An ``openai.OpenAI`` client for embeddings (one retry); ``$OPENAI_BASE_URL`` and
    ``$OPENAI_API_KEY`` apply when ``base_url``/``api_key`` are not given."""
    return openai_client(base_url, api_key or os.environ.get("OPENAI_API_KEY"),
                         timeout=timeout, max_retries=1, max_bytes=max_response_bytes)


class Embedder:
    """One model's embeddings through an OpenAI-compatible ``client`` (see the module doc);
    ``memory``: the file where "not served" is remembered, or None."""

    def __init__(self, client, model: str, memory: Path | None = None):
        self.client = client
        self.model = model
        self.memory = memory
        url = str(getattr(client, "base_url", "") or "")
        self.endpoint = redact_url(url.rstrip("/"))
        self._secrets = url_secrets(url)
        self.requests = 0  # HTTP requests sent (retries included)
        self._unsupported: str | None = self._load_unsupported()
        self._confirmed = False  # an answer came: later requests may be retried

    def embed(self, texts: Iterable[str]) -> np.ndarray:
        """Unit vectors of ``texts``, one row each, in order."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        unique = sorted(set(texts))
        vectors: dict[str, np.ndarray] = {}
        for start in range(0, len(unique), BATCH):
            chunk = unique[start:start + BATCH]
            rows = sorted(self._request(chunk).data, key=lambda d: d.index)
            if len(rows) != len(chunk):
                raise KgbuildError(f"embeddings endpoint returned {len(rows)} vectors for "
                                   f"{len(chunk)} texts")
            for text, row in zip(chunk, rows):
                vectors[text] = _unit(row.embedding)
        return np.vstack([vectors[t] for t in texts])

    def _request(self, texts: list[str]):
        """One embeddings request: the first without retries, then (a transient failure of
        it) once more with them."""
        import openai

        if self._unsupported:
            raise self._not_served(self._unsupported)
        first = not self._confirmed and hasattr(self.client, "with_options")
        try:
            try:
                self.requests += 1
                client = self.client.with_options(max_retries=0) if first else self.client
                response = client.embeddings.create(model=self.model, input=texts)
            except openai.APIError as exc:
                if isinstance(exc, openai.APIStatusError) and not_served(exc):
                    self._remember_unsupported(exc)
                    raise self._not_served(self._unsupported or "") from None
                if not first or not transient(exc):
                    raise
                self.requests += 1
                response = self.client.embeddings.create(model=self.model, input=texts)
        except ResponseTooLarge as exc:
            raise KgbuildError(f"embeddings: {exc.message}", code="embeddings-too-large") from None
        except KgbuildError:
            raise
        except Exception as exc:  # the client raises many transport and API error types
            raise KgbuildError(f"embeddings endpoint failed ({type(exc).__name__}): "
                               f"{short(exc, self._secrets)}", code="embeddings") from None
        self._confirmed = True
        return response

    # -- an endpoint that does not serve the model's embeddings ----------------------------------
    def _load_unsupported(self) -> str | None:
        """What this endpoint answered when it was last asked for this model's embeddings
        and does not serve them, or None."""
        try:
            data = json.loads(self.memory.read_text())  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - absent, unreadable or damaged: ask the endpoint
            return None
        if isinstance(data, dict) and data.get("endpoint") == self.endpoint \
                and isinstance(data.get("message"), str):
            return data["message"]
        return None

    def _remember_unsupported(self, exc) -> None:
        self._unsupported = f"HTTP {exc.status_code}: {short(exc, self._secrets)}"
        if self.memory is None:
            return
        record = {"endpoint": self.endpoint, "model": self.model, "message": self._unsupported}
        try:
            atomic_write(self.memory, json.dumps(record, sort_keys=True) + "\n")
        except Exception:  # noqa: BLE001 - remembered for this run only
            pass

    def _not_served(self, message: str) -> KgbuildError:
        remembered = (f" (remembered in {self.memory}; delete it to ask again)"
                      if self.memory else "")
        return KgbuildError(f"the embeddings endpoint {self.endpoint or '(default)'} does not "
                            f"serve embeddings for model {self.model!r}: {message}{remembered}",
                            code="embeddings-unsupported")


def not_served(exc) -> bool:
    """Whether an API error says the endpoint does not serve embeddings (for this model)."""
    status = getattr(exc, "status_code", None)
    if status in (404, 405, 501):
        return True
    return status in (400, 422, 500) and bool(_NOT_SERVED.search(says(exc)))


def _unit(embedding) -> np.ndarray:
    """A unit vector from one answer row (one vector per token: mean-pooled first)."""
    vec = np.asarray(embedding, dtype=np.float32)
    if vec.ndim == 2 and vec.shape[0] and vec.shape[1]:
        vec = vec.mean(axis=0)
    if vec.ndim != 1 or not vec.size or not np.all(np.isfinite(vec)):
        raise KgbuildError(f"embeddings endpoint returned a vector of shape {vec.shape}, not a "
                           f"list of finite numbers (or one such list per token)",
                           code="embeddings")
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm else vec
