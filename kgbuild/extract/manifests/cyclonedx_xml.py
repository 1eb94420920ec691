"""CycloneDX SBOM (XML): the same nodes and edges as the JSON form (:mod:`.cyclonedx`).

The file passes the entity check of every XML source (:mod:`.xmltree`); its ``<bom>`` of
any schema version (1.0-1.6) is read into the JSON form's structure (``bom-ref`` and
``type`` attributes, ``<components>``, ``<services>``, nested ``<dependency ref>``) and read
by the same code, so both forms of one BOM give one graph. Records carry the line of their
element (no JSON pointer: there is none in an XML file); a dependency's evidence is the
``<dependency ref="..."/>`` it is read from.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import InputError, Problem
from ...io.text import clip
from ..records import Context, Extraction, SourceFile
from ..registry import register
from .cyclonedx import _Bom
from .packages import input_problem, json_pointer
from .xmltree import Element, parse_xml

_FIELDS = ("name", "version", "group", "purl", "description")


class CycloneDxXmlExtractor:
    name = "cyclonedx-xml"
    version = 1
    emits = frozenset({"Library", "Component", "Service", "dependsOn", "partOf"})
    ownable = False  # as the JSON form: an SBOM lists mostly third-party components

    def claims(self, path: Path, head: bytes) -> bool:
        name = path.name.lower()
        return name == "bom.xml" or name.endswith(".cdx.xml") or (
            name.endswith(".xml") and b"cyclonedx.org/schema/bom" in head)

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            root = parse_xml(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        if root.tag != "bom":
            return Extraction(problems=[Problem("error", "not-cyclonedx", f"the root element is "
                                                f"<{clip(root.tag, 40)}>, not <bom>: not a "
                                                "CycloneDX BOM", src.doc_id, root.line)])
        lines: dict[str, int] = {"": root.line}
        bom: dict = {"bomFormat": "CycloneDX"}
        meta = root.child("metadata")
        component = meta.child("component") if meta is not None else None
        if component is not None:
            bom["metadata"] = {"component": _entry(component, ("metadata", "component"), lines,
                                                   "components")}
        for key, tag in (("components", "component"), ("services", "service")):
            holder = root.child(key)
            if holder is not None:
                lines[json_pointer(key)] = holder.line
                bom[key] = [_entry(c, (key, i), lines, key)
                            for i, c in enumerate(holder.all(tag))]
        deps = root.child("dependencies")
        refs: dict[str, str] = {}
        if deps is not None:
            bom["dependencies"] = []
            for i, dep in enumerate(deps.all("dependency")):
                lines[json_pointer("dependencies", i)] = dep.line
                targets = []
                for j, inner in enumerate(dep.all("dependency")):
                    ptr = json_pointer("dependencies", i, "dependsOn", j)
                    lines[ptr] = inner.line
                    targets.append(inner.attrs.get("ref"))
                    refs[ptr] = inner.attrs.get("ref", "")
                bom["dependencies"].append({"ref": dep.attrs.get("ref"), "dependsOn": targets})
        out = _Bom(src.doc_id, lines).read(bom)
        for record in out.edges:
            if record.pointer in refs:
                record.evidence = f'<dependency ref="{clip(refs[record.pointer], 200)}"/>'
            record.pointer = None
        for node in out.nodes:
            node.pointer = None
        return out


def _entry(el: Element, path: tuple, lines: dict[str, int], nested: str) -> dict:
    lines[json_pointer(*path)] = el.line
    item: dict = {k: el.value(k) for k in _FIELDS if el.value(k) is not None}
    for attr in ("type", "bom-ref"):
        if attr in el.attrs:
            item[attr] = el.attrs[attr]
    endpoints = el.child("endpoints")
    if endpoints is not None:
        item["endpoints"] = [e.text.strip() for e in endpoints.all("endpoint") if e.text.strip()]
    inner = el.child(nested)
    if inner is not None:
        tag = "component" if nested == "components" else "service"
        item[nested] = [_entry(c, (*path, nested, i), lines, nested)
                        for i, c in enumerate(inner.all(tag))]
    return item


register(CycloneDxXmlExtractor())
