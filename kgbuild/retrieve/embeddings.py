"""Semantic seed matching: node labels and a question compared through embeddings.

The vectors come from :class:`kgbuild.llm.embeddings.Embedder` (any OpenAI-compatible
embeddings endpoint; its bounds, errors and the memory of an endpoint that does not serve
the model). Here they are cached on disk per model, keyed by a hash of the endpoint and the
embedded text, so a graph's labels are sent once; a question is embedded on every call
(kept out of the cache, which is rewritten whole when it grows).
Only the texts of nodes the caller passes are embedded: traversal passes its principal's
visible nodes, so a hidden node's label never leaves the machine on its behalf.
"""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path
from typing import Iterable

import numpy as np

from ..errors import KgbuildError
from ..io.atomic import atomic_write
from ..llm.embeddings import MAX_RESPONSE_BYTES, TIMEOUT, Embedder, embeddings_client

_KEY = re.compile(r"[0-9a-f]{32}")


def node_text(label: str, type_name: str, description: str | None = None) -> str:
    """What a node is embedded as: its label, its type and its description."""
    return f"{label} ({type_name})" + (f": {description}" if description else "")


class EmbeddingMatcher:
    """Embeds texts with one model through an OpenAI-compatible client, caching vectors in
    ``cache_dir`` (``embeddings-<model>.npz``; "not served" beside it in
    ``embeddings-<model>.unsupported.json``)."""

    def __init__(self, client, model: str, cache_dir: str | Path | None = None):
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model)
        self.cache_file = Path(cache_dir) / f"embeddings-{slug}.npz" if cache_dir else None
        self.embedder = Embedder(client, model, self.cache_file.with_suffix(".unsupported.json")
                                 if self.cache_file else None)
        self._cache: dict[str, np.ndarray] = self._load()

    @classmethod
    def from_env(cls, model: str, base_url: str | None = None, api_key: str | None = None,
                 cache_dir: str | Path | None = None, timeout: float = TIMEOUT,
                 max_response_bytes: int = MAX_RESPONSE_BYTES) -> "EmbeddingMatcher":
        """A matcher on :func:`~kgbuild.llm.embeddings.embeddings_client` (``OPENAI_BASE_URL``
        and ``OPENAI_API_KEY`` apply when ``base_url``/``api_key`` are not given)."""
        return cls(embeddings_client(base_url, api_key, timeout=timeout,
                                     max_response_bytes=max_response_bytes), model, cache_dir)

    @property
    def requests(self) -> int:
        """Embeddings requests sent (retries included)."""
        return self.embedder.requests

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

    def _key(self, text: str) -> str:
        """A text's key in the cache: by endpoint and text (two servers with one model name
        never share vectors)."""
        return hashlib.sha256(f"{self.embedder.endpoint}\n{text}".encode()).hexdigest()[:32]

    def embed(self, texts: Iterable[str]) -> np.ndarray:
        """Unit vectors for ``texts`` (rows in order); only uncached texts are requested."""
        texts = list(texts)
        keys = [self._key(t) for t in texts]
        missing = dict(sorted({t: k for k, t in zip(keys, texts) if k not in self._cache}.items()))
        if missing:
            for key, vector in zip(missing.values(), self.embedder.embed(list(missing))):
                self._cache[key] = vector
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
        q = self._cache.get(self._key(question))  # a text embedded before: the same vector
        if q is None:  # a new question is not saved: it would rewrite the whole file
            q = self.embedder.embed([question])[0]
        if matrix.shape[1] != q.shape[0]:
            raise KgbuildError("question and node vectors have different sizes: was the model changed?")
        scores = matrix @ q
        ranked = sorted(((-float(s), cid) for (cid, _), s in zip(candidates, scores)))
        return [(cid, round(-s, 4)) for s, cid in ranked[:top] if -s >= min_score]
