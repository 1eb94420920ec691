"""A running Backstage as a source: each entity of its catalog one source document.

:func:`sync_catalogs` is the step of :func:`~kgbuild.project.update.update_store` that
brings the store in line with catalogs read through the API
(:func:`~kgbuild.remote.backstage.read_catalog`, before the store is touched: a catalog that
cannot be read in full changes nothing). An entity's document ID is the API URL serving it,
its ``kg:path`` the entity's origin location (the ``backstage.io/managed-by-origin-location``
annotation: ``url:https://github.com/org/repo/blob/main/catalog-info.yaml``, ``file:/...``),
and each relation carries the JSON pointer of the entry stating it. The relations are those
of the same entity read from a file: both go through
:func:`~kgbuild.extract.manifests.backstage.extract_entity`'s checks.

Incremental like files: an entity whose ``metadata.etag`` is the one stored (its "stat") is
not looked at again; one whose etag changed is re-extracted unless what the extractor reads
of it is unchanged (its digest, the content hash); an entity no longer listed loses its
document; documents of other catalogs and of files are left alone. The store's settings
(schema, kgbuild and extractor versions, access rules, the alias registry) re-extract them
as they do files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..extract.assemble import document_triples
from ..extract.discover import fingerprint
from ..extract.manifests.backstage import BackstageExtractor, extract_entity
from ..extract.records import Context
from ..extract.registry import get
from ..graph.access import AccessRules
from ..graph.model import SourceDocument, utc_timestamp
from ..remote.backstage import Catalog, CatalogEntity
from ..store.graphstore import DocumentState, DocumentUpdate, GraphStore
from .update import access_labels, extractor_tag


def is_catalog_document(doc_id: str) -> bool:
    """Whether a document ID is a catalog entity's (an API URL; a file's ID never holds
    ``//``: it is a normalised relative path)."""
    return "://" in doc_id


@dataclass
class CatalogSync:
    """What :func:`sync_catalogs` did: the documents to write, the changes by kind
    (``unchanged``, ``changed``, ``added``), the documents listed (``present``) and every
    stored document of the catalogs read (``owned``: those not present are to be deleted)."""

    updates: dict[str, DocumentUpdate] = field(default_factory=dict)
    changes: dict[str, list[str]] = field(default_factory=lambda: {
        "unchanged": [], "changed": [], "added": []})
    present: set[str] = field(default_factory=set)
    owned: set[str] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)


def stat_of(entity: CatalogEntity) -> str:
    """What a catalog entity's document keeps as its "stat": the size of its JSON (as
    files keep theirs, for the size-limit rule) and its etag; empty without an etag."""
    return f"{entity.size}:{entity.etag}" if entity.etag else ""


def sync_catalogs(catalogs: Sequence[Catalog], store: GraphStore,
                  states: dict[str, DocumentState], *, redo: bool, stale: set[str],
                  ctx: Context, access: AccessRules | None = None,
                  registry: Path | None = None, canonical: Callable | None = None,
                  timestamp: float | None = None,
                  deps_unchanged: Callable[[dict[str, str]], bool] = lambda deps: True
                  ) -> CatalogSync:
    """Updates for the documents of ``catalogs`` against the stored ``states``: ``redo``
    re-extracts every entity (a full build, or settings that make everything stale), a
    document in ``stale`` is re-extracted whatever its etag, and ``deps_unchanged(depends)``
    says whether a document's dependencies (the alias registry) still are as stored."""
    ex = get("backstage") or BackstageExtractor()
    out = CatalogSync()
    for catalog in catalogs:
        out.owned.update(d for d in states if d.startswith(catalog.prefix))
        when = utc_timestamp(_when(timestamp, catalog.read_at))
        for entity in catalog.entities:
            doc_id = entity.doc_id
            out.present.add(doc_id)
            state = None if redo or doc_id in stale else states.get(doc_id)
            stat = stat_of(entity)
            if state is not None and (state.stat == stat != "" or state.sha256 == entity.digest) \
                    and deps_unchanged(state.depends):
                out.changes["unchanged"].append(doc_id)
                continue
            extraction = extract_entity(entity.data, doc_id, ctx)
            labels = access_labels(access, doc_id)
            doc = SourceDocument(doc_id, entity.origin, entity.digest, labels)
            triples, problems = document_triples(doc, extraction, ex.name, store.schema, when,
                                                 store.node_type, canonical)
            depends = {str(registry): fingerprint(registry)} if registry else {}
            out.updates[doc_id] = DocumentUpdate(triples, problems, [], depends, stat,
                                                 entity.digest, ("", "", ""),
                                                 extractor_tag(ex), sorted(labels))
            out.changes["changed" if doc_id in states else "added"].append(doc_id)
            out.names[doc_id] = ex.name
    return out


def _when(fixed: float | None, read_at: float) -> float:
    """``prov:generatedAtTime`` of a catalog's assertions: the given time, else
    ``$SOURCE_DATE_EPOCH``, else when the catalog was read (an entity is re-extracted only
    when it changed, so its time stays that of the first read that saw it so)."""
    if fixed is not None:
        return fixed
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env and env.strip().isdigit():
        return int(env)
    return read_at
