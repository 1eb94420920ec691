"""CycloneDX SBOM (JSON): components and services as nodes, ``dependencies`` as edges.

IDs come from the ``bom-ref``: a ``bom-ref`` that is a package URL is used as is (the same
package version in two BOMs is one node); any other ``bom-ref`` is BOM-local and becomes
``<doc_id>#<bom-ref>``. An entry without ``bom-ref`` uses its purl, else
``<doc_id>#<group/name@version>``. The purl is kept as attribute and alias.

Types: ``library``/``framework`` -> Library, services -> Service, everything else
(application, container, cryptographic-asset, ...) -> Component, the CycloneDX type kept
as ``specType``; ``metadata.component`` is the BOM's root. Every ``dependsOn`` pair is one
``dependsOn`` edge at ``/dependencies/<i>/dependsOn/<j>``; nested components and services
are ``partOf`` their parent.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import Problem
from ...io.text import brief, clip
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import json_lines, json_pointer, parse_json, quoted, read_parsed, scoped_id
from .purl import is_purl

_SNIFF = re.compile(rb'"bomFormat"\s*:\s*"CycloneDX"')
LIBRARY_TYPES = {"library", "framework"}


class CycloneDxExtractor:
    name = "cyclonedx"
    version = 2  # 2: long bom-refs cut in the evidence; bounded records
    emits = frozenset({"Library", "Component", "Service", "dependsOn", "partOf"})
    # not ownable: an SBOM lists an artifact's contents, mostly third-party (and may describe a
    # vendor's image); the project it describes has its own manifest, which CODEOWNERS owns
    ownable = False

    def claims(self, path: Path, head: bytes) -> bool:
        name = path.name.lower()
        return name == "bom.json" or name.endswith(".cdx.json") or (
            name.endswith(".json") and bool(_SNIFF.search(head)))

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, parse_json)
        if isinstance(parsed, Extraction):
            return parsed
        text, bom = parsed
        if not isinstance(bom, dict) or bom.get("bomFormat") != "CycloneDX":
            return Extraction(problems=[Problem("error", "not-cyclonedx",
                                                "not a CycloneDX JSON BOM (bomFormat)", src.doc_id, 1)])
        return _Bom(src.doc_id, json_lines(text)).read(bom)


class _Bom:
    def __init__(self, doc_id: str, lines: dict[str, int]):
        self.doc_id = doc_id
        self.lines = lines
        self.ids: dict[str, str] = {}  # bom-ref -> node ID
        self.out = Extraction()

    def read(self, bom: dict) -> Extraction:
        meta = bom.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("component"), dict):
            self._entry(meta["component"], ("metadata", "component"), None, service=False)
        for key in ("components", "services"):
            self._entries(bom.get(key), (key,), None)
        deps = bom.get("dependencies")
        for i, dep in enumerate(deps if isinstance(deps, list) else ()):
            ref = dep.get("ref") if isinstance(dep, dict) else None
            targets = dep.get("dependsOn", []) if isinstance(dep, dict) else None
            if not isinstance(ref, str) or not isinstance(targets, list):
                self._warn(json_pointer("dependencies", i), "needs a 'ref' string and a "
                           "'dependsOn' list; skipped")
                continue
            for j, target in enumerate(targets):
                ptr = json_pointer("dependencies", i, "dependsOn", j)
                if self.out.full(self.doc_id, self.lines.get(ptr)):
                    return self.out
                if not isinstance(target, str):
                    self._warn(ptr, f"{brief(target)} is not a bom-ref; skipped")
                    continue
                self.out.edges.append(EdgeRecord(
                    self._ref(ref, ptr), "dependsOn", self._ref(target, ptr),
                    line=self.lines.get(ptr), pointer=ptr,
                    evidence=f'"ref": {quoted(ref)}, "dependsOn": [{quoted(target)}]',
                    subject_type="Component", object_type="Component"))
        return self.out

    def _entries(self, items: object, path: tuple, parent: str | None) -> None:
        if items is None:
            return
        if not isinstance(items, list):
            self._warn(json_pointer(*path), "not an array; skipped")
            return
        for i, item in enumerate(items):
            if self.out.full(self.doc_id, self.lines.get(json_pointer(*path, i))):
                return
            if not isinstance(item, dict):
                self._warn(json_pointer(*path, i), "not an object; skipped")
                continue
            node_id = self._entry(item, (*path, i), parent, service=path[-1] == "services")
            self._entries(item.get(path[-1]), (*path, i, path[-1]), node_id)

    def _entry(self, item: dict, path: tuple, parent: str | None, service: bool) -> str | None:
        ptr = json_pointer(*path)
        name, purl = item.get("name"), item.get("purl")
        if not isinstance(name, str) or not name:
            self._warn(ptr, "entry without a name; skipped")
            return None
        ref = item.get("bom-ref")
        if isinstance(ref, str) and ref:
            local = ref
        elif isinstance(purl, str) and purl:
            local = purl
        else:
            group = item.get("group")
            local = f"{group}/{name}" if isinstance(group, str) and group else name
            local += f"@{item['version']}" if isinstance(item.get("version"), str) else ""
        if local in self.ids:
            self._warn(ptr, f"duplicate bom-ref {brief(local)}; skipped")
            return None
        node_id = self.ids[local] = local if is_purl(local) else scoped_id(self.doc_id, local)
        kind = "service" if service else str(item.get("type", ""))
        attrs = {k: item[k] for k in ("version", "description", "purl") if isinstance(item.get(k), str)}
        attrs["specType"] = kind
        if service and isinstance(item.get("endpoints"), list):
            attrs["endpoint"] = [e for e in item["endpoints"] if isinstance(e, str)]
        node_type = "Service" if service else "Library" if kind in LIBRARY_TYPES else "Component"
        aliases = (purl,) if isinstance(purl, str) and purl != node_id else ()
        self.out.nodes.append(NodeRecord(node_id, node_type, name, line=self.lines.get(ptr),
                                         pointer=ptr, attributes=attrs, aliases=aliases))
        if parent:
            self.out.edges.append(EdgeRecord(node_id, "partOf", parent, line=self.lines.get(ptr),
                                             pointer=ptr,
                                             evidence=clip(f"{name[:200]} nested in "
                                                           f"{json_pointer(*path[:-2])}")))
        return node_id

    def _ref(self, ref: str, ptr: str) -> str:
        if ref not in self.ids:
            self._warn(ptr, f"bom-ref {brief(ref)} is not declared in this BOM")
            self.ids[ref] = ref if is_purl(ref) else scoped_id(self.doc_id, ref)
        return self.ids[ref]

    def _warn(self, ptr: str, message: str) -> None:
        self.out.problems.append(Problem("warning", "bad-bom-entry", f"{ptr}: {message}",
                                         self.doc_id, self.lines.get(ptr)))


register(CycloneDxExtractor())
