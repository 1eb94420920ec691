"""Discovering source files: walking folders, claiming files by extractor, fingerprints."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

from ..errors import InputError, Problem
from ..io.globs import IgnoreSpec
from . import manifests as sources  # noqa: F401  (registers the extractors)
from .records import Extractor, SourceFile
from .registry import EXTRACTORS

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".kgbuild",
             ".tox", ".mypy_cache", ".pytest_cache", "dist", "build"}


HEAD_BYTES = 64 * 1024


class Candidate(NamedTuple):
    path: str  # absolute
    root: Path  # the scanned folder: nothing outside it is read
    base: Path  # document IDs are relative to it
    stat: str
    extractor: Extractor | None  # None for a file known unchanged (not opened)


@dataclass
class Discovery:
    """What a scan found: candidates by document ID, the document-ID scope the given paths
    cover (see :func:`in_scope`), and what was skipped and why."""

    found: dict[str, Candidate]
    scope: list[str]
    problems: list[Problem] = field(default_factory=list)
    excluded: IgnoreSpec | None = None

    def is_excluded(self, doc_id: str) -> bool:
        """Whether the exclude patterns drop this document (also when a Location names it)."""
        return self.excluded is not None and self.excluded.matches(doc_id)


def discover(paths: Sequence[str | Path], known: dict[str, str] | None = None, **options
             ) -> list[SourceFile]:
    """Every file under ``paths`` that some extractor claims, in a stable order (``options``:
    those of :func:`candidates`)."""
    return [SourceFile(Path(c.path), doc_id, c.root, c.stat, c.base)
            for doc_id, c in candidates(paths, known or {}, **options).found.items()]


def document_base(path: Path, project_root: Path) -> tuple[Path, str]:
    """(base, document ID of ``path`` itself): IDs are paths relative to the project root;
    a source outside the project is named from its own folder (``catalog/x.yaml``)."""
    if path.is_relative_to(project_root):
        return project_root, path.relative_to(project_root).as_posix()
    return path.parent, path.name


def candidates(paths: Sequence[str | Path], known: dict[str, str], *,
               root: str | Path | None = None, exclude: Sequence[str] = (),
               gitignore: bool = True) -> Discovery:
    """:func:`discover` as :class:`Discovery`, without building Path objects or reading files
    known unchanged (``known``: document ID -> stat recorded last time; a no-op rebuild of a
    large tree is dominated by this). ``root`` is the project root (default: the working
    directory); ``exclude`` holds gitignore-style patterns matched against document IDs;
    ``gitignore`` honours the ``.gitignore`` files of scanned folders."""
    project_root = Path(root or ".").resolve()
    excluded = IgnoreSpec(exclude, "exclude") if exclude else None
    found: dict[str, Candidate] = {}
    scope: list[str] = []
    problems: list[Problem] = []
    for arg in paths:
        p = Path(arg)
        if not p.exists():
            raise InputError("no such file or directory", str(arg))
        resolved = p.resolve()
        base, own_id = document_base(resolved, project_root)
        if p.is_file():
            scan_root = resolved.parent
            listing = [(own_id, str(resolved), file_stat(resolved))]
            scope.append(own_id)
        else:
            scan_root = resolved
            scope.append("" if own_id == "." else own_id)
            ignores = _enclosing_ignores(resolved, base, problems) if gitignore else None
            listing = _walk(str(resolved), "" if own_id == "." else own_id, excluded, ignores,
                            problems)
        for doc_id, path, stat in listing:
            if doc_id in found and found[doc_id].path != path:
                doc_id = f"{doc_id}~{hashlib.sha256(path.encode()).hexdigest()[:8]}"
            if stat and known.get(doc_id) == stat:
                found[doc_id] = Candidate(path, scan_root, base, stat, None)
            elif (ex := extractor_for(Path(path))) is not None:
                found[doc_id] = Candidate(path, scan_root, base, stat, ex)
    return Discovery(dict(sorted(found.items())), sorted(set(scope)), problems, excluded)


def in_scope(doc_id: str, scope: Sequence[str]) -> bool:
    """Whether a document ID lies under one of the scanned paths (``""`` covers all)."""
    return any(s == "" or doc_id == s or doc_id.startswith(s + "/") for s in scope)


def file_stat(path: Path | os.DirEntry) -> str:
    try:
        st = path.stat()
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def _walk(directory: str, prefix: str, excluded: IgnoreSpec | None,
          ignores: list[tuple[str, IgnoreSpec]] | None, problems: list[Problem]
          ) -> Iterable[tuple[str, str, str]]:
    """(document ID, path, stat) of every file below ``directory``, sorted, skipping junk,
    excluded paths and (``ignores`` not None) what ``.gitignore`` files ignore."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    if ignores is not None and any(e.name == ".gitignore" for e in entries):
        spec = _read_ignore(Path(directory) / ".gitignore", problems)
        if spec is not None:
            ignores = [*ignores, (prefix, spec)]
    for entry in entries:
        doc_id = f"{prefix}/{entry.name}" if prefix else entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if _ignored(doc_id, is_dir, excluded, ignores):
            continue
        if is_dir:
            if entry.name not in SKIP_DIRS and (not entry.name.startswith(".") or entry.name == ".github"):
                yield from _walk(entry.path, doc_id, excluded, ignores, problems)
        elif entry.is_file():
            yield doc_id, entry.path, file_stat(entry)


def _enclosing_ignores(folder: Path, base: Path, problems: list[Problem]
                       ) -> list[tuple[str, IgnoreSpec]]:
    """The ``.gitignore`` files of the folders between the project root and ``folder``."""
    out: list[tuple[str, IgnoreSpec]] = []
    if folder == base or not folder.is_relative_to(base):
        return out
    for parent in [base / p for p in reversed(folder.relative_to(base).parents)]:
        spec = _read_ignore(parent / ".gitignore", problems)
        if spec is not None:
            rel = parent.relative_to(base).as_posix()
            out.append(("" if rel == "." else rel, spec))
    return out


def _read_ignore(path: Path, problems: list[Problem]) -> IgnoreSpec | None:
    if not path.is_file():
        return None
    try:
        return IgnoreSpec(path.read_text(encoding="utf-8", errors="replace").splitlines(), str(path))
    except (OSError, InputError) as exc:
        problems.append(Problem("warning", "bad-gitignore", f"ignored: {exc}", str(path)))
        return None


def _ignored(doc_id: str, is_dir: bool, excluded: IgnoreSpec | None,
             ignores: list[tuple[str, IgnoreSpec]] | None) -> bool:
    name = doc_id + "/" if is_dir else doc_id
    if excluded is not None and excluded.matches(name):
        return True
    decision = None
    for folder, spec in ignores or ():  # the deepest .gitignore with a say decides
        rel = name[len(folder) + 1:] if folder else name
        verdict = spec.decide(rel)
        if verdict is not None:
            decision = verdict
    return bool(decision)


def extractor_for(path: Path):
    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    for ex in EXTRACTORS:
        if ex.claims(path, head):
            return ex
    return None


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fingerprint(path: Path) -> str:
    """Content hash of a file, hash of the sorted entry names of a folder, "" if missing."""
    try:
        if path.is_dir():
            return hashlib.sha256("\n".join(sorted(os.listdir(path))).encode()).hexdigest()
        return sha256_file(path)
    except OSError:
        return ""
