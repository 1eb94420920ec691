"""Pieces shared by the structured-source extractors (manifests, SBOM, compose, specs).

ID conventions used by these extractors:

* a package known to a registry: its version-less purl (see :mod:`.purl`);
* something with no global name (a private npm package, a CycloneDX ``bom-ref`` that is
  not a purl, a ``go.mod`` without a valid module path, an API spec file): a
  document-scoped ID ``<doc_id>#<local name>``;
* the Python project of a directory known only by its requirements files, or by a
  ``pyproject.toml`` without a name: ``<directory>#python`` (named projects carry it as
  an alias, so requirements files and ``pyproject.toml`` of one directory meet).
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
from bisect import bisect_left
from collections.abc import Callable

from ...errors import InputError, KgbuildError, Problem
from ...io.text import CUT, brief, clip, one_line, read_text
from ..records import Context, EdgeRecord, Extraction, SourceFile


def scoped_id(doc_id: str, local: str) -> str:
    """A document-scoped ID, ``<doc_id>#<local>``."""
    return f"{doc_id}#{local}"


def python_dir_id(doc_id: str) -> str:
    """ID of the Python project in the directory holding ``doc_id``."""
    return scoped_id(posixpath.dirname(doc_id) or ".", "python")


def json_pointer(*parts: object) -> str:
    """An RFC 6901 pointer to ``parts`` (``~`` and ``/`` escaped)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def input_problem(exc: InputError) -> Problem:
    """The located error for a file that cannot be read or parsed at all, with the error's
    own code when it has one (``not-a-regular-file``, ``file-too-large``, ...)."""
    code = exc.code if exc.code not in (InputError.code, KgbuildError.code) else "bad-input"
    return Problem("error", code, exc.message, exc.file or "", exc.line)


def read_parsed(src: SourceFile, ctx: Context, parse: Callable[[str, str], object]
                ) -> tuple[str, object] | Extraction:
    """A source file's text and what ``parse(text, doc_id)`` makes of it (:func:`parse_json`,
    :func:`parse_toml`, ``load_yaml``), or, when it cannot be read or parsed, an Extraction
    holding nothing but the located error (:func:`input_problem`)."""
    try:
        text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        return text, parse(text, src.doc_id)
    except InputError as exc:
        return Extraction(problems=[input_problem(exc)])


def parse_toml(text: str, name: str) -> dict:
    """``tomllib.loads`` raising :class:`InputError` (code ``bad-input``) at the syntax
    error's line, for nesting too deep to parse, or for a value it cannot hold."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise InputError("TOML nested too deeply to read", name, 1) from None
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\s*\(at line (\d+), column \d+\)$", str(exc))
        raise InputError(f"TOML syntax error: {str(exc)[:m.start()] if m else exc}", name,
                         int(m.group(1)) if m else None) from None
    except ValueError as exc:
        raise InputError(f"TOML value error: {brief(str(exc), 120)}", name) from None


def parse_json(text: str, name: str) -> object:
    """``json.loads`` raising :class:`InputError` at the syntax error's line (or for nesting
    too deep to parse)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"JSON syntax error: {exc.msg}", name, exc.lineno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply to read", name, 1) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(f"JSON value error: {one_line(str(exc), 120)}", name) from None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')


def json_lines(text: str) -> dict[str, int]:
    """The line of every value of a valid JSON text by JSON pointer (a member: its key's line).

    ``json`` keeps no positions; this token scan recovers them to locate records and problems.
    """
    newlines = [m.start() for m in re.finditer("\n", text)]
    out: dict[str, int] = {}
    stack: list[list] = []  # [bracket, pointer, next array index]
    ptr, line, key_next = "", 1, False
    for m in _JSON_TOKEN.finditer(text):
        tok, at = m.group(), bisect_left(newlines, m.start()) + 1
        if tok in ("}", "]"):
            stack.pop()
        elif tok == ",":
            key_next = stack[-1][0] == "{"
        elif tok == ":":
            continue
        elif key_next:
            ptr, line, key_next = _join(stack[-1][1], json.loads(tok)), at, False
        else:
            if not stack or stack[-1][0] == "[":
                ptr, line = (_join(stack[-1][1], stack[-1][2]), at) if stack else ("", at)
                if stack:
                    stack[-1][2] += 1
            out[ptr] = line
            if tok in ("{", "["):
                stack.append([tok, ptr, 0])
                key_next = tok == "{"
    return out


def _join(pointer: str, part: object) -> str:
    return pointer + json_pointer(part)


def quoted(value: str, limit: int = 120) -> str:
    """``value`` as a JSON string for evidence, cut to ``limit`` characters (and marked)
    before it is quoted: a long name repeated in many entries costs no more than once."""
    return json.dumps(value) if len(value) <= limit else json.dumps(value[:limit])[:-1] + CUT + '"'


def depends_on(subject: str, library: str, label: str, evidence: str, *,
               line: int | None = None, pointer: str | None = None,
               qualifiers: tuple[str, ...] = ()) -> EdgeRecord:
    """A ``dependsOn`` edge from a manifest's Component to a Library it names; ``qualifiers``
    say how the manifest qualifies it (``dev``, ``peer``, ``optional:<group>``, ``build``, ...)."""
    return EdgeRecord(subject, "dependsOn", library, line=line, pointer=pointer,
                      evidence=clip(evidence), subject_type="Component", object_type="Library",
                      object_label=label, qualifiers=qualifiers)
