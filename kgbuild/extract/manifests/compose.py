"""Docker Compose files: services as Service nodes, ``depends_on``/``links`` as ``dependsOn``.

Service IDs are scoped to the Compose project, ``compose:<project>/<service>``, where the
project is the top-level ``name:`` or, as Compose itself does, the file's directory name
lowercased with characters outside ``[a-z0-9_-]`` dropped. Files of one project (e.g.
``docker-compose.yml`` and an override beside it) describe the same services; two projects
with a ``db`` service do not merge. ``depends_on`` is read in list and map form (the map's
``condition``/``required`` join the evidence); ``image`` and the build context are kept.
Evidence is the entry that names the dependency (its line when that line names nothing
else), never a whole long line.
"""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path

from ...errors import Problem
from ...io.text import brief, one_line
from ...io.yamlfile import YamlSource, YMap, load_yaml
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import read_parsed

PATTERNS = ("docker-compose*.yml", "docker-compose*.yaml", "compose*.yml", "compose*.yaml")


def project_name(top: dict, path: Path) -> str:
    """The Compose project: top-level ``name`` or the normalised directory name."""
    name = top.get("name")
    if isinstance(name, str) and name.strip() and "$" not in name:
        return name.strip()
    return re.sub(r"[^a-z0-9_-]", "", path.resolve().parent.name.lower()) or "default"


def service_id(project: str, service: str) -> str:
    return f"compose:{project}/{service}"


class ComposeExtractor:
    name = "compose"
    version = 2  # 2: evidence is the entry (not its whole line), CODEOWNERS evidence one owner
    emits = frozenset({"Service", "dependsOn", "ownedBy"})
    ownable = True  # the services of a compose project are the repository's own; it names no owner

    def claims(self, path: Path, head: bytes) -> bool:
        return any(fnmatch(path.name.lower(), p) for p in PATTERNS)

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, load_yaml)
        if isinstance(parsed, Extraction):
            return parsed
        docs = parsed[1]
        top = docs[0].data if docs else None
        services = top.get("services") if isinstance(top, YMap) else None
        if not isinstance(services, YMap):
            return Extraction(problems=[Problem("error", "not-compose",
                                                "no 'services' mapping: not a Compose file",
                                                src.doc_id, getattr(top, "line", 1))])
        source = docs[0].source
        project = project_name(top, src.path)
        out = Extraction()
        for name, spec in services.items():
            line = services.line_of(name)
            if out.full(src.doc_id, line):
                break
            if not isinstance(spec, YMap):
                out.problems.append(Problem("warning", "bad-service",
                                            f"service {brief(name)} is not a mapping; skipped",
                                            src.doc_id, line))
                continue
            out.nodes.append(NodeRecord(service_id(project, str(name)), "Service", str(name),
                                        line=line, attributes=_attributes(spec)))
            for target, at, evidence in _dependencies(spec, src.doc_id, out.problems, source):
                if out.full(src.doc_id, at):
                    break
                if target not in services:
                    out.problems.append(Problem("warning", "unknown-service",
                                                f"service {brief(name)} depends on undefined service "
                                                f"{brief(target)}", src.doc_id, at))
                out.edges.append(EdgeRecord(
                    service_id(project, str(name)), "dependsOn", service_id(project, target),
                    line=at, evidence=evidence,
                    subject_type="Service", object_type="Service", object_label=target))
        return out


def _attributes(spec: YMap) -> dict[str, str]:
    attrs = {}
    if isinstance(spec.get("image"), str):
        attrs["image"] = spec["image"]
    build = spec.get("build")
    context = build.get("context") if isinstance(build, dict) else build
    if isinstance(context, str):
        attrs["buildContext"] = context
    return attrs


def _dependencies(spec: YMap, doc_id: str, problems: list[Problem], source: YamlSource):
    """``(target service, line, evidence)`` for each ``depends_on``/``links`` entry."""
    for key in ("depends_on", "links"):
        deps = spec.get(key)
        if isinstance(deps, list):
            for i, item in enumerate(deps):
                if isinstance(item, str) and item.strip():
                    yield item.split(":")[0].strip() if key == "links" else item.strip(), \
                        deps.line_of(i), source.evidence(deps, i)
                else:
                    problems.append(Problem("warning", "bad-depends-on",
                                            f"{key} entry {brief(item)} is not a service name; skipped",
                                            doc_id, deps.line_of(i)))
        elif isinstance(deps, YMap) and key == "depends_on":
            for target, opts in deps.items():
                if isinstance(opts, dict):  # the service's key and the options that qualify it
                    extra = "".join(f" {k}: {str(v).lower() if isinstance(v, bool) else v}"
                                    for k, v in opts.items()
                                    if k in ("condition", "required", "restart"))
                    evidence = one_line(f"{str(target)[:400]}:{extra}")
                else:
                    evidence = source.evidence(deps, target)
                yield str(target), deps.line_of(target), evidence
        elif deps is not None:
            problems.append(Problem("warning", "bad-depends-on", f"{key} must be a list"
                                    f"{' or a mapping' if key == 'depends_on' else ''}; skipped",
                                    doc_id, spec.line_of(key)))


register(ComposeExtractor())
