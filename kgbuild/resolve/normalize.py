"""Name normalisation for entity resolution: folding and comparison keys.

A *key* is what two names must share to count as the same name of one entity type:

* the name's words (:func:`kgbuild.graph.ids.split_words`, the words IDs are made of too):
  NFKC, accents removed, case-folded, split at separators and camelCase humps;
* abbreviations expanded and plurals singularised, word by word (both maps configurable);
* a trailing *type suffix* dropped, but only the suffix of the type being compared:
  ``Payments API`` keys to ``payment`` as an API and to ``payment api`` as anything else.

The *compact* form (the key without spaces) makes ``PayPal``, ``pay-pal`` and ``paypal``
equal. Entity references (Backstage ``kind:namespace/name``, purls) get canonical forms so
that ``API:payments`` finds ``api:default/payments``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from rapidfuzz.distance import OSA

from ..errors import RefError
from ..graph.ids import split_words
from ..graph.refs import DEFAULT_NAMESPACE, split_ref
from ..schema.model import Schema

_PURL = re.compile(r"^pkg:([A-Za-z.+-]+)/([^@?#]+)")

# Extra words that name a type without being its schema name ("Payments Team" is a Group).
EXTRA_SUFFIXES: dict[str, tuple[str, ...]] = {
    "Group": ("team", "squad"),
    "Library": ("lib",),
    "Website": ("site", "web", "ui", "frontend"),
}
ABBREVIATIONS: dict[str, str] = {
    "svc": "service", "srv": "service", "mgmt": "management", "mgr": "manager",
    "acct": "account", "cfg": "config", "configuration": "config", "db": "database",
    "k8s": "kubernetes", "msg": "message", "notif": "notification", "authn": "authentication",
    "authz": "authorization", "admin": "administration", "env": "environment",
}
PLURALS: dict[str, str] = {  # irregular forms and words the rules would damage
    "analytics": "analytics", "news": "news", "series": "series", "status": "status",
    "indices": "index", "indexes": "index", "aliases": "alias", "addresses": "address",
    "data": "data", "people": "person", "children": "child", "kubernetes": "kubernetes",
    "apis": "api", "uris": "uri",
}


def fold(text: str) -> str:
    """NFKC, case-folded, trimmed, inner whitespace collapsed: the form exact lookups use."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def singular(word: str) -> str:
    """A conservative English singular: ``policies`` -> ``policy``, ``apis`` -> ``api``."""
    if len(word) < 4 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def acronym(words: list[str]) -> str:
    """Initials of a multi-word name (``customer identity service`` -> ``cis``)."""
    return "".join([w[0] for w in words]) if len(words) > 1 else ""


def canonical_ref(text: str) -> str | None:
    """Canonical reference form of an ID-like string, or None for a plain name.

    ``pkg:PyPI/Foo_Bar@1.0`` -> ``pkg:pypi/foo-bar`` (version and qualifiers dropped);
    ``API:payments`` -> ``api:default/payments``; ``default/payments`` -> ``*:default/payments``
    (kind unknown).
    """
    if ":" not in text and "/" not in text:
        return None
    text = text.strip()
    if not text.isascii():  # (NFKC leaves ASCII as it is)
        text = unicodedata.normalize("NFKC", text)
    m = _PURL.match(text) if text.startswith("pkg:") else None
    if m:
        kind, name = m.group(1).lower(), m.group(2).rstrip("/").lower()
        if kind == "pypi":
            name = re.sub(r"[-_.]+", "-", name)
        return f"pkg:{kind}/{name}"
    if " " in text:
        return None
    try:
        kind, namespace, name = split_ref(text)
    except RefError:
        return None
    return f"{kind or '*'}:{namespace or DEFAULT_NAMESPACE}/{name}".lower()


@dataclass
class Normalizer:
    """Computes keys; every map is configurable, the defaults suit English service catalogs.

    ``suffixes`` maps a type name to the word sequences that may end a name of that type and
    are dropped from its key. :meth:`for_schema` derives them from the schema's type names
    (``API`` -> ``api``, ``Service`` -> ``service``) plus :data:`EXTRA_SUFFIXES`.
    """

    suffixes: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    abbreviations: Mapping[str, str] = field(default_factory=lambda: dict(ABBREVIATIONS))
    plurals: Mapping[str, str] = field(default_factory=lambda: dict(PLURALS))
    singularize: bool = True
    _cache: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)
    _glued: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def for_schema(cls, schema: Schema, extra: Mapping[str, Iterable[str]] | None = None,
                   **options) -> "Normalizer":
        """Suffixes from the schema's type names plus ``extra`` (default :data:`EXTRA_SUFFIXES`)."""
        extra = EXTRA_SUFFIXES if extra is None else extra
        norm = cls(**options)
        for name in schema.node_types:
            words = [name, *extra.get(name, ())]
            seqs = {tuple(norm.words(w)) for w in words}
            norm.suffixes[name] = tuple(sorted((s for s in seqs if s), key=lambda s: (-len(s), s)))
        return norm

    def words(self, text: str) -> list[str]:
        """Words of ``text`` with abbreviations expanded and plurals singularised."""
        out: list[str] = []
        spaced = text.replace("-", " ").replace("_", " ").replace(".", " ") \
            if text.isascii() else ""
        if spaced.replace(" ", "").isalpha() and (text.islower() or text.isupper()
                                                  or text.istitle()):
            split = spaced.lower().split()  # (letters in one case: split_words' words, faster)
        else:
            split = split_words(text)
        for w in split:
            done = self._cache.get(w)
            if done is None:
                one = self._singular(w)
                done = self._cache[w] = tuple(
                    self._singular(part) for part in self.abbreviations.get(one, one).split())
            out += done
        return out

    def _singular(self, word: str) -> str:
        return self.plurals.get(word) or (singular(word) if self.singularize else word)

    def strip_suffix(self, words: list[str], type_name: str | None,
                     misspelt: bool = False) -> list[str]:
        """``words`` without one trailing suffix of ``type_name``, if any word would remain.

        With ``misspelt``, a last word one edit away from a one-word suffix of 5+ letters
        (``servcie``, ``sytsem``) counts as that suffix too.
        """
        suffixes = self.suffixes.get(type_name or "", ())
        for seq in suffixes:
            n = len(seq)
            if len(words) > n and tuple(words[-n:]) == seq:
                return words[:-n]
        if misspelt and len(words) > 1 and any(
                len(s) == 1 and len(s[0]) >= 5 and OSA.distance(words[-1], s[0]) == 1 for s in suffixes):
            return words[:-1]
        return words

    def compact_variants(self, key: str, type_name: str) -> list[str]:
        """The compact form of a one-word key, plus that form less a glued-on type suffix.

        ``PAYMENTSAPI`` has no word boundary to strip ``api`` at; as an API its compact
        variants are ``paymentsapi`` and ``payments`` (3+ letters must remain).
        """
        if " " in key:
            return [key.replace(" ", "")]
        forms = self._glued.get(type_name)
        if forms is None:
            forms = {"".join(seq) for seq in self.suffixes.get(type_name, ())}
            forms = self._glued[type_name] = tuple(sorted(
                forms | {a for a, full in self.abbreviations.items() if full in forms}))
        if not key.endswith(forms):
            return [key]
        return [key] + sorted({key[:-len(f)] for f in forms
                               if key.endswith(f) and len(key) - len(f) >= 3})

    def key(self, text: str, type_name: str | None = None) -> str:
        """The comparison key of ``text`` as a name of ``type_name``."""
        return " ".join(self.strip_suffix(self.words(text), type_name))
