"""Maven ``pom.xml``: the project, its parent, dependencies with scopes, plugins, modules.

The file passes the entity check of every XML source (:mod:`.xmltree`). The project is a
Component ``pkg:maven/<groupId>/<artifactId>`` (groupId and version inherited from
``<parent>`` when the project does not name them). Edges, each at the line of the entry's
``<artifactId>``, evidence ``groupId:artifactId:version``:

* ``<parent>``: ``dependsOn`` the parent POM (qualifier ``parent``);
* ``<dependencies>``: ``dependsOn`` ``pkg:maven/<groupId>/<artifactId>`` with qualifiers
  ``scope:<scope>`` (as written; none when the POM leaves the default, compile) and
  ``optional``; ``<dependencyManagement>`` imports (``<scope>import</scope>``, a BOM) as
  ``scope:import``; the other managed entries only pin versions and are not edges;
* ``<build><plugins>``: ``dependsOn`` the plugin (qualifier ``plugin``; groupId
  ``org.apache.maven.plugins`` when omitted);
* ``<modules>``: each module's POM (read for its coordinates) is ``partOf`` this project.

``${property}`` references in coordinates and versions are resolved from ``<properties>`` and
``project.*``; an unresolved one in a groupId or artifactId skips the entry with a warning.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import InputError, Problem
from ...io.text import brief, clip
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import depends_on, input_problem, scoped_id
from .purl import maven_purl
from .xmltree import Element, parse_xml

_PROPERTY = re.compile(r"\$\{([^}]{1,200})\}")
MAX_MODULES = 500


class _Pom:
    def __init__(self, root: Element):
        self.root = root
        parent = root.child("parent")
        self.parent = parent
        props = {}
        properties = root.child("properties")
        for p in properties.children if properties is not None else ():
            props[p.tag] = p.text.strip()
        self.props = props
        self.group = root.value("groupId") or (parent.value("groupId") if parent else None)
        self.artifact = root.value("artifactId")
        self.version = root.value("version") or (parent.value("version") if parent else None)
        for key, value in (("groupId", self.group), ("artifactId", self.artifact),
                           ("version", self.version)):
            if value:
                props.setdefault(f"project.{key}", value)
                props.setdefault(f"pom.{key}", value)
                props.setdefault(key, value)
        if parent is not None:
            for key in ("groupId", "artifactId", "version"):
                if parent.value(key):
                    props.setdefault(f"project.parent.{key}", parent.value(key))
        self.group, self.artifact = self.sub(self.group), self.sub(self.artifact)
        self.version = self.sub(self.version)

    def sub(self, value: str | None) -> str | None:
        if value is None:
            return None
        for _ in range(5):  # properties may refer to properties
            new = _PROPERTY.sub(lambda m: self.props.get(m.group(1), m.group(0)), value)
            if new == value:
                break
            value = new
        return value

    def coordinates(self) -> str | None:
        if self.group and self.artifact and "${" not in self.group + self.artifact:
            try:
                return maven_purl(self.group, self.artifact)
            except ValueError:
                return None
        return None


def is_pom(root: Element) -> bool:
    return root.tag == "project" and root.child("artifactId") is not None


class MavenPomExtractor:
    name = "maven"
    version = 1
    emits = frozenset({"Component", "dependsOn", "partOf", "ownedBy"})
    ownable = True  # the project is the repository's own; developers are people, not owners

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "pom.xml"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            root = parse_xml(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        if not is_pom(root):
            return Extraction(problems=[Problem("error", "bad-pom", f"the root element is "
                                                f"<{brief(root.tag, 40)}>, not a <project> with "
                                                "an <artifactId>: not a POM", src.doc_id,
                                                root.line)])
        pom = _Pom(root)
        out = Extraction()

        def warn(message: str, line: int | None) -> None:
            out.problems.append(Problem("warning", "bad-pom", message, src.doc_id, line))

        me = pom.coordinates()
        attrs: dict = {}
        if me is None:
            warn(f"project coordinates {brief(pom.group)}:{brief(pom.artifact)} cannot be "
                 f"resolved; using a document-scoped ID", root.child("artifactId").line)
            me = scoped_id(src.doc_id, pom.artifact or "project")
        else:
            attrs["purl"] = me
        if pom.version:
            attrs["version"] = pom.version
        if root.value("description"):
            attrs["description"] = " ".join(root.value("description").split())
        attrs = {k: v for k, v in attrs.items() if k in ctx.schema.attributes}
        label = root.value("name") or pom.artifact or "project"
        out.nodes.append(NodeRecord(me, "Component", pom.sub(label) or label,
                                    line=root.child("artifactId").line, attributes=attrs,
                                    aliases=tuple({pom.artifact} - {label, None})))

        def edge(entry: Element, qualifiers: tuple[str, ...], default_group: str | None = None,
                 object_type: str = "Library") -> None:
            group = pom.sub(entry.value("groupId") or default_group)
            artifact = pom.sub(entry.value("artifactId"))
            at = (entry.child("artifactId") or entry).line
            if out.full(src.doc_id, at):
                return
            if not group or not artifact or "${" in group + artifact:
                warn(f"<{entry.tag}> {brief(group)}:{brief(artifact)}: no groupId and "
                     f"artifactId to name it; skipped", at)
                return
            try:
                target = maven_purl(group, artifact)
            except ValueError as exc:
                warn(f"<{entry.tag}>: {exc}; skipped", at)
                return
            version = pom.sub(entry.value("version"))
            evidence = f"{group}:{artifact}" + (f":{version}" if version else "")
            record = depends_on(me, target, f"{group}:{artifact}", clip(evidence), line=at,
                                qualifiers=qualifiers)
            record.object_type = object_type
            out.edges.append(record)

        if pom.parent is not None:
            edge(pom.parent, ("parent",), object_type="Component")
        deps = root.child("dependencies")
        for dep in deps.all("dependency") if deps is not None else ():
            qualifiers = tuple(q for q in (
                f"scope:{dep.value('scope')}" if dep.value("scope") else "",
                "optional" if (dep.value("optional") or "").lower() == "true" else "") if q)
            edge(dep, qualifiers)
        managed = root.child("dependencyManagement")
        managed = managed.child("dependencies") if managed is not None else None
        for dep in managed.all("dependency") if managed is not None else ():
            if (dep.value("scope") or "") == "import":
                edge(dep, ("scope:import",), object_type="Component")
        build = root.child("build")
        plugins = build.child("plugins") if build is not None else None
        for plugin in plugins.all("plugin") if plugins is not None else ():
            edge(plugin, ("plugin",), default_group="org.apache.maven.plugins")
        self._modules(src, ctx, root, me, out, warn)
        return out

    def _modules(self, src: SourceFile, ctx: Context, root: Element, me: str,
                 out: Extraction, warn) -> None:
        modules = root.child("modules")
        for module in (modules.all("module") if modules is not None else ())[:MAX_MODULES]:
            rel = module.text.strip()
            if not rel or rel.startswith("/") or ".." in rel.split("/")[1:]:
                warn(f"<module> {brief(rel)} is not a relative folder; skipped", module.line)
                continue
            path = src.path.parent / rel
            path = path if path.name.endswith(".xml") else path / "pom.xml"
            out.depends.append(path)
            try:
                if src.root.resolve() not in path.resolve().parents:
                    raise InputError("outside the scanned root", src.doc_id)
                child = parse_xml(path, ctx.max_file_bytes, src.doc_id_of(path))
            except (InputError, OSError):
                continue  # its own extraction reports it
            if not is_pom(child) or out.full(src.doc_id, module.line):
                continue
            sub = _Pom(child)
            target = sub.coordinates()
            if target is None:
                continue
            out.edges.append(EdgeRecord(target, "partOf", me, line=module.line,
                                        evidence=f"<module>{clip(rel, 200)}</module>",
                                        subject_type="Component", object_type="Component",
                                        subject_label=child.value("name") or sub.artifact))


register(MavenPomExtractor())
