"""``kgbuild ingest``: JSONL corpora into the store's passage index, linked, then embedded."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ..errors import KgbuildError
from .dense import EmbeddingSettings, embed_passages
from .index import IngestResult, PassageIndex


def ingest(store: str | Path, files: Iterable[str | Path], *,
           embeddings: EmbeddingSettings | None = None, full: bool = False,
           catalog=None, chunks=None,
           progress: Callable[[int, int], None] | None = None) -> IngestResult:
    """Bring ``<store>/passages/`` up to date with ``files`` (incremental, one transaction),
    then embed the passages that have no vector for ``embeddings`` yet. ``catalog``: the
    store's entity names (:func:`~.catalog.catalog_names`), linked like titles; ``chunks``:
    the store's extracted text chunks, indexed as passages (:func:`~.catalog.from_store`). An embeddings
    endpoint that fails leaves the passages indexed and says why (``result.embeddings``);
    the next ingest embeds what is missing."""
    files = [Path(f) for f in files]
    if not files and chunks is None:
        raise KgbuildError("give at least one JSONL file (the store holds no extracted text "
                           "either)", code="usage")
    with PassageIndex(store, write=True) as index:
        result = index.ingest(files, catalog=catalog, full=full, chunks=chunks)
        if embeddings is not None:
            try:
                result.embedded = embed_passages(index, embeddings, progress)
                index.record_settings("embeddings", embeddings.to_dict())
                result.embeddings = f"{embeddings.describe()}: {result.embedded} passage(s) embedded"
            except KgbuildError as exc:
                result.embeddings = f"not embedded ({exc.message} [{exc.code}])"
        else:
            result.embeddings = "no embeddings endpoint configured: lexical and graph search only"
    return result
