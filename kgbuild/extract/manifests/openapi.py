"""OpenAPI, Swagger and AsyncAPI documents: title, version and kind of an API definition.

:func:`read_api_spec` serves the Backstage extractor (``$text``/``$openapi`` placeholders);
the extractor turns a standalone spec file into an API node ``<doc_id>#api`` (see
:func:`spec_api_id`) with its title, version and the file as ``definitionSource``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import InputError, Problem
from ...io.text import read_text, resolved
from ...io.yamlfile import YMap, load_yaml
from ..records import Context, Extraction, NodeRecord, SourceFile
from .packages import input_problem, parse_json, scoped_id

KINDS = ("openapi", "swagger", "asyncapi")
NAMES = {f"{k}.{ext}" for k in KINDS for ext in ("json", "yaml", "yml")}
_YAML_SNIFF = re.compile(rb"""^["']?(?:openapi|swagger|asyncapi)["']?\s*:\s*["']?\d""", re.M)
_JSON_SNIFF = re.compile(rb'"(?:openapi|swagger|asyncapi)"\s*:\s*"\d')
_VERSION = re.compile(r"^\d+(\.\d+)*$")


def read_api_spec(path: Path, max_bytes: int = 20 * 1024 * 1024, name: str | None = None) -> dict:
    """Read a spec file; raises :class:`InputError` (with file and line) when it is not one.

    Returns ``kind`` (openapi, swagger or asyncapi), ``specVersion``, ``title``, ``version``,
    ``description`` (``None`` when absent) and where the ``info`` object (else the version
    key) sits: ``line`` (YAML) or ``pointer`` (JSON).
    """
    name = name or str(path)
    return parse_api_spec(read_text(path, max_bytes, name), name, path.suffix.lower() == ".json")


def parse_api_spec(text: str, name: str, is_json: bool = False) -> dict:
    """:func:`read_api_spec` for text already read (``is_json`` picks the parser)."""
    if is_json:
        data = parse_json(text, name)
    else:
        docs = load_yaml(text, name)
        data = docs[0].data if docs else None
    kind = next((k for k in KINDS if isinstance(data, dict) and k in data
                 and _VERSION.match(str(data[k]))), None)
    if kind is None:
        raise InputError("not an OpenAPI, Swagger or AsyncAPI document (no top-level "
                         "openapi, swagger or asyncapi version)", name, 1)
    info = data["info"] if isinstance(data.get("info"), dict) else {}

    def text_of(key: str) -> str | None:
        value = "" if info.get(key) is None else str(info[key]).strip()
        return value or None

    return {"kind": kind, "specVersion": str(data[kind]), "title": text_of("title"),
            "version": text_of("version"), "description": text_of("description"),
            "line": data.line_of("info" if info else kind) if isinstance(data, YMap) else None,
            "pointer": ("/info" if info else f"/{kind}") if is_json else None}


_PLACEHOLDER = re.compile(r"""\$(?:text|openapi|asyncapi)\s*:\s*["']?([^\s"'#]+)""")


def referenced_by_catalog(src: SourceFile, ctx: Context) -> tuple[bool, list[Path]]:
    """Whether a catalog file in this spec's folder or a folder above it (up to the scanned
    root) points at it through a ``$text``/``$openapi``/``$asyncapi`` placeholder; and the
    folders and files looked at, on which the answer depends."""
    target = src.path.resolve()
    root = src.root.resolve()
    looked: list[Path] = []
    for folder in target.parents:
        if folder != root and root not in folder.parents:
            break
        looked.append(folder)
        for candidate in sorted(folder.glob("*.y*ml")):
            try:
                if candidate == target or candidate.suffix not in (".yaml", ".yml") \
                        or not resolved(candidate).is_relative_to(root):
                    continue  # (a link to outside the scanned root is not read)
                looked.append(candidate)
                text = read_text(candidate, ctx.max_file_bytes)
            except (InputError, OSError):
                continue
            for ref in _PLACEHOLDER.findall(text):
                rel = ref[len("file:"):] if ref.startswith("file:") else ref
                try:
                    if "://" not in rel and resolved(candidate.parent / rel) == target:
                        return True, looked
                except OSError:
                    continue
        if folder == root:
            break
    return False, looked


def spec_api_id(doc_id: str) -> str:
    """ID of the API node a standalone spec file defines."""
    return scoped_id(doc_id, "api")


class ApiSpecExtractor:
    name = "openapi"
    version = 2  # 2: lines counted at \n only; UTF-16/32 specs read
    emits = frozenset({"API"})
    # not ownable: a spec a catalog API points at describes that (owned) API, and a spec's
    # info.contact is its own answer to who is responsible
    ownable = False

    def claims(self, path: Path, head: bytes) -> bool:
        name = path.name.lower()
        if name in NAMES:
            return True
        if name.endswith(".json"):
            return bool(_JSON_SNIFF.search(head))
        return name.endswith((".yaml", ".yml")) and bool(_YAML_SNIFF.search(head))

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            spec = read_api_spec(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        referenced, depends = referenced_by_catalog(src, ctx)
        out = Extraction(depends=depends)
        if referenced:  # the catalog's API entity describes this spec: no second API node
            return out
        if spec["title"] is None:
            out.problems.append(Problem("warning", "no-title", "API spec without info.title; "
                                        "named after its file", src.doc_id, spec["line"] or 1))
        attrs = {"specType": "asyncapi" if spec["kind"] == "asyncapi" else "openapi",
                 "specVersion": spec["specVersion"], "definitionSource": src.doc_id}
        attrs.update({k: spec[k] for k in ("title", "version", "description") if spec[k]})
        out.nodes.append(NodeRecord(spec_api_id(src.doc_id), "API", spec["title"] or src.path.stem,
                                    line=spec["line"], pointer=spec["pointer"], attributes=attrs))
        return out


# registered last by the package (__init__): it sniffs any JSON/YAML, and backstage imports
# this module, which would otherwise register it first
