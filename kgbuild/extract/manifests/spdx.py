"""SPDX 2.x SBOM (JSON, 2.2 and 2.3): packages as nodes, relationships as edges.

IDs follow the CycloneDX reader: a package with a ``purl`` external reference is that purl
(the same package version in two SBOMs is one node; kept as attribute and alias); any other
package is SBOM-local, ``<doc_id>#<SPDXID>``. A package the document ``DESCRIBES`` (or lists
in ``documentDescribes``), or whose ``primaryPackagePurpose`` is an application, container,
firmware, ..., is a Component; libraries and frameworks, and packages of no stated purpose,
are Libraries. ``specType`` keeps the purpose.

Relationships between packages, each at ``/relationships/<i>`` (and its line):
``DEPENDS_ON`` and ``DEPENDENCY_OF`` (reversed) -> ``dependsOn``; ``DEV_``, ``BUILD_``,
``TEST_``, ``RUNTIME_``, ``OPTIONAL_``, ``PROVIDED_DEPENDENCY_OF`` -> ``dependsOn`` reversed,
qualified ``dev``/``build``/``test``/``runtime``/``optional``/``provided``;
``STATIC_LINK``/``DYNAMIC_LINK`` -> ``dependsOn`` (``static-link``/``dynamic-link``);
``CONTAINS``/``CONTAINED_BY`` -> ``partOf``. Relationships with files, snippets, other
documents (``DocumentRef-...``) or ``NOASSERTION`` are not between packages and are skipped;
other relationship types carry no dependency or containment and are skipped too.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import Problem
from ...io.text import brief
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import json_lines, json_pointer, parse_json, quoted, read_parsed, scoped_id
from .purl import is_purl

_SNIFF = re.compile(rb'"spdxVersion"\s*:\s*"SPDX-2')
LIBRARY_PURPOSES = {"LIBRARY", "FRAMEWORK"}
# relationship -> (edge, reversed?, qualifiers)
RELATIONS = {
    "DEPENDS_ON": ("dependsOn", False, ()), "DEPENDENCY_OF": ("dependsOn", True, ()),
    "DEV_DEPENDENCY_OF": ("dependsOn", True, ("dev",)),
    "BUILD_DEPENDENCY_OF": ("dependsOn", True, ("build",)),
    "TEST_DEPENDENCY_OF": ("dependsOn", True, ("test",)),
    "RUNTIME_DEPENDENCY_OF": ("dependsOn", True, ("runtime",)),
    "OPTIONAL_DEPENDENCY_OF": ("dependsOn", True, ("optional",)),
    "PROVIDED_DEPENDENCY_OF": ("dependsOn", True, ("provided",)),
    "STATIC_LINK": ("dependsOn", False, ("static-link",)),
    "DYNAMIC_LINK": ("dependsOn", False, ("dynamic-link",)),
    "CONTAINS": ("partOf", True, ()), "CONTAINED_BY": ("partOf", False, ()),
}


class SpdxExtractor:
    name = "spdx"
    version = 1
    emits = frozenset({"Library", "Component", "dependsOn", "partOf"})
    ownable = False  # as CycloneDX: an SBOM lists an artifact's contents, mostly third-party

    def claims(self, path: Path, head: bytes) -> bool:
        name = path.name.lower()
        return name.endswith(".spdx.json") or (name.endswith(".json") and bool(_SNIFF.search(head)))

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, parse_json)
        if isinstance(parsed, Extraction):
            return parsed
        text, doc = parsed
        if not isinstance(doc, dict) or not str(doc.get("spdxVersion", "")).startswith("SPDX-2"):
            return Extraction(problems=[Problem("error", "bad-spdx", "not an SPDX 2 JSON "
                                                "document (spdxVersion)", src.doc_id, 1)])
        lines = json_lines(text)
        out = Extraction()

        def warn(ptr: str, message: str) -> None:
            out.problems.append(Problem("warning", "bad-spdx", f"{ptr}: {message}", src.doc_id,
                                        lines.get(ptr)))

        doc_ref = doc.get("SPDXID") if isinstance(doc.get("SPDXID"), str) else "SPDXRef-DOCUMENT"
        described = {x for x in doc.get("documentDescribes") or () if isinstance(x, str)}
        relationships = doc.get("relationships") if isinstance(doc.get("relationships"), list) \
            else []
        for rel in relationships:
            if isinstance(rel, dict) and rel.get("spdxElementId") == doc_ref \
                    and rel.get("relationshipType") == "DESCRIBES":
                described.add(rel.get("relatedSpdxElement"))
        ids: dict[str, tuple[str, str]] = {}  # SPDXID -> (node ID, type)
        packages = doc.get("packages")
        if packages is not None and not isinstance(packages, list):
            warn("/packages", "not an array; skipped")
            packages = []
        for i, pkg in enumerate(packages or ()):
            ptr = json_pointer("packages", i)
            if out.full(src.doc_id, lines.get(ptr)):
                return out
            if not isinstance(pkg, dict) or not isinstance(pkg.get("SPDXID"), str) \
                    or not isinstance(pkg.get("name"), str):
                warn(ptr, "a package without SPDXID and name strings; skipped")
                continue
            spdx_id = pkg["SPDXID"]
            if spdx_id in ids:
                warn(ptr, f"duplicate SPDXID {brief(spdx_id)}; skipped")
                continue
            purl = next((r.get("referenceLocator") for r in pkg.get("externalRefs") or ()
                         if isinstance(r, dict) and r.get("referenceType") == "purl"
                         and isinstance(r.get("referenceLocator"), str)
                         and is_purl(r["referenceLocator"])), None)
            node_id = purl or scoped_id(src.doc_id, spdx_id)
            purpose = pkg.get("primaryPackagePurpose")
            purpose = purpose.upper() if isinstance(purpose, str) else None
            node_type = "Component" if spdx_id in described or (
                purpose and purpose not in LIBRARY_PURPOSES) else "Library"
            attrs = {"purl": purl, "version": pkg.get("versionInfo"),
                     "description": pkg.get("description") or pkg.get("summary"),
                     "specType": purpose.lower() if purpose else "package"}
            attrs = {k: v for k, v in attrs.items() if isinstance(v, str) and v
                     and k in ctx.schema.attributes}
            ids[spdx_id] = (node_id, node_type)
            out.nodes.append(NodeRecord(node_id, node_type, pkg["name"],
                                        line=lines.get(json_pointer("packages", i, "name")),
                                        pointer=ptr, attributes=attrs,
                                        aliases=(spdx_id,) if purl else ()))
        for i, rel in enumerate(relationships):
            ptr = json_pointer("relationships", i)
            if out.full(src.doc_id, lines.get(ptr)):
                break
            if not isinstance(rel, dict):
                warn(ptr, "not an object; skipped")
                continue
            kind, a, b = (rel.get("relationshipType"), rel.get("spdxElementId"),
                          rel.get("relatedSpdxElement"))
            if not all(isinstance(x, str) for x in (kind, a, b)):
                warn(ptr, "needs relationshipType, spdxElementId and relatedSpdxElement strings;"
                     " skipped")
                continue
            if kind not in RELATIONS or a not in ids or b not in ids:
                continue  # files, other documents, NOASSERTION, other relationship types
            edge, reverse, qualifiers = RELATIONS[kind]
            (s, s_type), (o, o_type) = (ids[b], ids[a]) if reverse else (ids[a], ids[b])
            if s == o:
                continue
            out.edges.append(EdgeRecord(
                s, edge, o, line=lines.get(json_pointer("relationships", i, "relationshipType")),
                pointer=ptr, evidence=f'{quoted(a, 100)} {kind} {quoted(b, 100)}',
                subject_type=s_type, object_type=o_type, qualifiers=qualifiers))
        return out


register(SpdxExtractor())
