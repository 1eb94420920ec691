"""npm ``package.json``: the package as a Component, each dependency as a Library.

Sections read: ``dependencies``, ``devDependencies``, ``peerDependencies``,
``optionalDependencies``. Each entry is one ``dependsOn`` edge located by the JSON pointer
``/<section>/<name>`` (and its line); its evidence is ``<section>: "<name>": "<range>"`` so
a dev dependency stays recognisable. An npm alias (``"x": "npm:real@^1"``) points at
``real``. A ``"private": true`` package gets a document-scoped ID: private names are not
unique. The package's dependency on itself (``"eslint": "file:."`` in eslint's own
``devDependencies``) is no edge.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ...errors import Problem
from ...io.text import brief
from ..records import Context, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import (
    depends_on,
    json_lines,
    json_pointer,
    parse_json,
    quoted,
    read_parsed,
    scoped_id,
)
from .purl import npm_purl

SECTIONS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
QUALIFIERS = {"devDependencies": ("dev",), "peerDependencies": ("peer",),
              "optionalDependencies": ("optional",)}


class NpmExtractor:
    name = "npm"
    version = 2  # 2: CODEOWNERS evidence names one owner; long names cut in the evidence
    emits = frozenset({"Component", "dependsOn", "ownedBy"})
    ownable = True  # the package is the repository's own; "author"/"maintainers" are people, not owners

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "package.json"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, parse_json)
        if isinstance(parsed, Extraction):
            return parsed
        text, data = parsed
        if not isinstance(data, dict):
            return Extraction(problems=[Problem("error", "not-a-manifest",
                                                "package.json is not a JSON object", src.doc_id, 1)])
        lines = json_lines(text)
        out = Extraction()

        def warn(ptr: str, message: str) -> None:
            out.problems.append(Problem("warning", "bad-dependency", f"{ptr}: {message}; skipped",
                                        src.doc_id, lines.get(ptr)))

        me = _own_node(data, src.doc_id, lines, out.problems)
        out.nodes.append(me)
        for section in SECTIONS:
            deps = data.get(section)
            if deps is not None and not isinstance(deps, dict):
                warn(json_pointer(section), "not an object")
                continue
            for name, spec in (deps or {}).items():
                ptr = json_pointer(section, name)
                if out.full(src.doc_id, lines.get(ptr)):
                    break
                if not isinstance(spec, str):
                    warn(ptr, f"version range {brief(spec)} is not a string")
                    continue
                target = _target(name, spec)
                try:
                    lib = npm_purl(target)
                except ValueError as exc:
                    warn(ptr, str(exc))
                    continue
                if lib == me.id:  # the package itself ("eslint": "file:." in eslint's own)
                    continue
                out.edges.append(depends_on(me.id, lib, target.strip(),
                                            f"{section}: {quoted(name)}: {quoted(spec)}",
                                            line=lines.get(ptr), pointer=ptr,
                                            qualifiers=QUALIFIERS.get(section, ())))
        return out


def _own_node(data: dict, doc_id: str, lines: dict[str, int], problems: list[Problem]
              ) -> NodeRecord:
    name = data.get("name")
    attrs = {k: data[k] for k in ("version", "description") if isinstance(data.get(k), str)
             and data[k]}
    label = name.strip() if isinstance(name, str) and name.strip() else \
        PurePosixPath(doc_id).parent.name or "package"
    node_id = scoped_id(doc_id, label)
    if isinstance(name, str) and data.get("private") is not True:
        try:
            node_id = attrs["purl"] = npm_purl(name)
        except ValueError as exc:
            problems.append(Problem("warning", "bad-name", f"/name: {exc}; using a document-scoped "
                                    f"ID", doc_id, lines.get("/name")))
    ptr = "/name" if "name" in data else ""
    return NodeRecord(node_id, "Component", label, line=lines.get(ptr), pointer=ptr,
                      attributes=attrs)


def _target(name: str, spec: str) -> str:
    """The package an entry installs: ``name``, or the real package of an npm alias."""
    if spec.startswith("npm:"):
        aliased = spec[4:]
        return aliased.rpartition("@")[0] or aliased
    return name


register(NpmExtractor())
