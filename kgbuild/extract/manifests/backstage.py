"""Backstage catalog descriptor files (``catalog-info.yaml`` and friends).

Same relation semantics as Backstage's ``BuiltinKindsEntityProcessor`` and the scaffolder's
Template processor: the field → relation table below, refs parsed by :mod:`kgbuild.graph.refs`
with the field's default kind and the referencing entity's namespace. An entity Backstage would
reject (invalid envelope, unknown kind, missing required spec field, a ref without kind where
the field has no default) is reported with its file and line and yields nothing.

The same entity read from a running Backstage's catalog API (:func:`extract_entity`: JSON,
placeholders already resolved and Location targets already read by Backstage) goes through
the same checks and gives the same relations, each located by the JSON pointer of the entry
stating it instead of a line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...errors import DuplicateKeyError, InputError, KgbuildError, Problem, RefError
from ...graph.refs import is_valid_kind, is_valid_name, is_valid_namespace, parse_ref
from ...io.text import brief, clip, file_kind, is_regular, read_text, resolved
from ...io.yamlfile import YamlSource, YList, YMap, load_yaml
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .openapi import parse_api_spec, read_api_spec
from .packages import input_problem, json_pointer

CORE_API = ("backstage.io/v1alpha1", "backstage.io/v1beta1")
API_VERSIONS = {
    "Component": CORE_API, "API": CORE_API, "Resource": CORE_API, "System": CORE_API,
    "Domain": CORE_API, "Group": CORE_API, "User": CORE_API, "Location": CORE_API,
    "Template": ("scaffolder.backstage.io/v1beta3",),
}
REQUIRED = {  # spec fields Backstage's JSON schemas require, with their JSON type
    "Component": {"type": str, "lifecycle": str, "owner": str},
    "API": {"type": str, "lifecycle": str, "owner": str, "definition": str},
    "Resource": {"type": str, "owner": str},
    "System": {"owner": str},
    "Domain": {"owner": str},
    "Group": {"type": str, "children": list},
    "User": {"memberOf": list},
    "Template": {"type": str, "steps": list},
    "Location": {},
}
# kind -> (spec field, default kind of the ref or None, relation as written, many?)
RELATIONS = {
    "Component": [("owner", "Group", "ownedBy", False), ("subcomponentOf", "Component", "partOf", False),
                  ("providesApis", "API", "providesApi", True), ("consumesApis", "API", "consumesApi", True),
                  ("dependsOn", None, "dependsOn", True), ("dependencyOf", None, "dependencyOf", True),
                  ("system", "System", "partOf", False)],
    "API": [("owner", "Group", "ownedBy", False), ("system", "System", "partOf", False)],
    "Resource": [("owner", "Group", "ownedBy", False), ("dependsOn", None, "dependsOn", True),
                 ("dependencyOf", None, "dependencyOf", True), ("system", "System", "partOf", False)],
    "User": [("memberOf", "Group", "memberOf", True)],
    "Group": [("parent", "Group", "childOf", False), ("children", "Group", "parentOf", True),
              ("members", "User", "hasMember", True)],
    "System": [("owner", "Group", "ownedBy", False), ("domain", "Domain", "partOf", False)],
    "Domain": [("owner", "Group", "ownedBy", False), ("subdomainOf", "Domain", "partOf", False)],
    "Template": [("owner", "Group", "ownedBy", False)],
    "Location": [],
}
# a custom kind a project schema declares (``extends: software`` adding e.g. AiResource): the
# relations every Backstage kind with an owner shares
CUSTOM_RELATIONS = [("owner", "Group", "ownedBy", False), ("system", "System", "partOf", False),
                    ("dependsOn", None, "dependsOn", True),
                    ("dependencyOf", None, "dependencyOf", True)]
NOT_KINDS = {"Service", "Library", "Website"}  # schema types that no Backstage kind names
# read as catalog descriptors by name, whatever their first bytes hold (a marker after a long
# comment, an encoding the sniffing missed): the name Backstage's docs and templates use
CATALOG_NAMES = {"catalog-info"}
COMPONENT_SUBTYPES = {"service": "Service", "library": "Library", "website": "Website"}
STRING_PLACEHOLDERS = {"$text", "$openapi", "$asyncapi"}
OBJECT_PLACEHOLDERS = {"$json", "$yaml"}
ACCESS_KEY = "kgbuild.dev/access"
_API_VERSION = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[a-z0-9]+$")
_TAG = re.compile(r"^[a-z0-9:+#]+(-[a-z0-9:+#]+)*$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


class Rejected(Exception):
    """Raised inside entity processing when Backstage would refuse the entity."""

    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class _File:
    """Where an entity read from a file is: the file (placeholders and Location targets are
    resolved against it) and its text (the quotes of entries)."""

    src: SourceFile
    text: YamlSource | None


def _line(container: object, key: object) -> int | None:
    """The line of ``key`` in a mapping or list read from YAML; None for JSON from the API."""
    return container.line_of(key) if isinstance(container, (YMap, YList)) else None


def _own_line(container: object) -> int | None:
    return container.line if isinstance(container, (YMap, YList)) else None


class BackstageExtractor:
    name = "backstage"
    version = 3  # 3: kinds a project schema declares are read (custom kinds)
    emits = frozenset({"Component", "Service", "Library", "Website", "API", "Resource", "System",
                       "Domain", "Group", "User", "Location", "Template", "ownedBy", "partOf",
                       "providesApi", "consumesApi", "dependsOn", "dependencyOf", "memberOf",
                       "childOf", "parentOf", "hasMember"})
    ownable = False  # Backstage requires an owner of every kind that can have one

    def claims(self, path: Path, head: bytes) -> bool:
        if path.suffix not in (".yaml", ".yml"):
            return False
        return path.stem.lower() in CATALOG_NAMES or (b"backstage.io/" in head and b"kind" in head)

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        out = Extraction()
        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
            docs = load_yaml(text, src.doc_id, per_document=True)
        except InputError as exc:
            out.problems.append(input_problem(exc))
            return out
        for doc in docs:
            if out.full(src.doc_id, doc.line):
                break
            if doc.error is not None:  # like Backstage: that entity is refused, the rest is read
                code = "rejected-entity" if isinstance(doc.error, DuplicateKeyError) else "bad-input"
                out.problems.append(Problem("error", code, doc.error.message, src.doc_id,
                                            doc.error.line))
                continue
            entity = doc.data
            if not isinstance(entity, YMap):
                out.problems.append(Problem("error", "rejected-entity",
                                            "YAML document is not a mapping; not a catalog entity",
                                            src.doc_id, doc.line))
                continue
            _read_entity(entity, src.doc_id, ctx, out, _File(src, doc.source))
        return out


def extract_entity(entity: object, doc_id: str, ctx: Context) -> Extraction:
    """One entity as a running Backstage's catalog API serves it (parsed JSON), as document
    ``doc_id``: the checks and relations of :class:`BackstageExtractor` for the same entity
    in a file. Backstage has already resolved its placeholders (an API's definition is its
    text) and read its Location targets (their entities are served too), so nothing is
    resolved or followed here; each record carries the JSON pointer of the entry stating it
    (``/spec/dependsOn/2``), and no line."""
    out = Extraction()
    if not isinstance(entity, dict):
        out.problems.append(Problem("error", "rejected-entity",
                                    f"not a JSON object ({type(entity).__name__}); not a "
                                    f"catalog entity", doc_id))
        return out
    _read_entity(entity, doc_id, ctx, out, None)
    return out


def _read_entity(entity: Mapping, doc_id: str, ctx: Context, out: Extraction,
                 file: _File | None) -> None:
    """One entity into ``out``, or the problem that makes Backstage refuse it."""
    try:
        _entity(entity, doc_id, ctx, out, file)
    except Rejected as exc:
        out.problems.append(Problem("error", "rejected-entity", str(exc), doc_id, exc.line))
    except KgbuildError as exc:  # e.g. a kind the chosen schema has no type for
        out.problems.append(Problem("error", "schema-mismatch", exc.message, doc_id,
                                    _line(entity, "kind")))


def _entity(e: Mapping, doc_id: str, ctx: Context, out: Extraction, file: _File | None) -> None:
    """The checks and records of one entity: from a file (``file``: lines, quotes, local
    placeholders and Location targets) or from the catalog API (``None``: JSON pointers)."""
    kind, api_version = e.get("kind"), e.get("apiVersion")
    meta = e.get("metadata")
    if not isinstance(api_version, str) or not _API_VERSION.match(api_version):
        raise Rejected(f"apiVersion {brief(api_version)} is not of the form group/version", _line(e, "apiVersion"))
    if not is_valid_kind(kind):
        raise Rejected(f"invalid kind {brief(kind)}", _line(e, "kind"))
    custom = kind not in API_VERSIONS and _custom_kind(kind, ctx)
    if kind not in API_VERSIONS and not custom:
        raise Rejected(f"unknown kind {brief(kind)}: no Backstage processor accepts it and schema "
                       f"{ctx.schema.name!r} has no such type (a project schema that extends "
                       f"the bundled one can declare it)", _line(e, "kind"))
    if not custom and api_version not in API_VERSIONS[kind]:
        raise Rejected(f"kind {kind} does not support apiVersion {brief(api_version)} "
                       f"(expected {' or '.join(API_VERSIONS[kind])})", _line(e, "apiVersion"))
    if not isinstance(meta, dict):
        raise Rejected("metadata is missing or not a mapping", _line(e, "metadata") if "metadata" in e else _own_line(e))
    name, namespace = meta.get("name"), meta.get("namespace", "default")
    if not is_valid_name(name):
        raise Rejected(f"invalid metadata.name {brief(name)}: 1-63 characters of [a-zA-Z0-9] "
                       f"separated by [-_.]", _line(meta, "name"))
    if not is_valid_namespace(namespace):
        raise Rejected(f"invalid metadata.namespace {brief(namespace)}", _line(meta, "namespace"))
    _check_metadata(meta)
    spec = e.get("spec", YMap())
    if kind != "Location" and not custom and "spec" not in e:
        raise Rejected(f"{kind} {brief(name)} has no spec", _own_line(e))
    if not isinstance(spec, dict):
        raise Rejected("spec is not a mapping", _line(e, "spec"))
    local_specs = _resolve_placeholders(spec, file.src, ctx, out) if file else {}
    for field, typ in REQUIRED.get(kind, {}).items():
        if field not in spec:
            raise Rejected(f"{kind} {brief(name)} is missing required spec.{field}", _line(spec, field) if spec else _own_line(e))
        if not isinstance(spec[field], typ) or (typ is str and not spec[field]):
            what = "a non-empty string" if typ is str else "a list"
            raise Rejected(f"spec.{field} of {kind} {brief(name)} must be {what}", _line(spec, field))
    if kind == "Location":
        targets = _location_targets(spec, name)
        if file:  # from the API: Backstage read the targets (it serves their entities)
            _follow(targets, file.src, ctx, out, name)

    self_ref = parse_ref(f"{kind}:{namespace}/{name}")
    self_id = str(self_ref)
    edges = []
    for field, default_kind, relation, many in RELATIONS.get(kind, CUSTOM_RELATIONS):
        if field not in spec or spec[field] is None:
            continue
        values = spec[field]
        if many and not isinstance(values, list):
            raise Rejected(f"spec.{field} must be a list of entity references", _line(spec, field))
        items = list(enumerate(values)) if many else [(field, values)]
        for index, value in items:
            line = _line(values, index) if many else _line(spec, field)
            try:
                target = parse_ref(value, default_kind, namespace)
            except RefError as exc:
                raise Rejected(f"spec.{field}: {exc}", line) from None
            pointer = json_pointer("spec", field, index) if many else json_pointer("spec", field)
            edges.append((relation, target, line, values if many else spec, index,
                          (pointer, f"{field}: {value}")))

    access = _access_labels(meta)
    node_type = _node_type(kind, spec.get("type"), ctx)
    attrs = {"namespace": namespace, "description": meta.get("description"),
             "title": meta.get("title"), "lifecycle": spec.get("lifecycle"),
             "specType": spec.get("type") if isinstance(spec.get("type"), str) else None,
             "tag": [t for t in meta.get("tags") or [] if isinstance(t, str)]}
    profile = spec.get("profile")
    if isinstance(profile, dict) and isinstance(profile.get("email"), str):
        attrs["email"] = profile["email"]
    if kind == "API" and "definition" in local_specs:
        attrs.update(_spec_attributes(local_specs["definition"], file.src, ctx, out))
    elif kind == "API" and file is None:
        attrs.update(_definition_attributes(spec["definition"], doc_id, ctx))
    attrs = {k: v for k, v in attrs.items() if v and k in ctx.schema.attributes}
    label = meta.get("title") if isinstance(meta.get("title"), str) and meta.get("title") else name
    if isinstance(profile, dict) and isinstance(profile.get("displayName"), str) and not meta.get("title"):
        label = profile["displayName"]
    out.nodes.append(NodeRecord(self_id, node_type, label, _line(meta, "name"),
                                None if file else "/metadata/name", attributes=attrs,
                                aliases=tuple(sorted({name, label} - {self_id})), access=access))
    for relation, target, line, container, key, (pointer, entry) in edges:
        if out.full(doc_id, line):
            break
        try:
            target_type = ctx.schema.node_type(target.kind).name
        except Exception:
            out.problems.append(Problem("warning", "unknown-kind",
                                        f"{self_id}: relation {relation} to {target} skipped: kind "
                                        f"{brief(target.kind)} is not a type of schema {ctx.schema.name!r}",
                                        doc_id, line))
            continue
        # the entry stating the relation (its line when it states nothing else), never a
        # whole long line: one-line lists of thousands of refs stay linear; from the API, the
        # entry as a catalog file would write it, and its JSON pointer
        if file is None:
            evidence = entry
        else:
            evidence = file.text.evidence(container, key) if file.text is not None else None
            pointer = None
        out.edges.append(EdgeRecord(self_id, relation, str(target), line=line, pointer=pointer,
                                    evidence=evidence, subject_type=node_type,
                                    object_type=target_type, object_label=target.name.lower(),
                                    access=access))


def _custom_kind(kind: str, ctx: Context) -> bool:
    """Whether the schema declares a type named ``kind`` (case as written: Backstage's kinds
    are case-sensitive) that Backstage's own kinds do not cover: the project reads a custom
    kind."""
    return kind in ctx.schema.node_types and kind not in NOT_KINDS \
        and kind.lower() not in {k.lower() for k in API_VERSIONS}


def _node_type(kind: str, spec_type: object, ctx: Context) -> str:
    if kind == "Component" and isinstance(spec_type, str):
        sub = COMPONENT_SUBTYPES.get(spec_type.lower())
        if sub and sub in ctx.schema.node_types:
            return sub
    return ctx.schema.node_type(kind).name


def _check_metadata(meta: Mapping) -> None:
    for key in ("title", "description"):
        if key in meta and not isinstance(meta[key], str):
            raise Rejected(f"metadata.{key} must be a string", _line(meta, key))
    tags = meta.get("tags", [])
    if not isinstance(tags, list):
        raise Rejected("metadata.tags must be a list", _line(meta, "tags"))
    for i, tag in enumerate(tags):
        if not (isinstance(tag, str) and 1 <= len(tag) <= 63 and _TAG.match(tag)):
            raise Rejected(f"invalid tag {brief(tag)}: lowercase [a-z0-9:+#] words joined by '-'",
                           tags.line_of(i) if isinstance(tags, YList) else _line(meta, "tags"))
    for field in ("labels", "annotations"):
        values = meta.get(field, {})
        if not isinstance(values, dict):
            raise Rejected(f"metadata.{field} must be a mapping", _line(meta, field))
        for key, value in values.items():
            line = values.line_of(key) if isinstance(values, YMap) else _line(meta, field)
            if not _valid_key(key):
                raise Rejected(f"invalid metadata.{field} key {brief(key)}", line)
            if not isinstance(value, str):
                raise Rejected(f"metadata.{field}.{key} must be a string", line)
            if field == "labels" and value and not is_valid_name(value):
                raise Rejected(f"invalid label value {brief(value)} for {brief(key)}", line)


def _valid_key(key: object) -> bool:
    if not isinstance(key, str):
        return False
    prefix, _, name = key.rpartition("/")
    if prefix and not (len(prefix) <= 253 and _DNS_SUBDOMAIN.match(prefix)):
        return False
    return is_valid_name(name)


def _access_labels(meta: Mapping) -> frozenset[str]:
    labels = set()
    for field in ("labels", "annotations"):
        value = (meta.get(field) or {}).get(ACCESS_KEY)
        if isinstance(value, str):
            labels.update(x.strip() for x in value.split(",") if x.strip())
    return frozenset(labels)


def _spec_attributes(path: Path, src: SourceFile, ctx: Context, out: Extraction) -> dict:
    """Title, version and definition source of a local spec an API's definition points at."""
    out.depends.append(path)
    attrs = {"definitionSource": src.doc_id_of(path)}
    try:
        spec = read_api_spec(path, ctx.max_file_bytes)
    except InputError:
        return attrs  # $text may hold any text: still a valid definition
    attrs.update({"version": spec["version"], "specVersion": spec["specVersion"]})
    return attrs


def _definition_attributes(text: str, doc_id: str, ctx: Context) -> dict:
    """Version and spec version of an API's definition as the catalog API serves it (the text
    Backstage resolved its placeholder to); nothing when it is no OpenAPI/AsyncAPI spec."""
    if len(text) > ctx.max_file_bytes:
        return {}
    try:
        spec = parse_api_spec(text, doc_id, text.lstrip().startswith("{"))
    except InputError:
        return {}  # any text is a valid definition
    return {"version": spec["version"], "specVersion": spec["specVersion"]}


def _resolve_placeholders(value: object, src: SourceFile, ctx: Context, out: Extraction) -> dict[object, Path]:
    """Resolve ``$text``-style placeholders in place, as Backstage's PlaceholderProcessor does;
    returns the local files resolved, by the key that held the placeholder."""
    local: dict[object, Path] = {}
    if isinstance(value, YList):
        items = list(enumerate(value))
    elif isinstance(value, YMap):
        items = list(value.items())
    else:
        return local
    for key, child in items:
        if isinstance(child, YMap) and len(child) == 1 and str(next(iter(child))).startswith("$"):
            placeholder, target = next(iter(child.items()))
            line = child.line_of(placeholder)
            if placeholder not in STRING_PLACEHOLDERS | OBJECT_PLACEHOLDERS:
                raise Rejected(f"unknown placeholder {placeholder}", line)
            if not isinstance(target, str) or not target:
                raise Rejected(f"placeholder {placeholder} needs a URL or relative path", line)
            if placeholder in OBJECT_PLACEHOLDERS:
                resolved: object = {"$resolved": placeholder}
            elif _URL.match(target):
                out.problems.append(Problem("warning", "not-fetched",
                                            f"{placeholder} {clip(target, 200)} is a URL; kgbuild never fetches, "
                                            f"the definition is taken as text", src.doc_id, line))
                resolved = target
            else:
                path = _local_target(target, src, ctx, line)
                if not is_regular(path):
                    what = _not_a_file(path)
                    raise Rejected(f"{placeholder} target {clip(target, 200)} {what}", line)
                resolved = target
                local[key] = path
            value[key] = resolved
        else:
            _resolve_placeholders(child, src, ctx, out)
    return local


def _local_target(target: str, src: SourceFile, ctx: Context, line: int) -> Path:
    """A relative target resolved against the referring file, refused if it leaves the root."""
    rel = target[len("file:"):] if target.startswith("file:") else target
    try:
        path = resolved(src.path.parent / PurePosixPath(rel))
    except OSError as exc:
        raise Rejected(f"target {clip(target, 200)} cannot be resolved: {exc.strerror}", line) from None
    root = src.root.resolve()
    if path != root and root not in path.parents:
        raise Rejected(f"target {clip(target, 200)} escapes the scanned root {src.root}", line)
    return path


def _not_a_file(path: Path) -> str:
    """Why a target that is not a regular file cannot be read, in words."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return "does not exist"
    return f"is {file_kind(mode)}, not a regular file"


def _location_targets(spec: Mapping, name: str) -> list[tuple[str, int | None]]:
    """A Location's targets with their lines; refused unless each is a non-empty string."""
    targets: list[tuple[object, int | None]] = []
    if "target" in spec:
        targets.append((spec["target"], _line(spec, "target")))
    if "targets" in spec:
        if not isinstance(spec["targets"], list):
            raise Rejected("spec.targets must be a list", _line(spec, "targets"))
        targets += [(t, _line(spec["targets"], i)) for i, t in enumerate(spec["targets"])]
    for target, line in targets:
        if not isinstance(target, str) or not target:
            raise Rejected(f"Location {brief(name)}: target must be a non-empty string", line)
    return targets


def _follow(targets: list[tuple[str, int | None]], src: SourceFile, ctx: Context,
            out: Extraction, name: str) -> None:
    """Follow a Location file's targets inside the scanned root; report the others."""
    for target, line in targets:
        if _URL.match(target):
            out.problems.append(Problem("warning", "not-fetched",
                                        f"Location {brief(name)} target {clip(target, 200)} is a URL; not fetched",
                                        src.doc_id, line))
            continue
        try:
            path = _local_target(target, src, ctx, line)
        except Rejected as exc:
            out.problems.append(Problem("warning", "target-outside-root", str(exc), src.doc_id, line))
            continue
        if not is_regular(path):
            what = _not_a_file(path)
            code = "missing-target" if what == "does not exist" else "not-a-regular-file"
            out.problems.append(Problem("warning", code,
                                        f"Location {brief(name)} target {clip(target, 200)} {what}",
                                        src.doc_id, line))
            continue
        out.follow.append(path)


register(BackstageExtractor())
