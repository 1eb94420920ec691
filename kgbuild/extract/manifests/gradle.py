"""Gradle builds: ``build.gradle`` (Groovy DSL), ``build.gradle.kts`` (Kotlin DSL),
``settings.gradle(.kts)`` and the version catalog ``gradle/libs.versions.toml``.

Not an interpreter (PyPI's tree-sitter-kotlin and tree-sitter-groovy give syntax trees, not
dependencies, and the Groovy grammar is at 0.1): a scanner that blanks comments and string
contents, finds the
``dependencies { }`` and ``plugins { }`` blocks by their braces and reads each statement
in them. A Gradle project is a Component ``gradle:<root name>`` (the root project; its name
is ``rootProject.name`` of the ``settings.gradle(.kts)`` above it, else its folder's name)
or ``gradle:<root name>:<path>`` (a subproject, its folder's path below the root:
``gradle:sunflower:app``), with ``purl`` ``pkg:maven/<group>/<name>`` when the build names
its ``group``. Edges, each at its statement's line, evidence the statement:

* a dependency in string notation (``'group:name:version'``), map notation (``group: 'g',
  name: 'n', version: 'v'``; Kotlin ``group = "g", ...``), a catalog reference
  (``libs.androidx.core.ktx``, ``libs.bundles.x``: resolved through ``[libraries]``,
  ``[versions]`` and ``[bundles]``) or ``kotlin("stdlib")``: ``dependsOn``
  ``pkg:maven/<group>/<name>``, qualified ``configuration:<name>`` and, as Maven scopes,
  ``scope:test`` (test configurations), ``scope:provided`` (``compileOnly``) or
  ``scope:runtime`` (``runtimeOnly``); ``platform(...)``/``enforcedPlatform(...)`` add
  ``platform``; ``version:<v>`` keeps the version asked for;
* ``project(":sub")`` and the type-safe ``projects.sub`` (from the settings' ``include``s and
  renames): ``dependsOn`` that project's Component (qualifier ``project``);
* ``plugins { id 'x' version 'v' }`` and ``alias(libs.plugins.x)``: ``dependsOn`` the plugin's
  marker artifact ``pkg:maven/<id>/<id>.gradle.plugin`` (qualifier ``plugin``); core plugins
  (``java``, no version) are not dependencies;
* ``settings.gradle``: each ``include(...)`` project is ``partOf`` the root project.

``$var``/``${var}`` in a string are resolved from the file's own ``def``/``val``/``ext``
assignments, ``extra["x"]``, the root build's and the root's ``gradle.properties``; an
unresolved version leaves the version out. The catalog is the root's
``gradle/libs.versions.toml`` or the one the settings name with ``from(files(...))``. What cannot be read (an
expression, a variable it cannot resolve, a missing catalog entry, a block under ``if``) is a
``bad-gradle`` warning at its line; ``constraints { }`` only pins versions and is no edge.
"""

from __future__ import annotations

import bisect
import functools
import re
from pathlib import Path

from ...errors import InputError, Problem
from ...io.text import brief, clip, read_text
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import depends_on, input_problem, parse_toml
from .purl import maven_purl

BUILD_FILES = ("build.gradle", "build.gradle.kts")
SETTINGS_FILES = ("settings.gradle", "settings.gradle.kts")
MAX_DEPTH = 100  # brackets nested deeper than this are not read
MAX_PARENTS = 32  # folders searched upwards for settings.gradle

_BLOCK = re.compile(r"(?<![\w.])(dependencies|plugins)\s*\{")
_HEAD = re.compile(r'\s*(?:([A-Za-z_]\w*)|"([A-Za-z_]\w*)")\s*')
_ASSIGN = re.compile(r"""(?:^|[{;])[ \t]*
                         (?:(?:def|val|var|final|String|project\.ext\.|ext\.|extra\.)\s*)*
                         ([A-Za-z_]\w*)\s*(?::\s*String\s*)?=\s*(['"])([^'"$\n]*)\2
                         [ \t]*(?=[;}]|$)""", re.MULTILINE | re.VERBOSE)
_PLUGIN_ID = re.compile(r"""^id\s*\(?\s*['"]([\w.-]+)['"]\s*\)?
                            (?:\s*version\s*\(?\s*['"]([^'"]+)['"]\s*\)?)?""", re.VERBOSE)
_PLUGIN_KOTLIN = re.compile(r"""^kotlin\s*\(\s*"([\w.-]+)"\s*\)(?:\s+version\s+"([^"]+)")?""")
_PLUGIN_ALIAS = re.compile(r"^alias\s*\(\s*(libs\.plugins(?:\.\w+)+)\s*\)")
_EXTRA = re.compile(r"""(?:extra|ext)\[\s*(['"])(\w+)\1\s*\]\s*=\s*(['"])([^'"$\n]*)\3""")
_SET = re.compile(r"""\bset\(\s*(['"])(\w+)\1\s*,\s*(['"])([^'"$\n]*)\3\s*\)""")
_INTERP = re.compile(r"\$\{\s*([^}]{1,200}?)\s*\}|\$([A-Za-z_][\w.]*)")
_NAMED = re.compile(r"^\s*(\w+)\s*[:=]\s*(.*)$", re.DOTALL)
_STRING = re.compile(r"""^\s*(?:'([^'\n]*)'|"([^"\n]*)")\s*$""")
_CALL = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)\)\s*$", re.DOTALL)
_RENAMED = re.compile(r"""project\(\s*['"](:?[\w.:-]+)['"]\s*\)\.name\s*=\s*['"]([\w.-]+)['"]""")
_CATALOG_FROM = re.compile(r"""from\(\s*files\(\s*['"]([^'"\n]+\.toml)['"]\s*\)\s*\)""")
_PROJECTS = re.compile(r"^\s*projects\.((?:[A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*)\s*$")
_CATALOG = re.compile(r"^\s*(?:rootProject\.)?(libs(?:\.[A-Za-z_]\w*)+)\s*(?:\.get\(\)\s*)?$")
_PROJECT_NAME = re.compile(r"""rootProject\.name\s*=\s*(['"])([^'"\n]+)\1""")
_INCLUDE = re.compile(r"(?<![\w.])include\b\s*\(?")
_LOCAL = {"files", "fileTree", "gradleApi", "gradleTestKit", "localGroovy"}
_SKIP = {"constraints", "components", "modules", "attributesSchema", "artifactTypes"}


def _scan(text: str) -> tuple[str, str]:
    """``text`` with comments blanked (``code``) and also with string contents blanked
    (``skeleton``); both keep every offset and newline of ``text``."""
    code, skel = list(text), list(text)
    i, n = 0, len(text)

    def blank(a: int, b: int, both: bool) -> None:
        for k in range(a, b):
            if text[k] != "\n":
                skel[k] = " "
                if both:
                    code[k] = " "

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j, True)
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j, True)
            i = j
        elif c in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else c
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                if text[j] == "\\":
                    j += 1
                elif len(quote) == 1 and text[j] == "\n":
                    break  # an unterminated one-line string ends at its line
                j += 1
            end = min(j + len(quote), n) if j < n and text.startswith(quote, j) else j
            blank(i + len(quote), min(j, n), False)
            i = end
        else:
            i += 1
    return "".join(code), "".join(skel)


def _closing(skel: str, start: int) -> int | None:
    """Offset just past the bracket that closes the one at ``start``; None when the brackets
    do not close or nest deeper than :data:`MAX_DEPTH`."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for k in range(start, len(skel)):
        c = skel[k]
        if c in pairs:
            stack.append(pairs[c])
            if len(stack) > MAX_DEPTH:
                return None
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return k + 1
    return None


def _statements(skel: str, a: int, b: int) -> list[tuple[int, int]]:
    """The statements between ``a`` and ``b``: split at newlines and ``;`` outside brackets,
    a line ending in ``,`` or an operator continuing on the next."""
    out, depth, start = [], 0, a
    for k in range(a, b):
        c = skel[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c in "\n;" and depth == 0:
            if skel[start:k].rstrip().endswith((",", "+", "=", ".", ":")):
                continue
            if skel[start:k].strip():
                out.append((start, k))
            start = k + 1
    if skel[start:b].strip():
        out.append((start, b))
    return out


def _split_args(skel: str, a: int, b: int) -> list[tuple[int, int]]:
    """The comma-separated arguments between ``a`` and ``b`` (commas outside brackets)."""
    out, depth, start = [], 0, a
    for k in range(a, b):
        c = skel[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append((start, k))
            start = k + 1
    out.append((start, b))
    return [(x, y) for x, y in out if skel[x:y].strip()]


def included(code: str, skel: str) -> list[tuple[str | None, int, int]]:
    """The project paths a settings file's ``include(...)`` calls name, each with its offset
    and its call's end (None for an argument that is no string literal)."""
    out = []
    for inc in _INCLUDE.finditer(skel):
        end = skel.find("\n", inc.end())
        end = len(skel) if end < 0 else end
        if skel[inc.end() - 1] == "(":
            close = _closing(skel, inc.end() - 1)
            end = close - 1 if close else end
        for x, y in _split_args(skel, inc.end(), end):
            literal = _STRING.match(code[x:y])
            path = (literal.group(1) or literal.group(2) or "") if literal else None
            out.append((path.strip(":") if path is not None else None, x, end))
    return out


def project_accessor(path: str) -> str:
    """The type-safe accessor Gradle generates for a project path:
    ``:retrofit:test-helpers`` -> ``retrofit.testHelpers``."""
    def camel(part: str) -> str:
        words = re.split(r"[-_]", part)
        return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
    return ".".join(camel(p) for p in path.strip(":").split(":"))


def accessor(alias: str) -> str:
    """The accessor a catalog alias gets: ``androidx-core-ktx`` -> ``androidx.core.ktx``."""
    return re.sub(r"[-_.]", ".", alias)


class Catalog:
    """A version catalog's libraries, bundles and plugins by accessor, with their lines."""

    def __init__(self, path: Path, max_bytes: int):
        self.path, self.error = path, None
        self.libraries: dict[str, tuple[str, str, str | None]] = {}
        self.bundles: dict[str, list[str]] = {}
        self.plugins: dict[str, tuple[str, str | None]] = {}
        self.versions: dict[str, str] = {}
        try:
            data = parse_toml(read_text(path, max_bytes, path.name), path.name)
        except InputError as exc:
            self.error = f"{path.name}: {exc.message}" + (f" (line {exc.line})" if exc.line else "")
            return
        versions = data.get("versions") if isinstance(data.get("versions"), dict) else {}
        for key, value in versions.items():
            if isinstance(value, dict):
                value = value.get("strictly") or value.get("require") or value.get("prefer")
            if isinstance(value, str):
                self.versions[accessor(key)] = value
        libraries = data.get("libraries") if isinstance(data.get("libraries"), dict) else {}
        for key, value in libraries.items():
            entry = self._library(value)
            if entry:
                self.libraries[accessor(key)] = entry
        bundles = data.get("bundles") if isinstance(data.get("bundles"), dict) else {}
        for key, value in bundles.items():
            if isinstance(value, list):
                self.bundles[accessor(key)] = [accessor(v) for v in value if isinstance(v, str)]
        plugins = data.get("plugins") if isinstance(data.get("plugins"), dict) else {}
        for key, value in plugins.items():
            if isinstance(value, str) and ":" in value:
                pid, _, version = value.partition(":")
                self.plugins[accessor(key)] = (pid, version or None)
            elif isinstance(value, dict) and isinstance(value.get("id"), str):
                self.plugins[accessor(key)] = (value["id"], self._version(value.get("version")))

    def _version(self, value: object) -> str | None:
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            if isinstance(value.get("ref"), str):
                return self.versions.get(accessor(value["ref"]))
            for key in ("strictly", "require", "prefer"):
                if isinstance(value.get(key), str):
                    return value[key]
        return None

    def _library(self, value: object) -> tuple[str, str, str | None] | None:
        if isinstance(value, str):
            parts = value.split(":")
            return (parts[0], parts[1], parts[2] if len(parts) > 2 else None) \
                if len(parts) >= 2 else None
        if not isinstance(value, dict):
            return None
        if isinstance(value.get("module"), str) and ":" in value["module"]:
            group, _, name = value["module"].partition(":")
        elif isinstance(value.get("group"), str) and isinstance(value.get("name"), str):
            group, name = value["group"], value["name"]
        else:
            return None
        return group, name, self._version(value.get("version"))


class _Layout:
    """Where a build file sits in its Gradle build: the root folder, the root project's
    name, the project's path and the variables of the root's ``gradle.properties``."""

    def __init__(self, src: SourceFile, ctx: Context, out: Extraction):
        folder = src.path.parent
        self.root, self.settings = folder, None
        self.top = top = src.root.resolve()
        candidate = folder
        for _ in range(MAX_PARENTS):
            found = [candidate / n for n in SETTINGS_FILES if (candidate / n).is_file()]
            if found:
                self.root, self.settings = candidate, found[0]
                break
            if candidate.resolve() == top or candidate.parent == candidate:
                break
            candidate = candidate.parent
        self.name = self.root.name or "root"
        self.catalog_path = self.root / "gradle" / "libs.versions.toml"
        self.accessors: dict[str, str] = {}  # projects.<accessor> -> project path
        if self.settings is not None:
            out.depends.append(self.settings)
            try:
                code, skel = _scan(read_text(self.settings, ctx.max_file_bytes,
                                             self.settings.name))
            except InputError:
                code, skel = "", ""  # its own extraction reports it
            m = _PROJECT_NAME.search(code)
            if m:
                self.name = m.group(2).strip()
            for path, _, _ in included(code, skel):
                if path:
                    self.accessors[project_accessor(path)] = path
            for m in _RENAMED.finditer(code):  # project(":x").name = "y": projects.y
                path, parent = m.group(1).strip(":"), m.group(1).strip(":").rpartition(":")[0]
                self.accessors[project_accessor(f"{parent}:{m.group(2)}")] = path
            m = _CATALOG_FROM.search(code)
            if m and not m.group(1).startswith("/"):
                self.catalog_path = self.root / m.group(1)
        self.path = ":".join(folder.relative_to(self.root).parts)  # root: an ancestor
        self.properties: dict[str, str] = {}
        props = self.root / "gradle.properties"
        if props.is_file():
            out.depends.append(props)
            try:
                for line in read_text(props, ctx.max_file_bytes, props.name).splitlines():
                    key, sep, value = line.partition("=")
                    if sep and not key.lstrip().startswith(("#", "!")):
                        self.properties[key.strip()] = value.strip()
            except InputError:
                pass
        self._catalog: Catalog | None = None
        self.out, self.ctx = out, ctx

    def root_vars(self, build: Path) -> dict[str, str]:
        """The plain string assignments (``ext.x = '1'``, ``val x = "1"``) of the root
        project's build file, which a subproject's build may use."""
        found: dict[str, str] = {}
        for name in BUILD_FILES:
            path = self.root / name
            if path == build or not path.is_file():
                continue
            self.out.depends.append(path)
            try:
                code = _scan(read_text(path, self.ctx.max_file_bytes, name))[0]
            except InputError:
                continue  # its own extraction reports it
            found.update((m.group(1), m.group(3)) for m in _ASSIGN.finditer(code))
        return found

    def project_id(self, path: str) -> str:
        path = path.strip().strip(":")
        return f"gradle:{self.name}" + (f":{path}" if path else "")

    def catalog(self) -> Catalog | None:
        if self._catalog is None and self.catalog_path.resolve().is_relative_to(self.top) \
                and self.catalog_path.is_file():
            self.out.depends.append(self.catalog_path)
            st = self.catalog_path.stat()
            self._catalog = _catalog(str(self.catalog_path), st.st_size, st.st_mtime_ns,
                                     self.ctx.max_file_bytes)
        return self._catalog


@functools.lru_cache(maxsize=16)
def _catalog(path: str, size: int, mtime_ns: int, max_bytes: int) -> Catalog:
    """A catalog read once for all the build files that use it (keyed by its size and
    mtime, so an edited one is read again)."""
    return Catalog(Path(path), max_bytes)


def _scope(configuration: str) -> tuple[str, ...]:
    low = configuration.lower()
    if "test" in low:
        return ("scope:test",)
    if low.endswith("compileonly"):
        return ("scope:provided",)
    if low.endswith("runtimeonly"):
        return ("scope:runtime",)
    return ()


class _Build:
    """One build file read: its project node and the edges of its blocks."""

    def __init__(self, src: SourceFile, ctx: Context, text: str):
        self.src, self.ctx, self.text = src, ctx, text
        self.code, self.skel = _scan(text)
        self.newlines = [k for k, c in enumerate(text) if c == "\n"]
        self.out = Extraction()
        self.layout = _Layout(src, ctx, self.out)
        self.vars = dict(self.layout.properties)
        self.vars.update(self.layout.root_vars(src.path))
        for m in _ASSIGN.finditer(self.code):
            self.vars[m.group(1)] = m.group(3)
        for m in _EXTRA.finditer(self.code):
            self.vars[m.group(2)] = m.group(4)
        for m in _SET.finditer(self.code):
            self.vars[m.group(2)] = m.group(4)

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.newlines, offset - 1) + 1

    def warn(self, message: str, offset: int) -> None:
        self.out.problems.append(Problem("warning", "bad-gradle", message, self.src.doc_id,
                                         self.line(offset)))

    def read(self) -> Extraction:
        layout = self.layout
        self.me = layout.project_id(layout.path)
        name = layout.path.rsplit(":", 1)[-1] if layout.path else layout.name
        attrs: dict = {"specType": "gradle-project"}
        group, version = self.vars.get("group"), self.vars.get("version")
        if group:
            try:
                attrs["purl"] = maven_purl(group, name)
            except ValueError:
                pass
        if version and version != "unspecified":
            attrs["version"] = version
        attrs = {k: v for k, v in attrs.items() if k in self.ctx.schema.attributes}
        self.out.nodes.append(NodeRecord(self.me, "Component", name, line=1, attributes=attrs))
        for m in _BLOCK.finditer(self.skel):
            if self.out.full(self.src.doc_id, self.line(m.start())):
                break
            brace = m.end() - 1
            end = _closing(self.skel, brace)
            if end is None:
                self.warn(f"the {m.group(1)} block's braces do not close (or nest deeper than "
                          f"{MAX_DEPTH}); not read", m.start())
                continue
            for a, b in _statements(self.skel, brace + 1, end - 1):
                if self.out.full(self.src.doc_id, self.line(a)):
                    break
                if m.group(1) == "plugins":
                    self._plugin(a, b)
                else:
                    self._dependency(a, b)
        return self.out

    # -- one statement -------------------------------------------------------------------
    def _dependency(self, a: int, b: int) -> None:
        head = _HEAD.match(self.code, a, b)
        if head is None:
            self.warn(f"cannot read {brief(self.code[a:b].strip(), 60)}; skipped", a)
            return
        conf = head.group(1) or head.group(2)
        rest = head.end()
        if rest < b and self.skel[rest] == "{":  # a nested block: constraints { }, if { }
            if conf not in _SKIP:
                self.warn(f"a {conf} {{ }} block inside dependencies is not read", a)
            return
        if conf in ("if", "else", "for", "while", "def", "val", "var", "when", "try"):
            self.warn(f"a statement '{conf} ...' inside dependencies is not read", a)
            return
        args_end = b
        if rest < b and self.skel[rest] == "(":
            close = _closing(self.skel, rest)
            if close is None:
                self.warn(f"{conf}: brackets do not close; skipped", a)
                return
            rest, args_end = rest + 1, close - 1
        else:  # Groovy: implementation 'g:n:v' { closure }
            brace = self.skel.find("{", rest, b)
            args_end = brace if brace >= 0 else b
        evidence = " ".join(self.code[a:b].split())
        args = _split_args(self.skel, rest, args_end)
        if conf == "add" and len(args) > 1:  # add("implementation", "g:n:v")
            named = _STRING.match(self.code[args[0][0]:args[0][1]])
            if named and re.fullmatch(r"\w+", named.group(1) or named.group(2) or ""):
                conf, args = named.group(1) or named.group(2), args[1:]
        quals = (f"configuration:{conf}", *_scope(conf))
        if args and all(_NAMED.match(self.skel[x:y]) for x, y in args):
            self._named(args, quals, evidence, a)
            return
        for x, y in args:
            self._argument(x, y, quals, evidence, a)

    def _argument(self, x: int, y: int, quals: tuple[str, ...], evidence: str, at: int,
                  depth: int = 0) -> None:
        raw = self.code[x:y].strip()
        literal = _STRING.match(raw)
        if literal:
            value = literal.group(1) if literal.group(1) is not None else literal.group(2)
            parts = value.split("@")[0].split(":", 2)
            if len(parts) < 2:
                self.warn(f"{brief(value, 60)} is not group:name[:version]; skipped", x)
                return
            group, name = self._resolve(parts[0], x), self._resolve(parts[1], x)
            version = self._resolve(parts[2], x, "the version is left out") \
                if len(parts) > 2 else None
            if group is not None and name is not None:
                self._edge(group, name, version, quals, evidence, at)
            return
        projects = _PROJECTS.match(raw)
        if projects:
            path = self.layout.accessors.get(projects.group(1))
            if path is None:
                self.warn(f"{raw}: no project the settings file includes has this accessor; "
                          "skipped", x)
            else:
                self._project_edge(path, quals, evidence, at)
            return
        cat = _CATALOG.match(raw)
        if cat:
            self._catalog_ref(cat.group(1), quals, evidence, at, x)
            return
        call = _CALL.match(self.skel[x:y])
        if call and depth < 4:
            fn = call.group(1)
            inner = x + call.start(2), x + call.end(2)
            if fn in ("platform", "enforcedPlatform", "testFixtures"):
                extra = "platform" if fn != "testFixtures" else "test-fixtures"
                for p, q in _split_args(self.skel, *inner)[:1]:
                    self._argument(p, q, (*quals, extra), evidence, at, depth + 1)
                return
            if fn == "project":
                self._project(inner, quals, evidence, at)
                return
            if fn == "kotlin":
                names = [self.code[p:q].strip().strip('"') for p, q in
                         _split_args(self.skel, *inner)]
                if names and re.fullmatch(r"[\w.-]+", names[0]):
                    self._edge("org.jetbrains.kotlin", f"kotlin-{names[0]}",
                               names[1] if len(names) > 1 else None, quals, evidence, at)
                    return
            if fn in _LOCAL:
                return  # local files and Gradle's own API: no package
        self.warn(f"cannot read the dependency {brief(raw, 80)} (an expression, not a "
                  f"literal or a catalog entry); skipped", x)

    def _named(self, args: list, quals: tuple[str, ...], evidence: str, at: int) -> None:
        values: dict[str, str | None] = {}
        for x, y in args:
            m = _NAMED.match(self.code[x:y])
            literal = _STRING.match(m.group(2))
            if literal:
                values[m.group(1)] = self._resolve(literal.group(1) if literal.group(1)
                                                   is not None else literal.group(2), x)
        if values.get("path"):
            self._project_edge(values["path"], quals, evidence, at)
        elif values.get("group") and values.get("name"):
            self._edge(values["group"], values["name"], values.get("version"), quals,
                       evidence, at)
        else:
            self.warn(f"cannot read the map notation {brief(evidence, 80)} (no group and "
                      f"name strings); skipped", at)

    def _project(self, inner: tuple[int, int], quals, evidence: str, at: int) -> None:
        args = _split_args(self.skel, *inner)
        if args and all(_NAMED.match(self.skel[x:y]) for x, y in args):
            self._named(args, quals, evidence, at)
            return
        literal = _STRING.match(self.code[inner[0]:inner[1]])
        path = self._resolve(literal.group(1) if literal.group(1) is not None
                             else literal.group(2), at) if literal else None
        if path:
            self._project_edge(path, quals, evidence, at)
        elif literal is None:
            self.warn(f"cannot read the project path in {brief(evidence, 80)}; skipped", at)

    def _project_edge(self, path: str, quals, evidence: str, at: int) -> None:
        target = self.layout.project_id(path)
        if target == self.me:
            return
        self.out.edges.append(EdgeRecord(
            self.me, "dependsOn", target, line=self.line(at), evidence=clip(evidence),
            subject_type="Component", object_type="Component",
            object_label=path.strip(":").rsplit(":", 1)[-1] or self.layout.name,
            qualifiers=(*quals, "project")))

    def _catalog_ref(self, ref: str, quals, evidence: str, at: int, x: int) -> None:
        catalog = self.layout.catalog()
        if catalog is None or catalog.error:
            self.warn(f"{ref}: " + (catalog.error if catalog else
                                    f"no {self.layout.catalog_path.name} in the build's gradle/ "
                                    "folder") + "; skipped", x)
            return
        key = ref[len("libs."):]
        if key.startswith("bundles."):
            members = catalog.bundles.get(key[len("bundles."):])
            if members is None:
                self.warn(f"{ref}: no such bundle in the catalog; skipped", x)
                return
            for member in members:
                if member in catalog.libraries:
                    g, n, v = catalog.libraries[member]
                    self._edge(g, n, v, (*quals, f"bundle:{key[8:]}"), evidence, at)
            return
        if key not in catalog.libraries:
            self.warn(f"{ref}: no such library in the catalog; skipped", x)
            return
        g, n, v = catalog.libraries[key]
        self._edge(g, n, v, quals, evidence, at)

    def _plugin(self, a: int, b: int) -> None:
        raw = " ".join(self.code[a:b].split())
        if re.fullmatch(r"`?[\w-]+`?|id\s*\(?\s*['\"][\w-]+['\"]\s*\)?", raw):
            return  # a core plugin (application, `kotlin-dsl`, id 'java'): part of Gradle
        m, k, alias = _PLUGIN_ID.match(raw), _PLUGIN_KOTLIN.match(raw), _PLUGIN_ALIAS.match(raw)
        if m or k:
            pid = m.group(1) if m else f"org.jetbrains.kotlin.{k.group(1)}"
            version = m.group(2) if m else k.group(2)
            if version is None and "." not in pid:
                return  # a core plugin (java, checkstyle): part of Gradle
            version = self._resolve(version, a) if version else None
        elif alias:
            catalog = self.layout.catalog()
            entry = catalog.plugins.get(alias.group(1)[len("libs.plugins."):]) \
                if catalog and not catalog.error else None
            if entry is None:
                self.warn(f"{alias.group(1)}: not in the catalog's [plugins]; skipped", a)
                return
            pid, version = entry
        else:
            self.warn(f"cannot read the plugin {brief(raw, 60)}; skipped", a)
            return
        self._edge(pid, f"{pid}.gradle.plugin", version, ("plugin",), raw, a)

    # -- values --------------------------------------------------------------------------
    def _resolve(self, value: str, at: int, then: str = "skipped") -> str | None:
        """``value`` with its ``$var``/``${var}`` replaced; None, with a warning (ending in
        ``then``), when one cannot be resolved."""
        missing: list[str] = []

        def sub(m: re.Match) -> str:
            name = (m.group(1) or m.group(2)).removesuffix(".get()")
            if name.startswith("libs.versions."):
                catalog = self.layout.catalog()
                found = catalog.versions.get(name[len("libs.versions."):]) if catalog else None
            else:
                found = self.vars.get(name) or self.vars.get(name.rsplit(".", 1)[-1])
            if found is None:
                missing.append(name)
                return m.group(0)
            return found

        out = _INTERP.sub(sub, value) if "$" in value else value
        if missing:
            self.warn(f"cannot resolve {', '.join(brief(n, 40) for n in missing)} in "
                      f"{brief(value, 80)}; {then}", at)
            return None
        return out

    def _edge(self, group: str, name: str, version: str | None, quals, evidence: str,
              at: int) -> None:
        if self.out.full(self.src.doc_id, self.line(at)):
            return
        try:
            target = maven_purl(group, name)
        except ValueError as exc:
            self.warn(f"{exc}; skipped", at)
            return
        extra = (f"version:{version}",) if version else ()
        self.out.edges.append(depends_on(self.me, target, f"{group}:{name}", evidence,
                                         line=self.line(at), qualifiers=(*quals, *extra)))


class GradleBuildExtractor:
    name = "gradle"
    version = 1
    emits = frozenset({"Component", "dependsOn", "partOf", "ownedBy"})
    ownable = True  # the project is the repository's own

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name in BUILD_FILES or path.name in SETTINGS_FILES

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        if src.path.name in SETTINGS_FILES:
            return self._settings(src, ctx, text)
        return _Build(src, ctx, text).read()

    def _settings(self, src: SourceFile, ctx: Context, text: str) -> Extraction:
        """The root project and the projects ``include(...)`` names, each ``partOf`` it."""
        code, skel = _scan(text)
        newlines = [k for k, c in enumerate(text) if c == "\n"]

        def line(offset: int) -> int:
            return bisect.bisect_right(newlines, offset - 1) + 1

        out = Extraction()
        m = _PROJECT_NAME.search(code)
        name = m.group(2).strip() if m else src.path.parent.name or "root"
        me = f"gradle:{name}"
        out.nodes.append(NodeRecord(me, "Component", name, line=line(m.start()) if m else 1,
                                    attributes={k: v for k, v in {"specType": "gradle-project"}
                                                .items() if k in ctx.schema.attributes}))
        for path, x, end in included(code, skel):
            if path is None:
                out.problems.append(Problem("warning", "bad-gradle", "cannot read the included "
                                            f"project {brief(code[x:end].strip(), 60)}; "
                                            "skipped", src.doc_id, line(x)))
                continue
            if not path or out.full(src.doc_id, line(x)):
                continue
            start = code.rfind("\n", 0, x) + 1
            out.edges.append(EdgeRecord(
                f"{me}:{path}", "partOf", me, line=line(x),
                evidence=clip(" ".join(code[start:end + 1].split())),
                subject_type="Component", object_type="Component",
                subject_label=path.rsplit(":", 1)[-1], object_label=name))
        return out


register(GradleBuildExtractor())
