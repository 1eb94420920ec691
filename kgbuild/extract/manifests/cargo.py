"""Rust: ``Cargo.toml`` (the crate and its dependencies) and ``Cargo.lock``.

``Cargo.toml``: the package is a Component ``pkg:cargo/<name>``; every entry of
``[dependencies]``, ``[dev-dependencies]`` (qualifier ``dev``), ``[build-dependencies]``
(``build``) and their ``[target.'<cfg>'.*]`` forms (``target:<cfg>``) is a ``dependsOn``
edge to ``pkg:cargo/<crate>`` at the entry's line (a renamed entry, ``foo = { package =
"bar" }``, points at ``bar``; ``optional = true`` adds ``optional``). A workspace's members
(``[workspace] members``, globs expanded within the folder) are ``partOf`` the workspace's
Component: its package, or ``<folder>#cargo-workspace`` when the root has none.

``Cargo.lock``: read as the lock files of :mod:`.lockfiles` are: packages without a
``source`` are the workspace's own crates, each ``dependsOn`` what its entry lists (direct,
resolved); every other package is a Library with its ``resolvedVersion``, which the project
(the ``Cargo.toml`` beside the lock) ``dependsOn`` (``direct`` when one of the workspace's
crates names it, else ``transitive``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath

from ...errors import InputError, Problem
from ...io.text import brief, clip, read_text
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .lockfiles import LockReader, locked_packages
from .packages import depends_on, parse_toml, read_parsed, scoped_id
from .purl import cargo_purl
from .python import _TomlLines

SECTIONS = {"dependencies": (), "dev-dependencies": ("dev",), "build-dependencies": ("build",)}
MAX_MEMBERS = 500


def workspace_id(doc_id: str) -> str:
    return scoped_id(str(PurePosixPath(doc_id).parent), "cargo-workspace")


def crate_node(data: dict, doc_id: str, where: _TomlLines | None, problems: list[Problem]
               ) -> NodeRecord | None:
    """The Component a Cargo.toml's ``[package]`` defines, or its workspace's, or None."""
    package = data.get("package")
    if isinstance(package, dict) and isinstance(package.get("name"), str):
        line = where.line(("package", "name")) if where else None
        try:
            purl = cargo_purl(package["name"])
        except ValueError as exc:
            problems.append(Problem("warning", "bad-name", f"[package] name: {exc}", doc_id, line))
            return None
        attrs = {"purl": purl}
        for key in ("version", "description"):
            if isinstance(package.get(key), str):
                attrs[key] = package[key].strip()
        return NodeRecord(purl, "Component", package["name"], line=line, attributes=attrs)
    if isinstance(data.get("workspace"), dict):
        folder = PurePosixPath(doc_id).parent
        return NodeRecord(workspace_id(doc_id), "Component", folder.name or "workspace",
                          line=where.line(("workspace",)) if where else None)
    return None


class CargoTomlExtractor:
    name = "cargo"
    version = 1
    emits = frozenset({"Component", "dependsOn", "partOf", "ownedBy"})
    ownable = True  # the crate is the repository's own; authors are people, not owners

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "Cargo.toml"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, parse_toml)
        if isinstance(parsed, Extraction):
            return parsed
        text, data = parsed
        where = _TomlLines(text)
        out = Extraction()
        me = crate_node(data, src.doc_id, where, out.problems)
        if me is None:
            out.problems.append(Problem("error", "bad-dependency", "neither [package] with a "
                                        "name nor [workspace]: not a crate", src.doc_id, 1))
            return out
        me.attributes = {k: v for k, v in me.attributes.items() if k in ctx.schema.attributes}
        out.nodes.append(me)
        tables: list[tuple[tuple, tuple[str, ...]]] = [((s,), q) for s, q in SECTIONS.items()]
        targets = data.get("target")
        for cfg, spec in (targets.items() if isinstance(targets, dict) else ()):
            tables += [(("target", cfg, s), (*q, f"target:{cfg}")) for s, q in SECTIONS.items()
                       if isinstance(spec, dict) and s in spec]
        for path, qualifiers in tables:
            deps: object = data
            for key in path:
                deps = deps.get(key) if isinstance(deps, dict) else None
            if deps is None:
                continue
            if not isinstance(deps, dict):
                out.problems.append(Problem("warning", "bad-dependency", f"[{'.'.join(path)}] "
                                            "is not a table; skipped", src.doc_id,
                                            where.line(path)))
                continue
            for name, spec in deps.items():
                line = where.line((*path, name))
                if out.full(src.doc_id, line):
                    break
                crate, extra = name, ()
                if isinstance(spec, dict):
                    if isinstance(spec.get("package"), str):
                        crate = spec["package"]
                    if spec.get("optional") is True:
                        extra = ("optional",)
                elif not isinstance(spec, str):
                    out.problems.append(Problem("warning", "bad-dependency", f"{name}: "
                                                f"{brief(spec)} is neither a version nor a "
                                                "table; skipped", src.doc_id, line))
                    continue
                try:
                    target = cargo_purl(crate)
                except ValueError as exc:
                    out.problems.append(Problem("warning", "bad-dependency", f"{exc}; skipped",
                                                src.doc_id, line))
                    continue
                out.edges.append(depends_on(me.id, target, crate, where.entry((*path, name)),
                                            line=line, qualifiers=(*qualifiers, *extra)))
        self._members(src, ctx, data, where, me, out)
        return out

    def _members(self, src: SourceFile, ctx: Context, data: dict, where: _TomlLines,
                 me: NodeRecord, out: Extraction) -> None:
        workspace = data.get("workspace")
        members = workspace.get("members") if isinstance(workspace, dict) else None
        if not isinstance(members, list):
            return
        folder = src.path.parent
        root = src.root.resolve()
        line = where.line(("workspace", "members"))
        seen: set[Path] = set()
        for pattern in members:
            if not isinstance(pattern, str) or pattern.startswith("/") or ".." in pattern:
                out.problems.append(Problem("warning", "bad-dependency", f"workspace member "
                                            f"{brief(pattern)} is not a relative path; skipped",
                                            src.doc_id, line))
                continue
            try:
                found = sorted(folder.glob(pattern)) if any(c in pattern for c in "*?[") \
                    else [folder / pattern]
            except (OSError, ValueError):
                continue
            for path in found[:MAX_MEMBERS]:
                manifest = path / "Cargo.toml"
                if manifest in seen or len(seen) >= MAX_MEMBERS:
                    continue
                seen.add(manifest)
                out.depends.append(manifest)
                try:
                    if root not in manifest.resolve().parents:
                        continue
                    member = tomllib.loads(read_text(manifest, ctx.max_file_bytes, "Cargo.toml"))
                except (InputError, OSError, tomllib.TOMLDecodeError, RecursionError, ValueError):
                    continue  # its own extraction reports it
                node = crate_node(member, src.doc_id_of(manifest), None, [])
                if node is None or node.id == me.id or out.full(src.doc_id, line):
                    continue
                out.edges.append(EdgeRecord(node.id, "partOf", me.id, line=line,
                                            evidence=clip(f"members = [{pattern!r}]: "
                                                          f"{path.relative_to(folder).as_posix()}"),
                                            subject_type="Component", object_type="Component",
                                            subject_label=node.label))


class CargoLockExtractor:
    name = "cargo-lock"
    version = 1
    emits = frozenset({"Component", "Library", "dependsOn"})
    ownable = False

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "Cargo.lock"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        parsed = read_parsed(src, ctx, parse_toml)
        if isinstance(parsed, Extraction):
            return parsed
        text, data = parsed
        r = LockReader(src, ctx, cargo_purl)
        manifest = src.path.parent / "Cargo.toml"
        r.out.depends.append(manifest)
        project = None
        try:
            project = crate_node(tomllib.loads(read_text(manifest, ctx.max_file_bytes,
                                                         "Cargo.toml")), src.doc_id_of(manifest),
                                 None, [])
        except (InputError, tomllib.TOMLDecodeError, RecursionError, ValueError):
            pass
        locked = locked_packages(r, text, data)
        if locked is None:
            return r.out
        entries = [(lines, e) for lines, e in locked if isinstance(e, dict)]
        own = {e.get("name") for _, e in entries if "source" not in e}
        if project is None:
            name = next((e.get("name") for _, e in entries if "source" not in e), None)
            project = NodeRecord(cargo_purl(name) if isinstance(name, str) and r.key(name)
                                 else workspace_id(src.doc_id), "Component",
                                 name if isinstance(name, str) else "workspace")
        r.set_project(project)
        for (line, keys), entry in entries:  # the workspace's crates name the direct ones
            if "source" not in entry:
                for dep in entry.get("dependencies") or ():
                    if isinstance(dep, str) and r.key(dep.split(" ")[0]):
                        r.direct.setdefault(r.key(dep.split(" ")[0]), ())
        for (line, keys), entry in entries:
            name = entry.get("name")
            if not isinstance(name, str):
                r.warn("a [[package]] without a name; skipped", line)
                continue
            at = keys.get("name", line)
            if name in own:
                subject = r.key(name)
                if subject is None:
                    continue
                if subject != project.id:
                    r.out.nodes.append(NodeRecord(subject, "Component", name, line=at))
            else:
                subject = r.package(name, entry.get("version"), at,
                                    evidence=f'name = "{name}", version = "{entry.get("version")}"')
            deps = entry.get("dependencies")
            for dep in (deps if isinstance(deps, list) and subject else ()):
                if not isinstance(dep, str) or not dep.strip():
                    continue
                parts = dep.split(" ")
                qualifiers = (f"resolved:{parts[1]}",) if len(parts) > 1 else ()
                if name in own:
                    qualifiers = ("direct", *qualifiers)
                at_dep = keys.get(f"dependencies/{parts[0]}", keys.get("dependencies", line))
                r.link(subject, parts[0], at_dep, f'"{dep}"',
                       qualifiers=qualifiers,
                       subject_type="Component" if name in own else "Library")
        return r.out


register(CargoTomlExtractor())
register(CargoLockExtractor())
