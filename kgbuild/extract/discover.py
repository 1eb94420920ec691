"""Discovering source files: walking folders, claiming files by extractor, fingerprints."""

from __future__ import annotations

import errno
import hashlib
import os
import stat as st_mode
import subprocess
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

from ..errors import InputError, Problem
from ..io.globs import IgnoreSpec
from ..io.text import head_as_utf8, open_regular, read_bytes, split_lines
from . import manifests as sources  # noqa: F401  (registers the extractors)
from .records import Extractor, SourceFile, escape_name
from .registry import EXTRACTORS

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".kgbuild",
             ".tox", ".mypy_cache", ".pytest_cache", "dist", "build"}


HEAD_BYTES = 64 * 1024  # what extractors sniff first
SNIFF_BYTES = 20 * 1024 * 1024  # how far a JSON or YAML file nobody claimed is sniffed
SNIFFED_SUFFIXES = {".yaml", ".yml", ".json"}
HASH_BYTES = 1 << 30  # files larger than this are fingerprinted by stat and head, not read
IGNORE_BYTES = 4 << 20  # a .gitignore larger than this is reported and not used


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
        return project_root, escape_name(path.relative_to(project_root).as_posix())
    return path.parent, escape_name(path.name)


def _given(paths: Sequence[str | Path], root: str | Path | None, exclude: Sequence[str]
           ) -> tuple[IgnoreSpec | None, list[tuple[str | Path, Path, Path, Path, str]]]:
    """The exclude patterns' spec and each of ``paths`` checked to exist: (as given, as a
    Path, resolved, its base, its own document ID) (see :func:`document_base`)."""
    project_root = Path(root or ".").resolve()
    given = []
    for arg in paths:
        p = Path(arg)
        if not p.exists():
            raise InputError("no such file or directory", str(arg))
        resolved = p.resolve()
        given.append((arg, p, resolved, *document_base(resolved, project_root)))
    return (IgnoreSpec(exclude, "exclude") if exclude else None), given


def candidates(paths: Sequence[str | Path], known: dict[str, str], *,
               root: str | Path | None = None, exclude: Sequence[str] = (),
               gitignore: bool = True, extractors: Sequence[Extractor] | None = None
               ) -> Discovery:
    """:func:`discover` as :class:`Discovery`, without building Path objects or reading files
    known unchanged (``known``: document ID -> stat recorded last time; a no-op rebuild of a
    large tree is dominated by this). ``root`` is the project root (default: the working
    directory); ``exclude`` holds gitignore-style patterns matched against document IDs;
    ``gitignore`` honours the ``.gitignore`` files of scanned folders; ``extractors`` are the
    ones that may claim files (default: the registered manifest extractors)."""
    excluded, given = _given(paths, root, exclude)
    found: dict[str, Candidate] = {}
    scope: list[str] = []
    problems: list[Problem] = []
    for arg, p, resolved, base, own_id in given:
        if not p.is_dir() and not p.is_file():
            raise InputError("not a regular file or a folder", str(arg))
        if p.is_file():
            scan_root = resolved.parent
            listing = [(own_id, str(resolved), file_stat(resolved))]
            scope.append(own_id)
        else:
            scan_root = resolved
            scope.append("" if own_id == "." else own_id)
            ignores = _enclosing_ignores(resolved, base, problems) if gitignore else None
            listing = _walk(str(resolved), "" if own_id == "." else own_id, excluded, ignores,
                            problems, str(resolved))
        for doc_id, path, stat in listing:
            if doc_id in found and found[doc_id].path != path:
                doc_id = f"{doc_id}~{hashlib.sha256(path.encode()).hexdigest()[:8]}"
            if stat and known.get(doc_id) == stat:  # (the common case: tuple.__new__ is faster)
                found[doc_id] = _candidate(Candidate, (path, scan_root, base, stat, None))
            elif (ex := extractor_for(Path(path), extractors)) is not None:
                found[doc_id] = Candidate(path, scan_root, base, stat, ex)
    return Discovery(dict(sorted(found.items())), sorted(set(scope)), problems, excluded)


_candidate = tuple.__new__


@dataclass
class Listed:
    """The files of a change set as a scan would find them now (:func:`listed`): candidates
    by document ID, and each listed file a scan would not find (deleted, ignored, claimed by
    no extractor) by the document ID it had."""

    discovery: Discovery
    gone: dict[str, str]  # document ID -> the listed path


def listed(changed: Sequence[str | Path], paths: Sequence[str | Path], *,
           root: str | Path | None = None, exclude: Sequence[str] = (), gitignore: bool = True,
           extractors: Sequence[Extractor] | None = None) -> Listed:
    """What :func:`candidates` would find of the ``changed`` files (added, modified or
    deleted since the last build) under ``paths``, without walking the folders: the same
    document IDs, skipped folders, exclude patterns, ``.gitignore`` files and regular-file
    checks, read only along each file's own folders. Listed files under none of ``paths`` are
    not this build's sources and are left out."""
    excluded, given = _given(paths, root, exclude)
    # (resolved path, base, its own document ID or "" for the root)
    scanned = [(resolved, base, "" if own_id == "." else own_id)
               for _, _, resolved, base, own_id in given]
    found: dict[str, Candidate] = {}
    gone: dict[str, str] = {}
    problems: list[Problem] = []
    for name in dict.fromkeys(str(c) for c in changed):
        path = Path(name)
        path = path.parent.resolve() / path.name  # (the file itself may be gone or a link)
        for folder, base, own_id in scanned:
            if path == folder or path.is_relative_to(folder):
                break
        else:
            continue
        if path == folder:  # a file given as a path: taken as it is
            doc_id, stat = own_id, file_stat(path) if path.is_file() else ""
        else:
            doc_id, stat = _listed_file(path, folder, base, own_id, excluded,
                                        gitignore, problems)
        if doc_id is None:
            continue
        ex = extractor_for(path, extractors) if stat else None
        if ex is None:
            gone[doc_id] = str(path)
        else:
            found[doc_id] = Candidate(str(path), folder if path != folder else folder.parent,
                                      base, stat, ex)
    scope = sorted({own_id for _, _, own_id in scanned})
    return Listed(Discovery(dict(sorted(found.items())), scope, problems, excluded), gone)


def _listed_file(path: Path, folder: Path, base: Path, own_id: str,
                 excluded: IgnoreSpec | None, gitignore: bool, problems: list[Problem]
                 ) -> tuple[str | None, str]:
    """(document ID, stat) of a file below a scanned ``folder`` as :func:`_scan` sees it:
    the stat empty when the scan would not find it (gone, skipped, ignored, not a regular
    file), the ID None for a file in a folder the scan never enters."""
    ignores = _enclosing_ignores(folder, base, problems) if gitignore else None
    prefix, directory = own_id, folder
    *dirs, name = path.relative_to(folder).parts
    for part in dirs:
        ignores = _with_ignore(ignores, directory, prefix, problems)
        prefix = _child_id(prefix, part)
        if part in SKIP_DIRS or (part.startswith(".") and part != ".github") \
                or _ignored(prefix, True, excluded, ignores) or (directory / part).is_symlink():
            return None, ""
        directory = directory / part
    ignores = _with_ignore(ignores, directory, prefix, problems)
    doc_id = _child_id(prefix, name)
    if _ignored(doc_id, False, excluded, ignores):
        return doc_id, ""
    try:
        entry = next((e for e in os.scandir(directory) if e.name == name), None)
    except OSError:
        entry = None
    if entry is None:
        return doc_id, ""
    try:
        is_link = entry.is_symlink()
        if entry.is_dir(follow_symlinks=False):
            return doc_id, ""
    except OSError:
        return doc_id, ""
    st = _regular_file(entry, is_link, doc_id, str(folder), problems)
    return doc_id, f"{st.st_size}:{st.st_mtime_ns}" if st is not None else ""


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
          ignores: list[tuple[str, IgnoreSpec]] | None, problems: list[Problem], root: str
          ) -> list[tuple[str, str, str]]:
    """(document ID, path, stat) of every regular file below ``directory`` (inside the
    scanned folder ``root``), sorted, skipping junk, excluded paths and (``ignores`` not None)
    what ``.gitignore`` files ignore. One list filled by the whole walk (a generator per
    folder cost about a microsecond per file and level: 100k files are scanned on every
    rebuild)."""
    out: list[tuple[str, str, str]] = []
    _scan(directory, prefix, excluded, ignores, problems, root, out)
    return out


def _scan(directory: str, prefix: str, excluded: IgnoreSpec | None,
          ignores: list[tuple[str, IgnoreSpec]] | None, problems: list[Problem], root: str,
          out: list[tuple[str, str, str]]) -> None:
    try:
        entries = sorted(os.scandir(directory), key=_NAME)
    except OSError:
        return
    if ignores is not None and any(e.name == ".gitignore" for e in entries):
        ignores = _with_ignore(ignores, Path(directory), prefix, problems)
    filtered = excluded is not None or bool(ignores)
    for entry in entries:
        doc_id = _child_id(prefix, entry.name)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_link = not is_dir and entry.is_symlink()
        except OSError:
            continue
        if filtered and _ignored(doc_id, is_dir, excluded, ignores):
            continue
        if is_dir:
            if entry.name not in SKIP_DIRS and (not entry.name.startswith(".") or entry.name == ".github"):
                _scan(entry.path, doc_id, excluded, ignores, problems, root, out)
            continue
        st = _regular_file(entry, is_link, doc_id, root, problems)
        if st is not None:
            out.append((doc_id, entry.path, f"{st.st_size}:{st.st_mtime_ns}"))


_NAME = attrgetter("name")


def _regular_file(entry: os.DirEntry, is_link: bool, doc_id: str, root: str,
                  problems: list[Problem]) -> os.stat_result | None:
    """The stat of a regular file to read, or None (and a problem) for anything else: a
    symlink that loops, dangles or leads outside the scanned folder, a FIFO, device or
    socket. A symlink to a folder is not followed (what it holds is scanned where it is)."""
    try:
        if is_link:
            target = os.path.realpath(entry.path, strict=True)
            if os.path.commonpath([root, target]) != root:
                problems.append(Problem("warning", "outside-root", f"a symlink to {escape_name(target)}, "
                                        f"outside the scanned folder: skipped", doc_id))
                return None
            st = os.stat(target)
            if st_mode.S_ISDIR(st.st_mode):
                return None
        else:
            st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        code, what = ("symlink-loop", "a symlink loop") if exc.errno == errno.ELOOP else (
            "unreadable", f"cannot be read ({exc.strerror or exc})")
        problems.append(Problem("warning", code, f"{what}: skipped", doc_id))
        return None
    if not st_mode.S_ISREG(st.st_mode):
        kind = ("a FIFO" if st_mode.S_ISFIFO(st.st_mode) else "a socket" if st_mode.S_ISSOCK(st.st_mode)
                else "a device" if st_mode.S_ISCHR(st.st_mode) or st_mode.S_ISBLK(st.st_mode) else "not a file")
        problems.append(Problem("warning", "not-a-regular-file", f"{kind}, not a regular file: skipped",
                                doc_id))
        return None
    return st


def _child_id(prefix: str, name: str) -> str:
    """The document ID of ``name`` in the folder whose ID is ``prefix``."""
    entry = name if name.isascii() else escape_name(name)
    return f"{prefix}/{entry}" if prefix else entry


def _with_ignore(ignores: list[tuple[str, IgnoreSpec]] | None, directory: Path, prefix: str,
                 problems: list[Problem]) -> list[tuple[str, IgnoreSpec]] | None:
    """``ignores`` with ``directory``'s ``.gitignore`` (ID ``prefix``) added, if it has one
    (None: ``.gitignore`` files are not honoured)."""
    if ignores is None:
        return None
    spec = _read_ignore(directory / ".gitignore", problems)
    return ignores if spec is None else [*ignores, (prefix, spec)]


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
    try:  # bounded and regular files only, like every source
        text = read_bytes(path, IGNORE_BYTES, str(path), "a .gitignore").decode("utf-8", "replace")
        return IgnoreSpec(split_lines(text), str(path))
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


def extractor_for(path: Path, extractors: Sequence[Extractor] | None = None):
    """The first registered extractor that claims ``path``, or None. Only a regular file is
    opened (never blocking). Extractors see its first :data:`HEAD_BYTES` as UTF-8 (a UTF-16
    or UTF-32 head transcoded); when none claims a longer JSON or YAML file by them, they are
    offered up to :data:`SNIFF_BYTES` (a catalog marker after a long comment still counts)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(HEAD_BYTES)
            for ex in (EXTRACTORS if extractors is None else extractors):
                if ex.claims(path, head_as_utf8(head)):
                    return ex
            if len(head) < HEAD_BYTES or path.suffix.lower() not in SNIFFED_SUFFIXES:
                return None
            longer = head_as_utf8(head + fh.read(SNIFF_BYTES - HEAD_BYTES))
    except OSError:
        return None
    for ex in (EXTRACTORS if extractors is None else extractors):
        if ex.claims(path, longer):
            return ex
    return None


def sha256_file(path: Path) -> str:
    """Content hash of a regular file (OSError for anything else: a FIFO never blocks it).
    A file over :data:`HASH_BYTES` (far over any size limit a source may have: it is refused
    unread) is hashed by its size, mtime and first MiB, so that a huge or sparse file costs
    no more than a small one."""
    h = hashlib.sha256()
    with open_regular(path) as fh:
        st = os.fstat(fh.fileno())
        if st.st_size > HASH_BYTES:
            h.update(f"over {HASH_BYTES}:{st.st_size}:{st.st_mtime_ns}:".encode())
            h.update(fh.read(1 << 20))
            return h.hexdigest()
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


GIT_ENV_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                   "GIT_CEILING_DIRECTORIES", "GIT_NAMESPACE")
# a folder's own config may name programs (core.fsmonitor): none is run for a time
GIT_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
            "--no-optional-locks")


class SourceTimes:
    """When each source was last changed, the same in every checkout of the same files: the
    time of the last commit that touched a file tracked and unmodified in a git work tree,
    else its mtime. ``paths`` (absolute) are looked up together on first use: per work tree
    one ``git ls-files``, one ``git status`` and one ``git log`` pass that stops once every
    asked file was seen; a path asked later is looked up alone. Without a git binary, outside
    a work tree or when git fails, mtimes are used."""

    def __init__(self, paths: Iterable[str | Path] = ()):
        self._pending = {os.fspath(p) for p in paths}
        self._times: dict[str, int | None] = {}  # None: the mtime
        self._tops: dict[str, str | None] = {}

    def epoch(self, path: str | Path) -> float:
        """Seconds since 1970 for ``path`` (OSError when it cannot be stat'ed)."""
        key = os.fspath(path)
        if key not in self._times:
            self._pending.add(key)
            self._resolve()
        when = self._times.get(key)
        return os.stat(key).st_mtime if when is None else when

    def _resolve(self) -> None:
        by_top: dict[str, list[str]] = {}
        for path in self._pending:
            top = self._top(os.path.dirname(path))
            if top is not None:
                by_top.setdefault(top, []).append(path)
            self._times.setdefault(path, None)
        self._pending = set()
        for top, paths in by_top.items():
            self._times.update(_commit_times(top, paths))

    def _top(self, folder: str) -> str | None:
        """The work tree holding ``folder`` (the nearest folder with a ``.git``), or None."""
        walked = []
        while folder not in self._tops:
            walked.append(folder)
            if os.path.lexists(os.path.join(folder, ".git")):
                self._tops[folder] = folder
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                self._tops[folder] = None
                break
            folder = parent
        top = self._tops[folder]
        self._tops.update(dict.fromkeys(walked, top))
        return top


def _git(top: str, *args: str, **kwargs) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in GIT_ENV_DROPPED}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return subprocess.Popen(["git", *GIT_SAFE, "-C", top, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env, **kwargs)


def _git_lines(top: str, *args: str) -> list[str] | None:
    """NUL-separated output of a git command in ``top``, or None when it fails."""
    try:
        proc = _git(top, *args)
        out, _ = proc.communicate()
    except OSError:  # no git binary
        return None
    if proc.returncode != 0:
        return None
    return [x for x in os.fsdecode(out).split("\0") if x]


def _commit_times(top: str, paths: list[str]) -> dict[str, int]:
    """Absolute path -> commit time (seconds) of the last commit touching it, for those of
    ``paths`` tracked and unmodified in the work tree ``top``."""
    rel = {os.path.relpath(p, top).replace(os.sep, "/"): p for p in paths}
    scope = _folders(rel)  # (a monorepo's other folders are not looked at)
    tracked = _git_lines(top, "ls-files", "-z", "--full-name", "--", *scope)
    if tracked is None:
        return {}
    status = _git_lines(top, "status", "--porcelain=v1", "-z", "--no-renames",
                        "--untracked-files=no", "--ignore-submodules=all", "--", *scope)
    if status is None:
        return {}
    modified = {entry[3:] for entry in status}
    wanted = (set(tracked) & set(rel)) - modified
    if not wanted:
        return {}
    out: dict[str, int] = {}
    try:
        proc = _git(top, "log", "-z", "--format=\x01%ct", "--name-only", "--no-renames",
                    "HEAD", "--", *_folders({r: None for r in wanted}))
    except OSError:
        return {}
    when, rest = None, b""
    try:
        for chunk in iter(lambda: proc.stdout.read(1 << 16), b""):
            *tokens, rest = (rest + chunk).split(b"\0")
            for token in tokens:
                name = os.fsdecode(token).lstrip("\n")
                if name.startswith("\x01") and name[1:].isdigit():
                    when = int(name[1:])
                elif when is not None and name in wanted and name not in out:
                    out[name] = when
            if len(out) == len(wanted):
                break
    finally:
        proc.kill()
        proc.wait()
    return {rel[name]: when for name, when in out.items()}


def _folders(rel: dict) -> list[str]:
    """Pathspecs covering the relative paths ``rel``: their top folders (at most 50), else
    the whole tree."""
    tops = sorted({r.split("/", 1)[0] if "/" in r else r for r in rel})
    return [f":(literal){t}" for t in tops] if len(tops) <= 50 else ["."]
