"""The store's catalog as names passages can mention: every entity's label, aliases and the
name part of its ID (``component:default/payments-api`` -> ``payments-api``), with the
entity's access labels (a name links for a principal only when they see the entity)."""

from __future__ import annotations

from pathlib import Path

from ..graph.access import name_forms
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from .index import Catalogued
from .links import is_proper, name_key


def catalog_names(store: str | Path, schema: Schema) -> dict[str, Catalogued]:
    """key -> (written with capitals, [(entity ID, access labels)]); empty when the store
    holds no graph (only passages)."""
    if not (Path(store) / "CURRENT").is_file():
        return {}
    with GraphStore(store, schema, write=False) as graph:
        kg = graph.knowledge_graph()
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
