"""What a SPARQL text may ask of kgbuild: never to reach another server.

SPARQL 1.1 federation (``SERVICE <url> { ... }``) makes the engine send requests to any
host; pyoxigraph and rdflib both do, and neither can be told not to. Every SPARQL text
kgbuild runs or sends (``kgbuild query``, ``serve``'s ``/query``, remote traversal, the
SPARQL constraints of shape files) passes :func:`refuse_service` first.

The check reads the text as the SPARQL grammar's terminals (IRIs, prefixed names, variables,
blank node labels, language tags, the four kinds of strings, comments, numbers, keywords), not
as characters: the keyword ``SERVICE`` is refused wherever it is a token, and is harmless in
a comment, a string, an IRI or a name (``ex:SERVICE``, ``?service``). Where the text is not
valid SPARQL the check errs towards refusing (``1SERVICE``); the engine refuses such text anyway. In the grammar this
keyword begins a ServiceGraphPattern and nothing else (rule [59]), so a token is a pattern.
Codepoint escapes (``\\u0053``), which the specification resolves before parsing, are
checked both resolved and as written, so neither reading can hide the keyword.
"""

from __future__ import annotations

import re

from ..errors import ServiceRefused

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<long>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\")
  | (?P<string>'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<var>[?$]\w+)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<run>[\w\-.:%\\\u00b7]+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)
_PIECE = re.compile(r"[^\W\d_]+")
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def keywords(text: str) -> list[str]:
    """The words of a SPARQL text that can be keywords, upper-cased, in order: the letter runs
    of every token that is not a string, IRI, comment, variable, language tag or prefixed
    name (a run holding ``:``; its local part may hold dots, as in ``ex:a.b``)."""
    return [w.upper() for m in _TOKEN.finditer(text)
            if m.lastgroup == "run" and ":" not in m.group()
            for w in _PIECE.findall(m.group())]


def refuse_service(text: str, where: str | None = None) -> str:
    """``text`` unchanged, or :class:`ServiceRefused` (located at ``where``) when it holds a
    ``SERVICE`` clause, read as written or with its codepoint escapes resolved."""
    resolved = _ESCAPE.sub(_codepoint, text)
    for form in (text, resolved) if resolved != text else (text,):
        if "SERVICE" in keywords(form):
            raise ServiceRefused("SERVICE is not allowed: kgbuild never sends a query to "
                                 "another server", where)
    return text


def _codepoint(m: re.Match) -> str:
    try:
        return chr(int(m.group(1) or m.group(2), 16))
    except (ValueError, OverflowError):
        return m.group()
