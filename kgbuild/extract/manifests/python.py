"""Python manifests: ``pyproject.toml``, ``setup.cfg`` and ``requirements*.txt``.

The manifests of one folder describe one project: its name is the first of
``pyproject.toml``'s (PEP 621 ``[project]`` or ``[tool.poetry]``), ``setup.cfg``'s
``[metadata] name`` and an sdist's ``PKG-INFO`` ``Name``; named, it is the Component
``pkg:pypi/<PEP 503 name>``, else (or classified ``Private :: Do Not Upload``) ``<dir>#python``.
Each extractor reads those sibling files for the name and depends on them (a change to one
re-extracts the others).

``pyproject.toml``: every entry of ``[project] dependencies``,
``[project.optional-dependencies]``, ``[dependency-groups]`` (PEP 735),
``[build-system] requires`` and the Poetry dependency tables becomes a ``dependsOn``
edge to ``pkg:pypi/<PEP 503 name>``, located at its own line; evidence is
``<section>: <line>``.

``setup.cfg``: ``[options] install_requires`` (runtime), ``setup_requires`` (qualifier
``build``), ``tests_require`` (``test``) and ``[options.extras_require]`` (``optional:<extra>``),
one PEP 508 requirement per line, each an edge at its line.

``requirements*.txt``: the folder's project depends on each PEP 508 line; ``-r`` includes
inside the scanned root are followed and their lines attributed to the ``-r`` line;
``-e``/URL lines are used when they name their package (``#egg=``, a wheel or sdist file
name), otherwise reported.

A project's requirement of itself (``requests[socks]`` in requests' own extras, ``-e .[socks]``
in its requirements) is no edge: its extras become the project's ``extras`` attribute.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from bisect import bisect_right
from collections import Counter
from email.parser import HeaderParser
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Iterator

from ...errors import InputError, Problem
from ...io.text import (
    MAX_EVIDENCE_CHARS,
    brief,
    clip,
    one_line,
    read_text,
    resolved,
    size_text,
    split_lines,
)
from ..records import Context, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import depends_on, input_problem, python_dir_id
from .purl import pypi_name, pypi_purl

PRIVATE = "Private :: Do Not Upload"


# -- pyproject.toml ---------------------------------------------------------------------------
class PyprojectExtractor:
    name = "pyproject"
    # 2: CODEOWNERS owns the project (it was never owned before); 3: evidence is the entry,
    # lines counted at \n only
    version = 3
    emits = frozenset({"Component", "dependsOn", "ownedBy"})
    ownable = True  # the project is the repository's own; authors/maintainers are people, not owners

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "pyproject.toml"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
            data = tomllib.loads(text)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        except RecursionError:
            return Extraction(problems=[Problem("error", "bad-input", "TOML nested too deeply to read",
                                                src.doc_id, 1)])
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"\s*\(at line (\d+), column \d+\)$", str(exc))
            msg = str(exc)[:m.start()] if m else str(exc)
            return Extraction(problems=[Problem("error", "bad-input", f"TOML syntax error: {msg}",
                                                src.doc_id, int(m.group(1)) if m else None)])
        except ValueError as exc:  # e.g. an integer of over 4,300 digits
            return Extraction(problems=[Problem("error", "bad-input",
                                                f"TOML value error: {one_line(str(exc), 120)}",
                                                src.doc_id)])
        out = Extraction(depends=sibling_manifests(src.path))
        where = _TomlLines(text)
        me = _project_node(data, src, where, out.problems, ctx.max_file_bytes)
        out.nodes.append(me)
        for scope, pep508, entries in _dependency_entries(data, out.problems, src.doc_id, where):
            for item, line, evidence in entries:
                if out.full(src.doc_id, line):
                    break
                try:
                    req = Requirement(item) if pep508 else None
                    name = req.name if req else item
                    target = pypi_purl(name)
                    if target == me.id:
                        add_extras(me, req.extras if req else ())
                        continue
                    out.edges.append(depends_on(me.id, target, name,
                                                f"{scope}: {evidence}", line=line,
                                                qualifiers=scope_qualifiers(scope)))
                except (InvalidRequirement, ValueError) as exc:
                    out.problems.append(Problem("warning", "bad-requirement",
                                                f"{scope}: not a valid requirement {brief(item)}: "
                                                f"{str(exc).splitlines()[0]}",
                                                src.doc_id, line))
        return out


def _project_node(data: dict, src: SourceFile, where: _TomlLines, problems: list[Problem],
                  max_bytes: int) -> NodeRecord:
    doc_id = src.doc_id
    dir_id = python_dir_id(doc_id)
    for table in (("project",), ("tool", "poetry")):
        meta = _get(data, table)
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            continue
        name, line = meta["name"], where.line((*table, "name"))
        attrs = {k: meta[k] for k in ("version", "description") if isinstance(meta.get(k), str)}
        classifiers = meta.get("classifiers")
        if isinstance(classifiers, list) and PRIVATE in classifiers:
            return NodeRecord(dir_id, "Component", name, line=line, attributes=attrs)
        try:
            attrs["purl"] = pypi_purl(name)
        except ValueError as exc:
            problems.append(Problem("warning", "bad-name", f"{exc}; using the directory's ID",
                                    doc_id, line))
            return NodeRecord(dir_id, "Component", name, line=line, attributes=attrs)
        return NodeRecord(attrs["purl"], "Component", name, line=line, attributes=attrs,
                          aliases=(dir_id,))
    return folder_project(src, max_bytes)


SIBLINGS = ("pyproject.toml", "setup.cfg", "PKG-INFO")  # where a folder's project is named


def sibling_manifests(path: Path) -> list[Path]:
    """The files beside ``path`` that may name its folder's project (present or not)."""
    return [path.parent / name for name in SIBLINGS if name != path.name]


def folder_project(src: SourceFile, max_bytes: int, itself: bool = False) -> NodeRecord:
    """The Component of the Python project in ``src``'s folder, named by its sibling
    manifests (see the module docstring; ``itself``: ``src`` counts as one of them);
    ``<dir>#python`` labelled with the folder's name when none names a public project."""
    dir_id = python_dir_id(src.doc_id)
    name = _sibling_name(src.path.parent, "" if itself else src.path.name, max_bytes)
    if name:
        purl = pypi_purl(name)
        return NodeRecord(purl, "Component", name, attributes={"purl": purl}, aliases=(dir_id,))
    return NodeRecord(dir_id, "Component", PurePosixPath(src.doc_id).parent.name or dir_id)


def _sibling_name(folder: Path, own: str, max_bytes: int) -> str | None:
    """The project name the first sibling manifest (but ``own``) declares, if valid; files
    that cannot be read or parsed are skipped (their own extraction reports them)."""
    for name in SIBLINGS:
        path = folder / name
        if name == own or not path.is_file():
            continue
        try:
            text = read_text(path, max_bytes, name)
            found = _declared_name(name, text)
            if found:
                pypi_name(found)
                return found
            if name == "pyproject.toml" and _private(text):
                return None
        except (InputError, ValueError, RecursionError, configparser.Error, tomllib.TOMLDecodeError):
            continue
    return None


def _private(text: str) -> bool:
    meta = tomllib.loads(text).get("project")
    return isinstance(meta, dict) and PRIVATE in (meta.get("classifiers") or ())


def _declared_name(kind: str, text: str) -> str | None:
    if kind == "pyproject.toml":
        data = tomllib.loads(text)
        if _private(text):
            return None
        for table in (("project",), ("tool", "poetry")):
            meta = _get(data, table)
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                return meta["name"]
        return None
    if kind == "setup.cfg":
        cfg = configparser.ConfigParser(interpolation=None, strict=False)
        cfg.read_string(text)
        return cfg.get("metadata", "name", fallback=None) or None
    value = HeaderParser().parsestr(text).get("Name")
    return str(value).strip() if value else None


def add_extras(node: NodeRecord, extras) -> None:
    """Record ``extras`` of a project's requirement of itself on the project's node."""
    have = set(node.attributes.get("extras") or ()) | {e.lower() for e in extras}
    if have:
        node.attributes["extras"] = sorted(have)


def _dependency_entries(data: dict, problems: list[Problem], doc_id: str, where: _TomlLines
                        ) -> Iterator[tuple[str, bool, list[tuple[str, int | None]]]]:
    """``(section, entries are PEP 508 strings?, [(entry, line)])`` for every section;
    Poetry tables give package names."""
    arrays = [("project.dependencies", ("project", "dependencies")),
              ("build-system.requires", ("build-system", "requires"))]
    for table in (("project", "optional-dependencies"), ("dependency-groups",)):
        groups = _get(data, table)
        for group in groups if isinstance(groups, dict) else ():
            arrays.append((".".join((*table, group)), (*table, group)))
    for scope, path in arrays:
        items = _get(data, path)
        if items is None:
            continue
        if not isinstance(items, list):
            problems.append(Problem("warning", "bad-dependency", f"{scope} is not an array; skipped",
                                    doc_id, where.line(path)))
            continue
        strings = [x for x in items if isinstance(x, str)]
        for x in items:
            if not isinstance(x, str) and not (isinstance(x, dict) and "include-group" in x):
                problems.append(Problem("warning", "bad-dependency", f"{scope}: entry {brief(x)} is not a "
                                        f"requirement string; skipped", doc_id, where.line(path)))
        yield scope, True, [(x, line, evidence) for x, (line, evidence)
                            in zip(strings, where.strings(path, strings))]
    poetry = _get(data, ("tool", "poetry"))
    if not isinstance(poetry, dict):
        return
    tables = [("dependencies",), ("dev-dependencies",)]
    groups = poetry.get("group")
    tables += [("group", g, "dependencies") for g in (groups if isinstance(groups, dict) else ())]
    for table in tables:
        path = ("tool", "poetry", *table)
        deps = _get(data, path)
        if isinstance(deps, dict):
            names = [n for n in deps if n.lower() != "python"]
            yield ".".join(path), False, [(n, where.line((*path, n)), where.entry((*path, n)))
                                          for n in names]


def scope_qualifiers(scope: str) -> tuple[str, ...]:
    """How a pyproject section qualifies its dependencies: none for the runtime ones."""
    parts = scope.split(".")
    if scope == "build-system.requires":
        return ("build",)
    if parts[:2] == ["project", "optional-dependencies"]:
        return (f"optional:{parts[2]}",)
    if parts[0] == "dependency-groups":
        return (f"group:{parts[1]}",)
    if parts[:3] == ["tool", "poetry", "dev-dependencies"]:
        return ("dev",)
    if parts[:3] == ["tool", "poetry", "group"]:
        return (f"group:{parts[3]}",)
    return ()


def _get(data: object, path: tuple) -> object:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


_HEADER = re.compile(r"^\s*\[\[?([^\[\]]+)\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"""^\s*((?:"[^"]*"|'[^']*'|[\w-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[\w-]+))*)\s*=""")
_PART = re.compile(r""""([^"]*)"|'([^']*)'|([\w-]+)""")
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*')


class _TomlLines:
    """Where keys and string array items sit in a TOML text (tomllib keeps no positions)."""

    def __init__(self, text: str):
        self.lines = split_lines(text)
        self.joined = "\n".join(self.lines)
        self.offsets = [0]
        for line in self.lines:
            self.offsets.append(self.offsets[-1] + len(line) + 1)
        self.keys: dict[tuple, int] = {}
        self.starts: list[int] = []  # lines opening a table or a key, to bound array scans
        table: tuple = ()
        depth = 0  # open brackets/braces: keys inside a multi-line array are not keys
        for n, line in enumerate(self.lines, 1):
            if depth == 0 and (m := _HEADER.match(line)):
                table = _parts(m.group(1))
                self.keys.setdefault(table, n)
                self.starts.append(n)
            elif depth == 0 and (m := _KEY.match(line)):
                self.keys.setdefault((*table, *_parts(m.group(1))), n)
                self.starts.append(n)
            bare = _TOKEN.sub("", line)
            depth = max(0, depth + bare.count("[") + bare.count("{")
                        - bare.count("]") - bare.count("}"))

    def line(self, path: tuple) -> int | None:
        """Line of ``path``'s key, else of its nearest located ancestor."""
        for i in range(len(path), 0, -1):
            if path[:i] in self.keys:
                return self.keys[path[:i]]
        return None

    def text(self, line: int | None) -> str:
        return self.lines[line - 1].strip() if line else ""

    def entry(self, path: tuple) -> str:
        """Evidence for the key at ``path``: its line, or (a key inside an inline table, whose
        line states other keys too) the key itself."""
        return clip(self.text(self.keys[path])) if path in self.keys else clip(str(path[-1]))

    def strings(self, path: tuple, values: list[str]) -> list[tuple[int | None, str]]:
        """(line, evidence) of each string of the array at ``path``, found in order after its
        key. The evidence is the line when no other string sits on it, else the string itself
        as written: a one-line array of thousands of entries costs linear, not quadratic."""
        first = self.line(path)
        if first is None:
            return [(None, clip(value)) for value in values]
        at = bisect_right(self.starts, first)
        end = self.starts[at] if at < len(self.starts) else len(self.lines) + 1
        tokens = [(m.group(0), bisect_right(self.offsets, m.start())) for m in
                  _TOKEN.finditer(self.joined, self.offsets[first - 1], self.offsets[end - 1])
                  if m.group(0)[0] != "#"]
        per_line = Counter(line for _, line in tokens)
        out, i = [], 0
        for value in values:
            while i < len(tokens) and _unquote(tokens[i][0]) != value:
                i += 1
            if i < len(tokens):
                token, line = tokens[i]
                text = self.text(line)
                out.append((line, text if per_line[line] == 1 and len(text) <= MAX_EVIDENCE_CHARS
                            else clip(token)))
            else:
                out.append((first, clip(value)))
            i += i < len(tokens)
        return out


def _parts(key: str) -> tuple:
    return tuple(next(g for g in m.groups() if g is not None) for m in _PART.finditer(key))


def _unquote(token: str) -> str | None:
    try:
        return tomllib.loads(f"v = {token}")["v"]
    except tomllib.TOMLDecodeError:
        return None


# -- requirements*.txt ------------------------------------------------------------------------
_OPTION = re.compile(r"^(-[rce]|--requirement|--constraint|--editable)(?:\s*=\s*|\s*)(.*)$")
_REQ_OPTIONS = re.compile(r"\s+--[A-Za-z]")
_NAMED_URL = re.compile(r"^[\w.-]+\s*(\[[^\]]*\])?\s*@")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^[./~]|\.(whl|zip|tar\.gz|tgz|tar\.bz2)$")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
MAX_INCLUDES = 256  # -r files one requirements file may read, nested ones included
_GLOBAL_OPTIONS = ("-i", "--index-url", "--extra-index-url", "--no-index", "-f", "--find-links",
                   "--pre", "--trusted-host", "--prefer-binary", "--require-hashes",
                   "--only-binary", "--no-binary", "--use-feature")


class RequirementsExtractor:
    name = "requirements"
    # 2: CODEOWNERS owns the directory's project (it was never owned before); 3: lines counted
    # at \n only, includes read as regular files only
    version = 3
    emits = frozenset({"Component", "dependsOn", "ownedBy"})
    ownable = True  # the directory's project is the repository's own; requirements name no owner

    def claims(self, path: Path, head: bytes) -> bool:
        return fnmatch(path.name, "requirements*.txt") or fnmatch(path.name, "*requirements.txt")

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        reader = _RequirementsReader(src, ctx)
        reader.read(src.path, text, frozenset({src.path.resolve()}))
        return reader.out


class _RequirementsReader:
    """One requirements file and its ``-r`` includes, read into one extraction."""

    def __init__(self, src: SourceFile, ctx: Context):
        self.src, self.ctx = src, ctx
        self.me = folder_project(src, ctx.max_file_bytes)
        self.subject = self.me.id
        self.out = Extraction(nodes=[self.me], depends=sibling_manifests(src.path))
        self.includes, self.included_bytes = 0, 0  # what -r includes read, all together

    def read(self, path: Path, text: str, seen: frozenset, via: tuple[int, str] | None = None):
        """Read one file; ``via`` is the (line, ``-r`` text) of its include in the scanned file."""
        for line, kind, value, raw in _requirement_lines(text):
            at = via[0] if via else line
            where = f"{via[1]} (line {line}): " if via else ""
            if kind == "include":
                reason = self._include(path, value, seen, via or (line, raw))
                if reason:
                    self._warn("bad-include", where + reason, at)
                continue
            if kind == "self":
                add_extras(self.me, value)
                continue
            if kind == "requirement":
                if self.out.full(self.src.doc_id, at):
                    return
                try:
                    target = pypi_purl(value)
                    if target == self.subject:
                        add_extras(self.me, _extras(raw))
                        continue
                    self.out.edges.append(depends_on(self.subject, target, value,
                                                     clip(f"{via[1]}: {raw}" if via else raw),
                                                     line=at))
                    continue
                except ValueError as exc:
                    value = f"{exc}; skipped"
            self._warn("bad-requirement", where + value, at)

    def _include(self, path: Path, value: str, seen: frozenset, via: tuple[int, str]) -> str | None:
        """Follow ``-r value``, or say why not."""
        try:
            target = resolved(path.parent / value)
        except OSError as exc:
            return f"include {brief(value)} cannot be resolved ({exc.strerror}); not followed"
        if "://" in value or not target.is_relative_to(self.src.root.resolve()):
            return f"include {brief(value)} is outside the scanned root; not followed"
        if target in seen:
            return f"include {brief(value)} was already read (include cycle?)"
        if self.includes >= MAX_INCLUDES:
            return f"include {brief(value)}: more than {MAX_INCLUDES} includes; not followed"
        budget = self.ctx.max_file_bytes - self.included_bytes
        try:
            text = read_text(target, budget, value)
        except InputError as exc:
            if exc.code == "file-too-large":
                return (f"include {brief(value)}: the includes of one file may hold "
                        f"{size_text(self.ctx.max_file_bytes)} in all (the file size limit); "
                        f"not followed")
            return f"include {brief(value)}: {exc.message}"
        self.includes += 1
        self.included_bytes += len(text)
        self.read(target, text, seen | {target}, via)
        return None

    def _warn(self, code: str, message: str, line: int) -> None:
        self.out.problems.append(Problem("warning", code, message, self.src.doc_id, line))


def _requirement_lines(text: str) -> Iterator[tuple[int, str, str, str]]:
    """``(line, kind, value, text)``: kind is requirement (value: name; text: the trimmed
    line), include (value: path; text: the ``-r`` option), self (the folder's own project,
    ``.`` or ``.[extras]``; value: the extras) or problem (value: message); constraints and
    global options are skipped."""
    from packaging.requirements import InvalidRequirement, Requirement

    for line, raw in _logical_lines(text):
        content = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not content:
            continue
        if m := _OPTION.match(content):
            flag, value = m.group(1), m.group(2).strip()
            if flag in ("-r", "--requirement"):
                yield line, "include", value, content
            elif flag in ("-e", "--editable"):
                yield line, *_named(value, "editable"), raw.strip()
            continue
        if m := _SELF.match(content):
            yield line, "self", _extras(content), content
            continue
        if content.startswith("-"):
            if content.split("=")[0].split()[0] not in _GLOBAL_OPTIONS:
                yield line, "problem", f"unknown pip option {content.split()[0]!r}; skipped", content
            continue
        spec = content[:m.start()] if (m := _REQ_OPTIONS.search(content)) else content
        if _URL.search(spec) and not _NAMED_URL.match(spec):
            yield line, *_named(spec, "URL/path"), raw.strip()
            continue
        try:
            yield line, "requirement", Requirement(spec).name, raw.strip()
        except InvalidRequirement as exc:
            yield line, "problem", (f"not a PEP 508 requirement {brief(spec)}: "
                                    f"{str(exc).splitlines()[0]}"), content


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines with ``\\`` continuations joined, each with the number of its first line."""
    start, buf = 0, []
    for n, raw in enumerate(split_lines(text), 1):
        start = start or n
        if raw.endswith("\\"):
            buf.append(raw[:-1])
            continue
        yield start, "".join(buf) + raw
        start, buf = 0, []
    if buf:
        yield start, "".join(buf)


_SELF = re.compile(r"^\.(?:/)?\s*(\[[^\]]*\])?$")


def _extras(spec: str) -> tuple[str, ...]:
    """The extras a requirement line names (``requests[socks, use_chardet]``)."""
    m = re.search(r"\[([^\]]*)\]", spec)
    return tuple(e.strip() for e in m.group(1).split(",") if e.strip()) if m else ()


def _named(target: str, what: str) -> tuple[str, str]:
    """(``requirement``, name) for a URL/path that names its package, ``self`` with its
    extras for the folder itself (``.[socks]``), else a problem."""
    if m := _SELF.match(target.strip()):
        return "self", _extras(target)
    if m := _EGG.search(target):
        return "requirement", m.group(1)
    stem = target.rstrip("/").rsplit("/", 1)[-1]
    if stem.endswith(".whl"):
        return "requirement", stem.split("-")[0]
    for ext in (".tar.gz", ".tgz", ".tar.bz2", ".zip"):
        if stem.endswith(ext) and "-" in stem:
            return "requirement", stem[:-len(ext)].rpartition("-")[0]
    return "problem", f"{what} requirement {brief(target)} does not name its package; skipped"


# -- setup.cfg --------------------------------------------------------------------------------
_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")
_CFG_KEY = re.compile(r"^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$")
SETUP_KEYS = {("options", "install_requires"): (), ("options", "setup_requires"): ("build",),
              ("options", "tests_require"): ("test",)}


class SetupCfgExtractor:
    name = "setup-cfg"
    version = 1
    emits = frozenset({"Component", "dependsOn", "ownedBy"})
    ownable = True  # the project is the repository's own; setup.cfg names people, not owners

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "setup.cfg"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        me = folder_project(src, ctx.max_file_bytes, itself=True)
        out = Extraction(nodes=[me], depends=sibling_manifests(src.path))
        for scope, qualifiers, line, raw in _setup_requirements(text):
            if out.full(src.doc_id, line):
                break
            spec = re.sub(r"(^|\s)#.*$", "", raw).strip()
            try:
                req = Requirement(spec)
                target = pypi_purl(req.name)
            except (InvalidRequirement, ValueError) as exc:
                out.problems.append(Problem("warning", "bad-requirement", f"{scope}: not a valid "
                                            f"requirement {brief(spec)}: {str(exc).splitlines()[0]}",
                                            src.doc_id, line))
                continue
            if target == me.id:
                add_extras(me, req.extras)
                continue
            out.edges.append(depends_on(me.id, target, req.name, f"{scope}: {clip(raw.strip())}",
                                        line=line, qualifiers=qualifiers))
        return out


def _setup_requirements(text: str) -> Iterator[tuple[str, tuple[str, ...], int, str]]:
    """``(section.key, qualifiers, line, requirement text)`` for every requirement line of the
    dependency keys of a setup.cfg: the value after ``=`` and its indented continuation lines."""
    section, current = "", None
    for n, line in enumerate(split_lines(text), 1):
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        if line[0] in " \t":  # a continuation of the key above
            if current:
                yield (*current, n, line.strip())
            continue
        current = None
        if m := _SECTION.match(line):
            section = m.group(1).strip()
            continue
        if m := _CFG_KEY.match(line):
            key, value = m.group(1).strip(), m.group(2).strip()
            if (section, key) in SETUP_KEYS:
                current = (f"{section}.{key}", SETUP_KEYS[(section, key)])
            elif section == "options.extras_require":
                current = (f"{section}.{key}", (f"optional:{key}",))
            if current and value and not value.startswith(("#", "file:")):
                yield (*current, n, value)


register(PyprojectExtractor())
register(SetupCfgExtractor())
register(RequirementsExtractor())
