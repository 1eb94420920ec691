"""Writing a schema mapping as YAML in the format :mod:`.loader` reads, deterministically.

The same mapping always gives the same text: keys in the schema format's order, terms in the
mapping's order, strings quoted only when YAML would read them as something else, and notes
(decisions a person should review) as ``#`` comments above the term they concern.
"""

from __future__ import annotations

import json
import re

import yaml

_TOP = ("name", "version", "namespace", "prefix", "description")
_SECTIONS = ("node_types", "edge_types", "attributes")
_TERM_KEYS = ("parent", "domain", "range", "inverse", "transitive", "datatype", "multiple",
              "description", "cues", "iri", "inverse_iri")
_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def schema_yaml(data: dict, notes: dict[str, list[str]] | None = None,
                header: list[str] | tuple[str, ...] = ()) -> str:
    """``data`` (a schema mapping) as YAML. ``notes`` maps ``""`` (the whole schema) or
    ``"<section>.<name>"`` (one term) to comment lines; ``header`` lines open the file."""
    notes = notes or {}
    out = [_comment(line, "") for line in header]
    if notes.get(""):
        out.append("# Notes:")
        out += [_comment(f"- {n}", "") for n in notes[""]]
    for key in _TOP:
        if key in data and data[key] not in (None, ""):
            out.append(f"{key}: {_scalar(data[key])}")
    for section in _SECTIONS:
        terms = data.get(section) or {}
        if not terms and section == "attributes":
            continue
        out.append("")
        out.append(f"{section}:" if terms else f"{section}: {{}}")
        for name, spec in terms.items():
            out += [_comment(n, "  ") for n in notes.get(f"{section}.{name}", ())]
            spec = spec or {}
            extra = sorted(set(spec) - set(_TERM_KEYS))
            if extra:  # a bug in the importer, which made ``data``: no user input gets here
                raise ValueError(f"{section}.{name}: unknown key {extra[0]!r}")
            fields = [(k, spec[k]) for k in _TERM_KEYS if k in spec and spec[k] is not None]
            if not fields:
                out.append(f"  {_scalar(name)}: {{}}")
                continue
            out.append(f"  {_scalar(name)}:")
            out += [f"    {k}: {_value(v)}" for k, v in fields]
    return "\n".join(out) + "\n"


def _comment(text: str, indent: str) -> str:
    return f"{indent}# {' '.join(str(text).split())}".rstrip()


def _value(v) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    return _scalar(v)


def _scalar(v) -> str:
    """A YAML scalar that reads back as ``v``: plain when that is unambiguous, else quoted."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if _PLAIN.match(s) and yaml.safe_load(s) == s:  # not true/no/null/... in YAML 1.1
        return s
    quoted = json.dumps(s, ensure_ascii=False)  # JSON strings are YAML double-quoted scalars
    return "".join(c if _printable(c) else (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF
                                            else f"\\U{ord(c):08x}") for c in quoted)


def _printable(c: str) -> bool:
    """YAML's printable characters, without the ones YAML 1.1 reads as line breaks."""
    o = ord(c)
    return (0x20 <= o <= 0x7E or 0xA0 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD
            or 0x10000 <= o <= 0x10FFFF) and c not in "\u2028\u2029\ufeff"
