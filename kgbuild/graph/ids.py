"""The one rule that turns a name into an ID: a new entity of type ``Component`` named
``HTTPServer`` is ``component:default/http-server`` whether text extraction, the resolver or
``kgbuild verify`` meets it first; a catalog that names it the Backstage way (kebab-case
``http-server``) gives it the same ID.

Words (:func:`split_words`, also what the resolver's keys are made of): Unicode NFKC, accents
removed, case-folded, ``&`` read as ``and``, split at any separator and at camelCase humps
(``getHTTPResponse``, ``APIsClient``, ``Adams70``, ``33Atlas``; not ``k8s`` or ``log4j``);
``+``, ``#`` and ``*`` stay part of a word (``C++`` is not ``C``).
"""

from __future__ import annotations

import re
import unicodedata

from .refs import DEFAULT_NAMESPACE

_WORD = re.compile(r"[^\W_]+[+#*]*|[+#*]+")
_HUMP = re.compile(r"(?<=[A-Z])(?=[A-Z](?!s(?![a-z]))[a-z])|(?<=[a-z])(?=[A-Z])"
                   r"|(?<=\d)(?=[A-Z][a-z])|(?<=[a-z]{2})(?=\d+(?:[A-Z]|$|[^A-Za-z0-9]))"
                   r"|(?<=[A-Z]{2})(?=\d+(?:$|[^A-Za-z0-9]))")
_DIGIT = re.compile(r"\d")
_MAY_HUMP = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]|\d")  # where any _HUMP split can be
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def strip_accents(text: str) -> str:
    """``text`` in NFKC with combining marks removed (``Café`` -> ``Cafe``)."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize(
        "NFKC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def split_words(text: str) -> list[str]:
    """Case-folded words of ``text``, split at separators and camelCase humps."""
    text = strip_accents(text).replace("&", " and ")
    if (not text.islower() or _DIGIT.search(text)) and _MAY_HUMP.search(text):
        text = _HUMP.sub(" ", text)  # (else there is no hump to split at)
    return _WORD.findall(text.casefold())


def slug(text: str) -> str:
    """The ``-``-joined ASCII letters and digits of each word (``Payments API (v2)`` ->
    ``payments-api-v2``); a name with none keeps its letters (``東京``); no letter at all
    is ``entity``."""
    words = split_words(text)
    return ("-".join(w for w in (_NOT_SLUG.sub("", x) for x in words) if w)
            or "-".join(w for w in ("".join(c for c in x if c.isalnum()) for x in words) if w)
            or "entity")


def entity_id(type_name: str, name: str) -> str:
    """The stable ID of a new entity: ``<type, lowercased>:default/<slug of name>``."""
    return f"{type_name.lower()}:{DEFAULT_NAMESPACE}/{slug(name)}"
