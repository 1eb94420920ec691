"""Lock files: npm ``package-lock.json`` (v1-v3), ``pnpm-lock.yaml`` (v5-v9), ``yarn.lock``
(v1 and Berry), ``poetry.lock`` and ``uv.lock``.

A lock file belongs to the project of its folder: its Component has the ID the manifest
beside it gives (``package.json``'s package, the folder's Python project), so the manifest's
and the lock's edges meet on one node. For every package the lock installs:

* the package is a Library (version-less purl) whose ``resolvedVersion`` attribute holds the
  version(s) this lock resolves it to;
* the project ``dependsOn`` it, qualified ``direct`` (the project's manifest names it: the
  lock's own root entry where it has one, else the manifest beside it) or ``transitive``,
  plus ``resolved:<version>`` and what the lock says of it (``dev``, ``optional``, ``peer``;
  the manifest's section for direct ones);
* the package ``dependsOn`` each package its lock entry lists (the transitive chain).

Every edge sits at the line (JSON: and pointer) of the lock entry that states it.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path, PurePosixPath

from ...errors import InputError, Problem
from ...io.text import brief, clip, read_text, split_lines
from ...io.yamlfile import YMap, load_yaml
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import input_problem, json_lines, json_pointer, parse_json, parse_toml, read_parsed
from .purl import npm_purl, pypi_purl

NPM_SECTIONS = {"dependencies": (), "devDependencies": ("dev",),
                "optionalDependencies": ("optional",), "peerDependencies": ("peer",)}


class LockReader:
    """What every lock reader shares: the project node, package nodes and the three kinds of
    edge, bounded by :meth:`Extraction.full`."""

    def __init__(self, src: SourceFile, ctx: Context, ecosystem):
        self.src, self.ctx, self.purl = src, ctx, ecosystem
        self.doc_id = src.doc_id
        self.out = Extraction()
        self.project: NodeRecord | None = None
        self.direct: dict[str, tuple[str, ...]] = {}  # normalised name -> qualifiers

    def warn(self, message: str, line: int | None) -> None:
        self.out.problems.append(Problem("warning", "bad-lockfile", message, self.doc_id, line))

    def set_project(self, node: NodeRecord) -> None:
        node.attributes = {k: v for k, v in node.attributes.items()
                           if k in self.ctx.schema.attributes}
        self.project = node
        self.out.nodes.append(node)

    def key(self, name: str) -> str | None:
        try:
            return self.purl(name)
        except ValueError:
            return None

    def package(self, name: str, version: object, line: int | None, pointer: str | None = None,
                qualifiers: tuple[str, ...] = (), direct: bool | None = None,
                evidence: str | None = None) -> str | None:
        """Record one installed package and the project's edge to it; its ID, or None."""
        if self.out.full(self.doc_id, line):
            return None
        try:
            purl = self.purl(name)
        except ValueError as exc:
            self.warn(f"package {brief(name)}: {exc}; skipped", line)
            return None
        version = str(version) if isinstance(version, (str, int, float)) and not isinstance(
            version, bool) else ""
        attrs: dict = {"purl": purl}
        if version:
            attrs["resolvedVersion"] = [version]
        attrs = {k: v for k, v in attrs.items() if k in self.ctx.schema.attributes}
        self.out.nodes.append(NodeRecord(purl, "Library", name, line=line, pointer=pointer,
                                         attributes=attrs))
        if self.project is None or purl == self.project.id or self.out.full(self.doc_id, line):
            return purl
        if direct is None:
            direct = purl in self.direct
        how = ("direct", *self.direct.get(purl, ())) if direct else ("transitive",)
        extra = tuple(q for q in qualifiers if q not in how)
        self.out.edges.append(EdgeRecord(
            self.project.id, "dependsOn", purl, line=line, pointer=pointer,
            evidence=clip(evidence or f"{name} {version}".strip()),
            subject_type="Component", object_type="Library", object_label=name,
            qualifiers=(*how, *extra, *((f"resolved:{version}",) if version else ()))))
        return purl

    def link(self, subject: str, name: str, line: int | None, evidence: str,
             pointer: str | None = None, qualifiers: tuple[str, ...] = (),
             subject_type: str = "Library") -> None:
        """The locked package ``subject`` depends on the package ``name``."""
        if self.out.full(self.doc_id, line):
            return
        target = self.key(name)
        if target is None:
            self.warn(f"dependency {brief(name)} is not a valid package name; skipped", line)
            return
        if target == subject or (subject_type == "Library" and self.project is not None
                                 and subject == self.project.id):
            return  # a published copy of the project itself: its needs are not the project's
        self.out.edges.append(EdgeRecord(subject, "dependsOn", target, line=line,
                                         pointer=pointer, evidence=clip(evidence),
                                         subject_type=subject_type, object_type="Library",
                                         object_label=name, qualifiers=qualifiers))


# -- npm ----------------------------------------------------------------------------------------
def npm_project(src: SourceFile, ctx: Context, root: dict | None, out: Extraction
                ) -> tuple[NodeRecord, dict[str, tuple[str, ...]], dict[str, set[str]]]:
    """The package.json project beside a lock file (its node as the npm extractor makes it),
    its direct dependencies by purl and the version ranges it asks for them; the lock's root
    entry fills in when it is missing."""
    from .npm import _own_node  # the one rule for a package.json's node

    manifest = src.path.parent / "package.json"
    out.depends.append(manifest)
    data: dict | None = None
    try:
        data = parse_json(read_text(manifest, ctx.max_file_bytes, "package.json"), "package.json")
    except InputError:
        data = None  # missing, or its own extraction reports it
    if not isinstance(data, dict):
        data = dict(root or {})
        doc = src.doc_id_of(manifest) if manifest.parent.exists() else src.doc_id
    else:
        doc = src.doc_id_of(manifest)
    if not isinstance(data.get("name"), str):
        data = {**data, "name": PurePosixPath(src.doc_id).parent.name or "package",
                "private": True}
    node = _own_node(data, doc, {}, [])
    node.line, node.pointer = None, None
    direct: dict[str, tuple[str, ...]] = {}
    ranges: dict[str, set[str]] = {}
    for source in (root or {}, data):
        for section, qualifiers in NPM_SECTIONS.items():
            deps = source.get(section)
            for name in deps if isinstance(deps, dict) else ():
                try:
                    purl = npm_purl(name)
                except ValueError:
                    continue
                direct.setdefault(purl, qualifiers)
                if isinstance(deps[name], str):
                    ranges.setdefault(purl, set()).add(deps[name])
    return node, direct, ranges


class NpmLockExtractor:
    name = "npm-lock"
    version = 1
    emits = frozenset({"Component", "Library", "dependsOn"})
    ownable = False  # the lock describes the project its package.json defines (and CODEOWNERS owns)

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name in ("package-lock.json", "npm-shrinkwrap.json")

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, parse_json)
        if isinstance(parsed, Extraction):
            return parsed
        text, data = parsed
        if not isinstance(data, dict):
            return Extraction(problems=[Problem("error", "bad-lockfile", "not a JSON object: "
                                                "not an npm lock file", src.doc_id, 1)])
        lines = json_lines(text)
        r = LockReader(src, ctx, npm_purl)
        packages = data.get("packages")
        root = packages.get("") if isinstance(packages, dict) else None
        node, r.direct, _ = npm_project(src, ctx, root if isinstance(root, dict) else data,
                                        r.out)
        r.set_project(node)
        if isinstance(packages, dict):
            self._packages(r, packages, lines)
        elif isinstance(data.get("dependencies"), dict):  # lockfileVersion 1
            self._tree(r, data["dependencies"], ("dependencies",), lines, top=True)
        else:
            r.warn("neither 'packages' nor 'dependencies': nothing locked", 1)
        return r.out

    def _packages(self, r: LockReader, packages: dict, lines: dict[str, int]) -> None:
        for key, entry in packages.items():
            if key == "" or not isinstance(key, str):
                continue
            ptr = json_pointer("packages", key)
            if not isinstance(entry, dict):
                r.warn(f"{ptr}: not an object; skipped", lines.get(ptr))
                continue
            if "node_modules/" not in key or entry.get("link") is True:
                continue  # a workspace folder or a link to one: the project's own code
            name = entry.get("name") if isinstance(entry.get("name"), str) else \
                key.rsplit("node_modules/", 1)[1]
            flags = tuple(f for f in ("dev", "optional", "peer") if entry.get(f) is True)
            if entry.get("devOptional") is True:
                flags += ("dev", "optional")
            top = key == f"node_modules/{name}"
            purl = r.package(name, entry.get("version"), lines.get(ptr), ptr, flags,
                             direct=top and r.key(name) in r.direct,
                             evidence=f'"{key}": "{entry.get("version", "")}"')
            if purl is None:
                continue
            for section in ("dependencies", "optionalDependencies", "peerDependencies"):
                deps = entry.get(section)
                for dep, spec in (deps.items() if isinstance(deps, dict) else ()):
                    dptr = json_pointer("packages", key, section, dep)
                    r.link(purl, dep, lines.get(dptr), f'"{dep}": "{spec}"', dptr,
                           NPM_SECTIONS.get(section, ()))

    def _tree(self, r: LockReader, deps: dict, path: tuple, lines: dict[str, int],
              top: bool) -> None:
        stack = [(deps, path, top)]
        while stack:
            level, path, top = stack.pop()
            for name, entry in level.items():
                ptr = json_pointer(*path, name)
                if not isinstance(entry, dict):
                    r.warn(f"{ptr}: not an object; skipped", lines.get(ptr))
                    continue
                flags = tuple(f for f in ("dev", "optional") if entry.get(f) is True)
                purl = r.package(name, entry.get("version"), lines.get(ptr), ptr, flags,
                                 direct=top and r.key(name) in r.direct,
                                 evidence=f'"{name}": {{"version": "{entry.get("version", "")}"')
                if purl is None:
                    continue
                requires = entry.get("requires")
                for dep, spec in (requires.items() if isinstance(requires, dict) else ()):
                    dptr = json_pointer(*path, name, "requires", dep)
                    r.link(purl, dep, lines.get(dptr), f'"{dep}": "{spec}"', dptr)
                if isinstance(entry.get("dependencies"), dict):
                    stack.append((entry["dependencies"], (*path, name, "dependencies"), False))


# -- pnpm ---------------------------------------------------------------------------------------
_PEER = re.compile(r"\(.*$")
_PNPM_V5 = re.compile(r"^((?:@[^/@]+/)?[^/@]+)/([0-9][^/_(]*)(?:_.*)?$")


def pnpm_key(key: str) -> tuple[str, str] | None:
    """(name, version) of a pnpm ``packages``/``snapshots`` key: ``/name@1.0.0`` (v6),
    ``name@1.0.0(peer@2)`` (v9), ``/@scope/name/1.0.0_peer@2`` (v5)."""
    key = key.strip().lstrip("/")
    v5 = _PNPM_V5.match(key)
    if v5:
        return v5.group(1), v5.group(2)
    key = _PEER.sub("", key)
    at = key.rfind("@")
    if at > 0:
        return key[:at], key[at + 1:]
    name, _, version = key.rpartition("/")  # v5
    version = version.split("_", 1)[0]
    return (name, version) if name and version else None


class PnpmLockExtractor:
    name = "pnpm-lock"
    version = 1
    emits = frozenset({"Component", "Library", "dependsOn"})
    ownable = False

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "pnpm-lock.yaml"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, load_yaml)
        if isinstance(parsed, Extraction):
            return parsed
        docs = parsed[1]
        top = docs[0].data if docs else None
        if not isinstance(top, YMap):
            return Extraction(problems=[Problem("error", "bad-lockfile", "not a mapping: not a "
                                                "pnpm lock file", src.doc_id, 1)])
        source = docs[0].source
        r = LockReader(src, ctx, npm_purl)
        importers = top.get("importers")
        root = importers.get(".") if isinstance(importers, YMap) else top
        root = root if isinstance(root, YMap) else YMap()
        node, r.direct, _ = npm_project(src, ctx, {s: dict(root[s]) for s in NPM_SECTIONS
                                                   if isinstance(root.get(s), YMap)}, r.out)
        r.set_project(node)
        # the version the project's own entry resolves each direct dependency to: a package
        # locked at several versions is direct at that one only
        chosen: dict[str, set[str]] = {}
        for section in NPM_SECTIONS:
            deps = root.get(section)
            for dep, spec in (deps.items() if isinstance(deps, YMap) else ()):
                spec = spec.get("version") if isinstance(spec, YMap) else spec
                key = r.key(str(dep))
                if key and isinstance(spec, (str, int, float)):
                    chosen.setdefault(key, set()).add(_PEER.sub("", str(spec)).split("_")[0])
        packages = top.get("packages")
        snapshots = top.get("snapshots")
        by_key: dict[str, str] = {}
        for key, entry in (packages.items() if isinstance(packages, YMap) else ()):
            parsed = pnpm_key(str(key))
            if parsed is None:
                r.warn(f"packages key {brief(key)} names no package@version; skipped",
                       packages.line_of(key))
                continue
            flags = tuple(f for f in ("dev", "optional") if isinstance(entry, YMap)
                          and entry.get(f) is True)
            purl = r.key(parsed[0])
            direct = purl in r.direct and (purl not in chosen or parsed[1] in chosen[purl])
            purl = r.package(parsed[0], parsed[1], packages.line_of(key), qualifiers=flags,
                             direct=direct,
                             evidence=source.evidence(packages, key) if source else None)
            if purl is not None:
                by_key[str(key)] = purl
        for table in (snapshots, packages if not isinstance(snapshots, YMap) else None):
            for key, entry in (table.items() if isinstance(table, YMap) else ()):
                parsed = pnpm_key(str(key))
                subject = r.key(parsed[0]) if parsed else None
                if subject is None or not isinstance(entry, YMap):
                    continue
                for section in ("dependencies", "optionalDependencies"):
                    deps = entry.get(section)
                    for dep in (deps if isinstance(deps, YMap) else ()):
                        r.link(subject, str(dep), deps.line_of(dep),
                               source.evidence(deps, dep) if source else str(dep),
                               qualifiers=("optional",) if section != "dependencies" else ())
        return r.out


# -- yarn ---------------------------------------------------------------------------------------
def yarn_name(spec: str) -> str:
    """The package a yarn.lock spec locks: ``lodash@^4`` -> lodash, ``@babel/core@npm:^7``
    -> @babel/core, ``alias@npm:real@^1`` -> real."""
    spec = spec.strip().strip('"')
    if "@npm:" in spec:
        alias, _, real = spec.partition("@npm:")
        at = real.rfind("@")
        return real[:at] if at > 0 else alias
    at = spec.find("@", 1)  # Berry's ``name@patch:name@npm%3A...`` names it first
    return spec[:at] if at > 0 else spec


def yarn_specs(header: str) -> list[tuple[str, str]]:
    """The (name, range) pairs of a yarn.lock entry header (``a@^1, "a@npm:^1.2":``), the
    range without Berry's ``npm:`` protocol."""
    out = []
    for spec in header.rstrip().rstrip(":").split(","):
        spec = spec.strip().strip('"')
        name = yarn_name(spec)
        rest = spec[len(name) + 1:] if spec.startswith(name + "@") else ""
        out.append((name, rest.removeprefix("npm:")))
    return out


def yarn_direct(r: LockReader, ranges: dict[str, set[str]], headers: list[str]
                ) -> set[str]:
    """The headers (of ``headers``) that lock a range the manifest asks for; a package
    whose manifest ranges no header names (a lock behind its manifest) is direct in all."""
    hits: set[str] = set()
    matched: set[str] = set()
    for header in headers:
        for name, spec in yarn_specs(header):
            key = r.key(name)
            if key in r.direct and spec in ranges.get(key, ()):
                hits.add(header)
                matched.add(key)
    for header in headers:
        key = r.key(yarn_name(header.split(",")[0]))
        if key in r.direct and key not in matched:
            hits.add(header)
    return hits


class YarnLockExtractor:
    name = "yarn-lock"
    version = 1
    emits = frozenset({"Component", "Library", "dependsOn"})
    ownable = False

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "yarn.lock"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        r = LockReader(src, ctx, npm_purl)
        node, r.direct, ranges = npm_project(src, ctx, None, r.out)
        r.set_project(node)
        headers = [line.rstrip() for line in split_lines(text) if line and not line[0].isspace()
                   and not line.startswith("#") and line.rstrip().endswith(":")]
        direct = yarn_direct(r, ranges, headers)
        if "__metadata:" in text[:4096]:
            return self._berry(r, text, direct)
        current: tuple[str, int, str, str] | None = None
        version = ""
        section: str | None = None
        pending: list[tuple[str, int, str]] = []

        def flush() -> None:
            if current is None:
                return
            purl = r.package(current[0], version, current[1], direct=current[3] in direct,
                             evidence=f"{current[2]} version {version}")
            for dep, at, raw in pending if purl else ():
                r.link(purl, dep, at, raw)

        for n, line in enumerate(split_lines(text), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line[0].isspace():
                flush()
                pending, version, section = [], "", None
                if not line.rstrip().endswith(":"):
                    r.warn(f"line {brief(line, 60)} is no entry header; skipped", n)
                    current = None
                    continue
                first = line.rstrip()[:-1].split(",")[0]
                current = (yarn_name(first), n, clip(line.strip(), 120), line.rstrip())
                continue
            if current is None:
                continue
            stripped = line.strip()
            indent = len(line) - len(line.lstrip())
            if indent <= 2:
                section = stripped[:-1] if stripped.endswith(":") else None
                if stripped.startswith("version "):
                    version = stripped[len("version "):].strip().strip('"')
            elif section in ("dependencies", "optionalDependencies"):
                dep = stripped.split(" ", 1)[0].strip('"')
                if dep:
                    pending.append((dep, n, stripped))
        flush()
        return r.out

    def _berry(self, r: LockReader, text: str, direct: set[str]) -> Extraction:
        try:
            docs = load_yaml(text, r.doc_id)
        except InputError as exc:
            r.out.problems.append(input_problem(exc))
            return r.out
        top = docs[0].data if docs else None
        lines = split_lines(text)
        for key, entry in (top.items() if isinstance(top, YMap) else ()):
            if key == "__metadata" or not isinstance(entry, YMap):
                continue
            first = str(key).split(",")[0].strip()
            if "@workspace:" in first:
                continue  # the project itself or a workspace package
            if "@patch:" in first:
                continue  # a patched copy of a package whose own entry is locked too
            at = top.line_of(key)
            header = lines[at - 1].rstrip() if at and at <= len(lines) else ""
            purl = r.package(yarn_name(first), entry.get("version"), top.line_of(key),
                             direct=header in direct,
                             evidence=clip(f"{first}: version {entry.get('version')}"))
            deps = entry.get("dependencies")
            for dep in (deps if isinstance(deps, YMap) and purl else ()):
                r.link(purl, str(dep), deps.line_of(dep), f"{dep}: {deps[dep]}")
        return r.out


# -- Python: poetry.lock, uv.lock ---------------------------------------------------------------
_ARRAY_ITEM = re.compile(r'name\s*=\s*"([^"]+)"|^"([^"\s]+)')

def package_lines(text: str, table: str = "package") -> list[tuple[int, dict[str, int]]]:
    """For each ``[[<table>]]`` of a TOML text in order: its header's line and the lines of
    its keys (``name``, ``version``, ...), sub-tables (``[package.dependencies]``), their keys
    (``package.dependencies.<key>``; also plain ``<key>`` when no earlier key has that name)
    and the items of its multi-line arrays (``dependencies/<name>``, for ``{ name = "x" }``
    and ``"x 1.0"`` items)."""
    out: list[tuple[int, dict[str, int]]] = []
    header = f"[[{table}]]"
    section, array = "", None
    for n, line in enumerate(split_lines(text), 1):
        s = line.strip()
        if array is not None:
            if s.startswith("]"):
                array = None
            elif out and (m := _ARRAY_ITEM.search(s)):
                out[-1][1].setdefault(f"{array}/{m.group(1) or m.group(2)}", n)
            continue
        if s == header:
            out.append((n, {}))
            section = ""
        elif out and s.startswith("[") and not s.startswith("[["):
            section = s.strip("[]").strip()
            out[-1][1].setdefault(section, n)
        elif out and s.startswith("[["):
            out.append((-1, {}))  # another array of tables: not a package
        elif out and "=" in s and not s.startswith("#"):
            key = s.split("=", 1)[0].strip().strip('"')
            out[-1][1].setdefault(key, n)
            if section:
                out[-1][1].setdefault(f"{section}.{key}", n)
            elif s.split("=", 1)[1].strip() == "[":
                array = key
    return [entry for entry in out if entry[0] > 0]


def locked_packages(r: LockReader, text: str, data: dict
                    ) -> list[tuple[tuple[int, dict[str, int]], object]] | None:
    """The ``[[package]]`` tables of a TOML lock (poetry, uv, Cargo), each with its lines
    (:func:`package_lines`); None, with a warning, when the lock has none."""
    packages = data.get("package")
    if not isinstance(packages, list):
        r.warn("no [[package]] tables: nothing locked", 1)
        return None
    return list(zip(package_lines(text), packages))


def python_project(src: SourceFile, ctx: Context, r: LockReader) -> None:
    """The folder's Python project as the pyproject extractor names it, and the requirements
    its pyproject.toml lists (direct, with their section's qualifiers)."""
    from packaging.requirements import InvalidRequirement, Requirement

    from .python import _dependency_entries, _TomlLines, folder_project, scope_qualifiers

    manifest = src.path.parent / "pyproject.toml"
    r.out.depends.append(manifest)
    r.set_project(folder_project(src, ctx.max_file_bytes))
    try:
        text = read_text(manifest, ctx.max_file_bytes, "pyproject.toml")
        data = tomllib.loads(text)
    except (InputError, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return
    for scope, pep508, entries in _dependency_entries(data, [], "pyproject.toml",
                                                      _TomlLines(text)):
        if scope == "build-system.requires":
            continue
        for item, _, _ in entries:
            try:
                name = Requirement(item).name if pep508 else item
                r.direct.setdefault(pypi_purl(name), scope_qualifiers(scope))
            except (InvalidRequirement, ValueError):
                continue


class PythonLockExtractor:
    """What poetry.lock and uv.lock share: a TOML lock of the folder's Python project
    (:func:`python_project`) whose ``[[package]]`` tables :meth:`read` reads."""

    version = 1
    emits = frozenset({"Component", "Library", "dependsOn"})
    ownable = False
    filename = ""

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == self.filename

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, parse_toml)
        if isinstance(parsed, Extraction):
            return parsed
        text, data = parsed
        r = LockReader(src, ctx, pypi_purl)
        python_project(src, ctx, r)
        entries = locked_packages(r, text, data)
        if entries is not None:
            self.read(r, entries)
        return r.out

    def read(self, r: LockReader, entries: list) -> None:
        raise NotImplementedError


class PoetryLockExtractor(PythonLockExtractor):
    name = "poetry-lock"
    filename = "poetry.lock"

    def read(self, r: LockReader, entries: list) -> None:
        for (line, keys), entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                r.warn("a [[package]] without a name; skipped", line)
                continue
            flags = ("optional",) if entry.get("optional") is True else ()
            groups = entry.get("groups")
            if entry.get("category") == "dev" or (isinstance(groups, list) and "main" not in groups
                                                   and groups):
                flags += ("dev",)
            purl = r.package(entry["name"], entry.get("version"), keys.get("name", line),
                             qualifiers=flags,
                             evidence=f'name = "{entry["name"]}", version = "{entry.get("version")}"')
            deps = entry.get("dependencies")
            for dep, spec in (deps.items() if isinstance(deps, dict) and purl else ()):
                at = keys.get(f"package.dependencies.{dep}",
                              keys.get("package.dependencies", line))
                r.link(purl, dep, at, f"{dep} = {brief(spec, 100)}")


class UvLockExtractor(PythonLockExtractor):
    name = "uv-lock"
    filename = "uv.lock"

    def read(self, r: LockReader, entries: list) -> None:
        roots = [e for _, e in entries if isinstance(e, dict) and isinstance(e.get("source"), dict)
                 and (e["source"].get("editable") == "." or e["source"].get("virtual") == ".")]
        for root in roots[:1]:  # the project's own entry names its direct dependencies
            for section, qualify in (("dependencies", lambda _: ()),
                                     ("optional-dependencies", lambda g: (f"optional:{g}",)),
                                     ("dev-dependencies", lambda g: (f"group:{g}",))):
                value = root.get(section)
                groups = {None: value} if isinstance(value, list) else \
                    value if isinstance(value, dict) else {}
                for group, deps in groups.items():
                    for dep in deps if isinstance(deps, list) else ():
                        if isinstance(dep, dict) and isinstance(dep.get("name"), str):
                            key = r.key(dep["name"])
                            if key:
                                r.direct.setdefault(key, qualify(group))
        for (line, keys), entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                r.warn("a [[package]] without a name; skipped", line)
                continue
            if any(entry is root for root in roots):
                continue
            purl = r.package(entry["name"], entry.get("version"), keys.get("name", line),
                             evidence=f'name = "{entry["name"]}", version = "{entry.get("version")}"')
            deps = entry.get("dependencies")
            for dep in (deps if isinstance(deps, list) and purl else ()):
                if isinstance(dep, dict) and isinstance(dep.get("name"), str):
                    r.link(purl, dep["name"], keys.get(f"dependencies/{dep['name']}",
                                                        keys.get("dependencies", line)),
                           f'{{ name = "{dep["name"]}" }}')


for _extractor in (NpmLockExtractor(), PnpmLockExtractor(), YarnLockExtractor(),
                   PoetryLockExtractor(), UvLockExtractor()):
    register(_extractor)
