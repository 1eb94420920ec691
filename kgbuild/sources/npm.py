"""npm ``package.json``: the package as a Component, each dependency as a Library.

Sections read: ``dependencies``, ``devDependencies``, ``peerDependencies``,
``optionalDependencies``. Each entry is one ``dependsOn`` edge located by the JSON pointer
``/<section>/<name>``; its evidence is ``<section>: "<name>": "<range>"`` so a dev
dependency stays recognisable. An npm alias (``"x": "npm:real@^1"``) points at ``real``.
A ``"private": true`` package gets a document-scoped ID: private names are not unique.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from ..errors import InputError
from .base import Context, Extraction, NodeRecord, Problem, SourceFile
from .packages import depends_on, input_problem, json_pointer, scoped_id
from .purl import npm_purl
from .registry import register
from .textfile import read_text

SECTIONS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")


class NpmExtractor:
    name = "npm"

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "package.json"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        out = Extraction()
        try:
            data = json.loads(read_text(src.path, ctx.max_file_bytes, src.doc_id))
        except InputError as exc:
            return Extraction(problems=[input_problem(exc, "unreadable")])
        except json.JSONDecodeError as exc:
            return Extraction(problems=[Problem("error", "json-syntax", f"JSON syntax error: {exc.msg}",
                                                src.doc_id, exc.lineno)])
        if not isinstance(data, dict):
            return Extraction(problems=[Problem("error", "not-a-manifest",
                                                "package.json is not a JSON object", src.doc_id, 1)])
        me = _own_node(data, src.doc_id, out.problems)
        out.nodes.append(me)
        for section in SECTIONS:
            deps = data.get(section)
            if deps is None:
                continue
            if not isinstance(deps, dict):
                out.problems.append(_warn(src, f"{json_pointer(section)} is not an object; skipped"))
                continue
            for name, spec in deps.items():
                ptr = json_pointer(section, name)
                target = _target(name, spec)
                try:
                    lib = npm_purl(target)
                except ValueError as exc:
                    out.problems.append(_warn(src, f"{ptr}: {exc}; skipped"))
                    continue
                out.edges.append(depends_on(
                    me.id, lib, target.strip(), f"{section}: {json.dumps(name)}: {json.dumps(spec)}",
                    pointer=ptr))
        return out


def _own_node(data: dict, doc_id: str, problems: list[Problem]) -> NodeRecord:
    name, version = data.get("name"), data.get("version")
    attrs = {k: v for k, v in (("version", version), ("description", data.get("description")))
             if isinstance(v, str) and v}
    label = name if isinstance(name, str) and name.strip() else PurePosixPath(doc_id).parent.name
    node_id = scoped_id(doc_id, label or "package")
    if isinstance(name, str) and data.get("private") is not True:
        try:
            node_id = attrs["purl"] = npm_purl(name)
        except ValueError as exc:
            problems.append(Problem("warning", "bad-name", f"/name: {exc}; using a document-scoped ID",
                                    doc_id))
    return NodeRecord(node_id, "Component", label or node_id, pointer=json_pointer("name")
                      if "name" in data else "", attributes=attrs)


def _target(name: str, spec: object) -> str:
    """The package an entry installs: ``name``, or the real package of an npm alias."""
    if isinstance(spec, str) and spec.startswith("npm:"):
        aliased = spec[4:]
        return aliased.rpartition("@")[0] or aliased
    return name


def _warn(src: SourceFile, message: str) -> Problem:
    return Problem("warning", "bad-dependency", message, src.doc_id)


register(NpmExtractor())
