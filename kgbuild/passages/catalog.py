"""What a store's graph gives the passage index: its catalog as names passages can mention
(every entity's label, aliases and the name part of its ID, ``component:default/payments-api``
-> ``payments-api``, with the entity's access labels: a name links for a principal only when
they see the entity), and the text chunks ``kgbuild extract`` stored (``kg:Passage``), which
are passages like a corpus line's: their context header is the document's title and the
section path."""

from __future__ import annotations

from pathlib import Path

from ..graph.access import name_forms
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from .corpus import Passage
from .index import Catalogued
from .links import is_proper, name_key


def from_store(store: str | Path, schema: Schema) -> tuple[dict[str, Catalogued], list[Passage] | None]:
    """The catalog names (:func:`catalog_names`) and the extracted chunks of the store's
    graph; ``({}, None)`` when the store holds no graph (only passages)."""
    if not (Path(store) / "CURRENT").is_file():
        return {}, None
    with GraphStore(store, schema, write=False) as graph:
        kg = graph.knowledge_graph()
    return catalog_names(kg), chunk_passages(kg.passages.values())


def chunk_passages(chunks) -> list[Passage]:
    """The graph's text chunks (``kg:Passage``) as passages: the chunk ID, the document's
    title, the text; document, span and section path as metadata (so in the header)."""
    return [Passage(c.id, c.title, c.text, "", 0,
                    {"document": c.document, "span": [c.start, c.end],
                     **({"section": " > ".join(c.section)} if c.section else {})},
                    tuple(sorted(c.access)))
            for c in sorted(chunks, key=lambda c: c.id)]


def catalog_names(kg) -> dict[str, Catalogued]:
    """key -> (written with capitals, [(entity ID, access labels)]) of a graph's entities."""
    out: dict[str, list] = {}
    for node in kg.nodes.values():
        for form in sorted({node.label, *node.aliases, *name_forms(node)} - {""}):
            key = name_key(form, qualifier=False)
            if key is None:
                continue
            proper, nodes = out.get(key, (True, []))
            nodes.append((node.id, tuple(sorted(node.access))))
            out[key] = (proper and is_proper(form), nodes)
    return out
