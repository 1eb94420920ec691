"""Helm charts: ``Chart.yaml`` (and a Helm 2 chart's ``requirements.yaml``).

The chart is a Component ``helm:<name>`` (specType ``helm-chart``, its ``version`` and
``description``); each entry of ``dependencies`` is a ``dependsOn`` edge to the chart
``helm:<name>`` it names, at the entry's line, its evidence the entry's name, version range
and repository; qualifiers ``condition:<value>`` and ``alias:<alias>`` say when and as what
the subchart is used. Charts are named by name alone, as ``helm dependency`` matches them.

Rendered output (``helm template ... > rendered.yaml``) is Kubernetes manifests: the
:mod:`.kubernetes` extractor reads it and ties every object to its chart through the
``# Source:`` comments Helm writes.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import InputError, Problem
from ...io.text import brief, one_line, read_text
from ...io.yamlfile import YList, YMap, load_yaml
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import read_parsed

_CHART_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


def chart_id(name: str) -> str:
    return f"helm:{name}"


class HelmChartExtractor:
    name = "helm"
    version = 1
    emits = frozenset({"Component", "dependsOn", "ownedBy"})
    ownable = True  # a chart in a repository is its own; maintainers are people, not owners

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "Chart.yaml" or (
            path.name == "requirements.yaml" and (path.parent / "Chart.yaml").is_file())

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, load_yaml)
        if isinstance(parsed, Extraction):
            return parsed
        docs = parsed[1]
        top = docs[0].data if docs else None
        out = Extraction()
        if src.path.name == "requirements.yaml":
            chart = self._chart_of(src, ctx, out)
            if chart is None or not isinstance(top, YMap):
                return out
            me, line = chart, None
        else:
            if not isinstance(top, YMap) or not isinstance(top.get("name"), str) \
                    or not _CHART_NAME.match(top["name"].strip()):
                return Extraction(problems=[Problem(
                    "error", "bad-chart", f"Chart.yaml without a valid chart name "
                    f"({brief(top.get('name') if isinstance(top, YMap) else top)})", src.doc_id,
                    top.line_of("name") if isinstance(top, YMap) else 1)])
            name = top["name"].strip()
            me, line = chart_id(name), top.line_of("name")
            attrs = {"specType": "helm-chart"}
            for key in ("version", "description"):
                if isinstance(top.get(key), (str, int, float)) and not isinstance(top[key], bool):
                    attrs[key] = str(top[key])
            attrs = {k: v for k, v in attrs.items() if k in ctx.schema.attributes}
            out.nodes.append(NodeRecord(me, "Component", name, line=line, attributes=attrs))
        deps = top.get("dependencies")
        if deps is None:
            return out
        if not isinstance(deps, YList):
            out.problems.append(Problem("warning", "bad-chart", "dependencies is not a list; "
                                        "skipped", src.doc_id, top.line_of("dependencies")))
            return out
        for i, dep in enumerate(deps):
            at = deps.line_of(i)
            if out.full(src.doc_id, at):
                break
            name = dep.get("name") if isinstance(dep, YMap) else None
            if not isinstance(name, str) or not _CHART_NAME.match(name.strip()):
                out.problems.append(Problem("warning", "bad-chart", f"dependency {i + 1}: no "
                                            f"valid chart name ({brief(name)}); skipped",
                                            src.doc_id, at))
                continue
            name = name.strip()
            parts = [f"{k}: {dep[k]}" for k in ("name", "version", "repository")
                     if isinstance(dep.get(k), (str, int, float))]
            qualifiers = tuple(f"{k}:{dep[k]}" for k in ("condition", "alias")
                               if isinstance(dep.get(k), str) and dep[k].strip())
            out.edges.append(EdgeRecord(me, "dependsOn", chart_id(name),
                                        line=dep.line_of("name"),
                                        evidence=one_line(", ".join(parts)),
                                        subject_type="Component", object_type="Component",
                                        object_label=name, qualifiers=qualifiers))
        return out

    def _chart_of(self, src: SourceFile, ctx: Context, out: Extraction) -> str | None:
        """The chart a Helm 2 ``requirements.yaml`` belongs to (its ``Chart.yaml``'s name)."""
        chart = src.path.parent / "Chart.yaml"
        out.depends.append(chart)
        try:
            docs = load_yaml(read_text(chart, ctx.max_file_bytes, "Chart.yaml"), "Chart.yaml")
        except InputError:
            return None  # Chart.yaml's own extraction reports it
        top = docs[0].data if docs else None
        name = top.get("name") if isinstance(top, YMap) else None
        return chart_id(name.strip()) if isinstance(name, str) and _CHART_NAME.match(
            name.strip()) else None


register(HelmChartExtractor())
