"""Seed IDs in the forms users write them, matched against the visible graph's node IDs.

A ``--seed`` is looked up, in order, as:

1. the exact stable ID;
2. its reference key: percent-encoding undone (``pkg:npm/@babel/core`` ==
   ``pkg:npm/%40babel/core``), then :func:`kgbuild.resolve.normalize.canonical_ref`, the
   resolver's ``id`` stage form: purl version, qualifiers and subpath dropped and the name
   normalised (``pkg:pypi/Flask@3.1.3`` -> ``pkg:pypi/flask``), Backstage refs lowercased with
   the default namespace (``API:payments`` -> ``api:default/payments``), a ref without kind
   matching any kind;
3. a bare name (``payments``): the Backstage ref of each ``types`` kind (its type and parent
   types, lowercased) in the default namespace, or of any kind when no type is given.

More than one match is ``ambiguous``, none ``unknown``; either way :meth:`SeedIndex.suggest`
offers the closest IDs. The index holds only the IDs it is given (the principal's visible
graph), so a suggestion never reveals a hidden node.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence
from urllib.parse import unquote

from rapidfuzz import fuzz, process

from ..graph.refs import DEFAULT_NAMESPACE
from ..resolve.normalize import canonical_ref
from ..schema.model import Schema

_SCOPED_PURL = re.compile(r"^(pkg:[^/]+/)@")
MAX_SUGGESTIONS = 5
SUGGEST_CUTOFF = 70.0  # rapidfuzz ratio (0-100) a suggested ID reaches


def seed_key(text: str) -> str | None:
    """The comparison key of an ID-like string (see the module doc), or None for a plain name."""
    plain = unquote(text.strip())
    canon = canonical_ref(_SCOPED_PURL.sub(r"\1%40", plain))  # canonical_ref reads a purl's
    return unquote(canon) if canon else None  # name from after the scope's encoded '@'


def name_part(text: str) -> str:
    """What tells IDs of one kind apart, decoded and case-folded: ``api:default/payments`` ->
    ``payments``, ``pkg:npm/%40babel/core`` -> ``npm/@babel/core``."""
    rest = unquote(text.strip()).lower().split(":", 1)[-1]
    return rest.removeprefix(f"{DEFAULT_NAMESPACE}/")


class SeedIndex:
    """Reference keys of a set of node IDs, for :meth:`lookup` and :meth:`suggest`."""

    def __init__(self, node_ids: Iterable[str], schema: Schema):
        self.schema = schema
        self.ids = sorted(set(node_ids))
        self._exact = set(self.ids)
        self._keys: dict[str, list[str]] = {}
        for node_id in self.ids:
            key = seed_key(node_id)
            if key is None:
                continue
            self._keys.setdefault(key, []).append(node_id)
            if not key.startswith("pkg:"):  # a ref written without its kind
                self._keys.setdefault("*:" + key.split(":", 1)[1], []).append(node_id)
        self._plain: list[str] | None = None

    def lookup(self, text: str, types: Sequence[str] = ()) -> list[str]:
        """The IDs ``text`` names (one when resolved, several when ambiguous, none when unknown)."""
        text = text.strip()
        if text in self._exact:
            return [text]
        key = seed_key(text)
        if key is not None:
            return sorted(set(self._keys.get(key, ())))
        kinds = sorted({a.lower() for t in types for a in self.schema.ancestors(
            self.schema.node_type(t).name)}) or ["*"]
        found = {i for k in kinds for i in self._keys.get(f"{k}:{DEFAULT_NAMESPACE}/{text.lower()}", ())}
        return sorted(found)

    def suggest(self, text: str, limit: int = MAX_SUGGESTIONS) -> list[str]:
        """Up to ``limit`` IDs whose name part (:func:`name_part`) is closest to ``text``'s."""
        if self._plain is None:
            self._plain = [name_part(i) for i in self.ids]
        query = name_part(text)
        hits = process.extract(query, self._plain, scorer=fuzz.ratio, limit=limit,
                               score_cutoff=SUGGEST_CUTOFF)
        return [self.ids[i] for _, _, i in sorted(hits, key=lambda h: (-h[1], h[2]))]
