"""Discovering source files: walking folders, claiming files by extractor, fingerprints."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import InputError
from . import manifests as sources  # noqa: F401  (registers the extractors)
from .records import Extractor, SourceFile
from .registry import EXTRACTORS

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".kgbuild",
             ".tox", ".mypy_cache", ".pytest_cache", "dist", "build"}


HEAD_BYTES = 64 * 1024


def discover(paths: Sequence[str | Path], known: dict[str, str] | None = None) -> list[SourceFile]:
    """Every file under ``paths`` that some extractor claims, in a stable order.

    A directory ``D`` gives document IDs ``D.name/relative/path``; a file gives its name.
    ``known`` maps document IDs to the file stat recorded last time: such a file whose stat
    is unchanged is taken without being opened.
    """
    return [SourceFile(Path(path), doc_id, root, stat)
            for doc_id, (path, root, stat, _) in candidates(paths, known or {}).items()]


Candidate = tuple[str, Path, str, Extractor | None]  # path, root, stat, claiming extractor


def candidates(paths: Sequence[str | Path], known: dict[str, str]) -> dict[str, Candidate]:
    """:func:`discover` as ``doc_id -> (path, root, stat, extractor)``, without building Path
    objects or reading files known unchanged (a no-op rebuild of a large tree is dominated by
    this); the extractor is None for those, and found when one of them must be read."""
    found: dict[str, Candidate] = {}
    for arg in paths:
        p = Path(arg)
        if not p.exists():
            raise InputError("no such file or directory", str(arg))
        if p.is_file():
            resolved = p.resolve()
            candidates = [(resolved.name, str(resolved), file_stat(resolved))]
            root = resolved.parent
        else:
            root = p.resolve()
            candidates = _walk(str(root), root.name or "root")
        for doc_id, path, stat in candidates:
            if doc_id in found and found[doc_id][0] != path:
                doc_id = f"{doc_id}~{hashlib.sha256(path.encode()).hexdigest()[:8]}"
            if stat and known.get(doc_id) == stat:
                found[doc_id] = (path, root, stat, None)
            elif (ex := extractor_for(Path(path))) is not None:
                found[doc_id] = (path, root, stat, ex)
    return dict(sorted(found.items()))


def file_stat(path: Path | os.DirEntry) -> str:
    try:
        st = path.stat()
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def _walk(directory: str, prefix: str) -> Iterable[tuple[str, str, str]]:
    """(document ID, path, stat) of every file below ``directory``, sorted, skipping junk."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in SKIP_DIRS and (not entry.name.startswith(".") or entry.name == ".github"):
                yield from _walk(entry.path, f"{prefix}/{entry.name}")
        elif entry.is_file():
            yield f"{prefix}/{entry.name}", entry.path, file_stat(entry)


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
