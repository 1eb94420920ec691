"""The passage index under a store: ``<store>/passages/passages.sqlite``.

One SQLite database (WAL) holds the passages (ID verbatim, source file and line, title, text,
context header, metadata, access labels, digest), an FTS5 index of header and text, the
names entity links point at, the links themselves (passage, name, span), and the embedding
vectors of every model used (keyed by model and a hash of the embedded text, so a re-ingest
or another corpus with the same text costs no request). An ingest is one transaction: a
killed ingest leaves the previous state. Writers take ``<store>/passages/lock`` (one at a
time); readers never wait for it.

Ingest is incremental per file: an unchanged file (size, mtime, digest) is not read; in a
changed one, a changed line is re-indexed, a removed line's passage disappears (with its
links and index entries), and nothing else is touched. Names are kept current too: a new
title is looked for in every passage (an automaton of the new names only), a title nobody
has any more takes its links with it.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import KgbuildError, Problem
from .corpus import Passage, Unchanged, read_corpus
from .links import Linker, find_by_lookup, link_all, name_key

Catalogued = tuple  # (proper: bool, [(entity ID, access labels)])
LONG_NAME = 8  # words of a name the lookup of a few passages always tries (longer ones: read)
FEW = 200  # touched passages linked by looking their word runs up instead of an automaton
STORE_CHUNKS = "kgbuild:extract"  # the source of the store's text chunks (kgbuild extract)
FOLDER = "passages"
DATABASE = "passages.sqlite"
SCHEMA_VERSION = "1"
LINKER = "2"  # how mentions are found; another value relinks every passage on the next ingest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER,
                                   digest TEXT);
CREATE TABLE IF NOT EXISTS passages(
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, line INTEGER,
    title TEXT NOT NULL, text TEXT NOT NULL, header TEXT NOT NULL, meta TEXT NOT NULL,
    access TEXT NOT NULL, digest TEXT NOT NULL, ehash TEXT NOT NULL, title_key TEXT);
CREATE INDEX IF NOT EXISTS passages_source ON passages(source);
CREATE INDEX IF NOT EXISTS passages_title ON passages(title_key);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    header, text, content='passages', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS names(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,
                                 proper INTEGER NOT NULL, kind TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS links(passage INTEGER NOT NULL, name INTEGER NOT NULL,
                                 start INTEGER NOT NULL, end INTEGER NOT NULL,
                                 PRIMARY KEY(passage, name)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_name ON links(name);
CREATE TABLE IF NOT EXISTS catalog(name INTEGER NOT NULL, node TEXT NOT NULL, access TEXT NOT NULL,
                                   PRIMARY KEY(name, node)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vectors(model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL,
                                   PRIMARY KEY(model, hash)) WITHOUT ROWID;
"""


def _first(found: Iterable[tuple[int, int, int]]) -> Iterator[tuple[int, int, int]]:
    """Each name once, at its first mention."""
    seen: set[int] = set()
    for nid, a, b in found:
        if nid not in seen:
            seen.add(nid)
            yield nid, a, b


def embedded_text(header: str, text: str) -> str:
    """What a passage is embedded as: its context header, then its text."""
    return f"{header}\n{text}" if header else text


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass
class IngestResult:
    """What an ingest did: files read or skipped unchanged, passages added, changed,
    removed and unchanged, links, problems (bad lines, skipped)."""

    files: int = 0
    files_unchanged: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    passages: int = 0
    names: int = 0
    links: int = 0
    relinked: int = 0
    embedded: int = 0
    embeddings: str | None = None  # the model the passages were embedded with, or why not
    problems: list[Problem] = field(default_factory=list)

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "problems"}
        out["problems"] = [p.to_dict() for p in self.problems]
        return out

    def summary(self) -> str:
        lines = [f"files: {self.files} read, {self.files_unchanged} unchanged",
                 f"passages: {self.added} added, {self.changed} changed, {self.removed} removed, "
                 f"{self.unchanged} unchanged; {self.passages} in the index",
                 f"links: {self.links} to {self.names} names ({self.relinked} passages linked)"]
        if self.embeddings:
            lines.append(f"embeddings: {self.embeddings}")
        return "\n".join(lines)


class PassageIndex:
    """The passage database of one store folder (read-only unless ``write``)."""

    def __init__(self, store: str | Path, write: bool = False):
        self.store = Path(store)
        self.folder = self.store / FOLDER
        self.path = self.folder / DATABASE
        self.write = write
        self._lock_fd: int | None = None
        if write:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock()
        elif not self.path.is_file():
            raise KgbuildError(f"{self.store}: no passages here; run `kgbuild ingest FILE.jsonl` "
                               f"first", code="no-passages")
        try:
            uri = self.path.resolve().as_uri() + ("" if write else "?mode=ro")
            self.db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30,
                                      check_same_thread=False)
            if write:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.executescript(_SCHEMA)
                self._set_meta("schema", SCHEMA_VERSION, only_new=True)
                if self.meta("revision") is None:
                    self._set_meta("revision", uuid.uuid4().hex)
            if not write:  # the vocabulary (abstention's word checks), then no writes at all
                self.db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, 'fts', 'row')")
            self.db.execute("PRAGMA query_only=1" if not write else "PRAGMA synchronous=NORMAL")
            version = self.meta("schema")
        except sqlite3.DatabaseError as exc:
            self.close()
            raise KgbuildError(f"{self.path}: the passage index is damaged ({exc}); remove the "
                               f"folder {self.folder} and ingest again", code="store-damaged") from None
        if version != SCHEMA_VERSION:
            self.close()
            raise KgbuildError(f"{self.path}: passage index format {version!r}, this kgbuild "
                               f"reads {SCHEMA_VERSION!r}; remove {self.folder} and ingest again",
                               code="store-damaged")

    # --- plumbing -------------------------------------------------------------------------

    def _lock(self) -> None:
        fd = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise KgbuildError(f"{self.folder}: another ingest is writing these passages; "
                                   f"try again when it is done", code="store-locked") from None
            raise
        self._lock_fd = fd

    def close(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            db.close()
            self.db = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> "PassageIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str, only_new: bool = False) -> None:
        verb = "INSERT OR IGNORE" if only_new else "INSERT OR REPLACE"
        self.db.execute(f"{verb} INTO meta(key, value) VALUES(?, ?)", (key, value))

    def record_settings(self, key: str, value: dict) -> None:
        """Remember settings in the index (its revision stays)."""
        self._set_meta(key, json.dumps(value, sort_keys=True))

    @property
    def revision(self) -> str:
        """Random, new with every committed change: caches of the index are keyed by it."""
        return self.meta("revision") or ""

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM passages").fetchone()[0]

    # --- reading ----------------------------------------------------------------------------

    def records(self, rowids: Iterable[int]) -> dict[int, dict]:
        """The stored fields of these passages, by rowid."""
        rowids = [int(r) for r in rowids]
        out: dict[int, dict] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(
                    f"SELECT rowid, id, source, line, title, text, header, meta, access FROM passages "
                    f"WHERE rowid IN ({marks})", chunk):
                out[row[0]] = {"id": row[1], "source": row[2], "line": row[3], "title": row[4],
                               "text": row[5], "header": row[6], "meta": json.loads(row[7]),
                               "access": [a for a in row[8].split(",") if a]}
        return out

    def names_of(self, ids: Iterable[int]) -> dict[int, str]:
        ids = [int(i) for i in ids]
        out: dict[int, str] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            out.update(self.db.execute(
                f"SELECT id, key FROM names WHERE id IN ({','.join('?' * len(chunk))})", chunk))
        return out

    # --- ingest -----------------------------------------------------------------------------

    def ingest(self, files: Iterable[str | Path], catalog: dict[str, Catalogued] | None = None,
               full: bool = False, chunks: list[Passage] | None = None) -> IngestResult:
        """Bring the index up to date with ``files`` (JSONL corpora), in one transaction.
        ``catalog``: the names of the store's entities (key -> whether it is written with
        capitals, and the entities with their access labels; see :mod:`.catalog`).
        ``full``: re-read files even when their size and mtime are unchanged. ``chunks``:
        the passages ``kgbuild extract`` chunked into the store (source ``STORE_CHUNKS``),
        kept in line like a file's; None leaves them as they are."""
        if not self.write:
            raise KgbuildError("the passage index was opened read-only")
        result = IngestResult()
        touched: set[int] = set()
        self._old_keys: set[str] = set()  # title keys of changed and removed passages
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for path in files:
                self._ingest_file(Path(path), result, touched, full)
            if chunks is not None:
                self._ingest_passages(STORE_CHUNKS, STORE_CHUNKS, chunks, result.problems, result,
                                      touched)
            catalog = catalog or {}
            signature = hashlib.sha256(json.dumps(sorted((k, p) for k, (p, _) in catalog.items()))
                                       .encode()).hexdigest()[:32]
            everything = False
            if self.meta("linker") != LINKER:  # names and links made another way: anew
                db.execute("DELETE FROM links")
                db.execute("DELETE FROM names")
                self._set_meta("linker", LINKER)
                everything = True
            few = len(touched) + len(self._old_keys) <= FEW
            keys = self._old_keys | {k for (k,) in self._column("title_key", sorted(touched)) if k} \
                if few else set()
            if everything or self.meta("catalog-names") != signature or not few:
                new_names = self._update_names(catalog)
                self._set_meta("catalog-names", signature)
            else:  # only the titles that came or went can change the names
                new_names = self._update_some_names(keys, catalog)
            self._relink(touched, new_names, result)
            catalog_changed = self._update_catalog(catalog or {})
            if touched or new_names or result.removed or catalog_changed:
                self._set_meta("revision", uuid.uuid4().hex)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        result.passages = self.count()
        result.names = db.execute("SELECT count(*) FROM names").fetchone()[0]
        result.links = db.execute("SELECT count(*) FROM links").fetchone()[0]
        return result

    def _ingest_file(self, path: Path, result: IngestResult, touched: set[int], full: bool) -> None:
        db = self.db
        try:
            st = path.stat()
        except OSError as exc:
            raise KgbuildError(f"{path}: cannot read: {exc.strerror or exc}", code="input") from None
        key = str(path.resolve())
        known = db.execute("SELECT size, mtime_ns FROM sources WHERE path=?", (key,)).fetchone()
        result.files += 1
        if not full and known == (st.st_size, st.st_mtime_ns):
            result.files_unchanged += 1
            result.unchanged += db.execute("SELECT count(*) FROM passages WHERE source=?",
                                           (key,)).fetchone()[0]
            return
        digest = hashlib.sha256()
        shown = os.path.relpath(path) if not path.is_absolute() else str(path)
        problems: list[Problem] = []
        existing = self._existing(key)
        known = {d: pid for pid, (_, d, _) in existing.items()}

        def passages() -> Iterator[Passage | Unchanged]:
            for p in read_corpus(path, problems, known):
                digest.update(p.raw.encode())
                yield p

        self._ingest_passages(key, shown, passages(), problems, result, touched, existing)
        db.execute("INSERT OR REPLACE INTO sources(path, size, mtime_ns, digest) VALUES(?,?,?,?)",
                   (key, st.st_size, st.st_mtime_ns, digest.hexdigest()[:32]))
        result.problems += [Problem(x.severity, x.code, x.message, shown, x.line) for x in problems]

    def _existing(self, key: str) -> dict[str, tuple[int, str, int | None]]:
        """The passages of one source: ID -> (rowid, digest, line)."""
        return {pid: (rowid, digest, line) for rowid, pid, digest, line in self.db.execute(
            "SELECT rowid, id, digest, line FROM passages WHERE source=?", (key,))}

    def _ingest_passages(self, key: str, shown: str, passages: Iterable[Passage | Unchanged],
                         problems: list[Problem], result: IngestResult, touched: set[int],
                         existing: dict | None = None) -> None:
        """Bring the passages of one source (``key``) in line with ``passages``: changed
        ones re-indexed, new ones added, missing ones removed, the rest untouched."""
        db = self.db
        existing = self._existing(key) if existing is None else existing
        seen: set[str] = set()
        for p in passages:
            if p.id in existing and existing[p.id][1] == (
                    p.raw if isinstance(p, Unchanged) else p.digest):
                seen.add(p.id)
                rowid, _, line = existing[p.id]
                result.unchanged += 1
                if line != p.line:
                    db.execute("UPDATE passages SET line=? WHERE rowid=?", (p.line, rowid))
                continue
            p = Passage(p.id, p.title, p.text, key, p.line, p.meta, p.access, p.raw)
            if p.id in existing:
                seen.add(p.id)
                rowid = existing[p.id][0]
                self._remember_title(rowid)
                self._delete_fts(rowid)
                db.execute("UPDATE passages SET line=?, title=?, text=?, header=?, meta=?, access=?, "
                           "digest=?, ehash=?, title_key=? WHERE rowid=?",
                           (*self._fields(p)[2:], rowid))
                self._insert_fts(rowid, p)
                db.execute("DELETE FROM links WHERE passage=?", (rowid,))
                touched.add(rowid)
                result.changed += 1
                continue
            other = db.execute("SELECT source, line FROM passages WHERE id=?", (p.id,)).fetchone()
            if other is not None:
                problems.append(Problem("error", "duplicate-id",
                                        f"passage id {p.id!r} is already ingested from "
                                        f"{other[0]}:{other[1]}", shown, p.line))
                continue
            cur = db.execute("INSERT INTO passages(id, source, line, title, text, header, meta, "
                             "access, digest, ehash, title_key) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                             self._fields(p))
            self._insert_fts(cur.lastrowid, p)
            touched.add(cur.lastrowid)
            result.added += 1
        for pid, (rowid, _, _) in existing.items():
            if pid not in seen:
                self._remember_title(rowid)
                self._delete_fts(rowid)
                db.execute("DELETE FROM links WHERE passage=?", (rowid,))
                db.execute("DELETE FROM passages WHERE rowid=?", (rowid,))
                touched.discard(rowid)
                result.removed += 1

    @staticmethod
    def _fields(p: Passage) -> tuple:
        head = p.header
        return (p.id, p.source, p.line, p.title, p.text, head,
                json.dumps(p.meta, sort_keys=True, ensure_ascii=False), ",".join(p.access),
                p.digest, text_hash(embedded_text(head, p.text)),
                name_key(p.title) if p.title else None)

    def _insert_fts(self, rowid: int, p: Passage) -> None:
        self.db.execute("INSERT INTO fts(rowid, header, text) VALUES(?, ?, ?)",
                        (rowid, p.header, p.text))

    def _delete_fts(self, rowid: int) -> None:
        self.db.execute("INSERT INTO fts(fts, rowid, header, text) SELECT 'delete', rowid, header, "
                        "text FROM passages WHERE rowid=?", (rowid,))

    def _update_catalog(self, catalog: dict[str, "Catalogued"]) -> bool:
        """The entities behind each catalog name; whether anything changed."""
        if not catalog:
            return self.db.execute("DELETE FROM catalog").rowcount > 0
        ids = {key: nid for nid, key in self.db.execute("SELECT id, key FROM names")}
        rows = sorted((ids[k], node, ",".join(sorted(access)))
                      for k, (_, nodes) in catalog.items() if k in ids for node, access in nodes)
        have = sorted(self.db.execute("SELECT name, node, access FROM catalog"))
        if rows == have:
            return False
        self.db.execute("DELETE FROM catalog")
        self.db.executemany("INSERT OR IGNORE INTO catalog VALUES(?,?,?)", rows)
        return True

    def _remember_title(self, rowid: int) -> None:
        row = self.db.execute("SELECT title_key FROM passages WHERE rowid=?", (rowid,)).fetchone()
        if row and row[0]:
            self._old_keys.add(row[0])

    def _column(self, column: str, rowids: list[int]) -> Iterator[tuple]:
        for start in range(0, len(rowids), 500):
            chunk = rowids[start:start + 500]
            yield from self.db.execute(f"SELECT {column} FROM passages WHERE rowid IN "
                                       f"({','.join('?' * len(chunk))})", chunk)

    def _update_some_names(self, keys: set[str], catalog: dict[str, "Catalogued"]
                           ) -> dict[str, tuple[int, bool]]:
        """:meth:`_update_names` for the keys of titles that came or went only (the catalog
        unchanged): the same names, without reading every title."""
        db = self.db
        fresh: dict[str, tuple[int, bool]] = {}
        for key in sorted(keys):
            if db.execute("SELECT 1 FROM passages WHERE title_key=? LIMIT 1", (key,)).fetchone():
                wanted: tuple[bool, str] | None = (True, "title")
            elif key in catalog:
                wanted = (catalog[key][0], "catalog")
            else:
                wanted = None
            have = db.execute("SELECT id, proper FROM names WHERE key=?", (key,)).fetchone()
            if have and (wanted is None or bool(have[1]) != wanted[0]):
                db.execute("DELETE FROM links WHERE name=?", (have[0],))
                db.execute("DELETE FROM names WHERE id=?", (have[0],))
                have = None
            if wanted and not have:
                cur = db.execute("INSERT INTO names(key, proper, kind) VALUES(?, ?, ?)",
                                 (key, int(wanted[0]), wanted[1]))
                fresh[key] = (cur.lastrowid, wanted[0])
        return fresh

    def _update_names(self, catalog: dict[str, "Catalogued"]) -> dict[str, tuple[int, bool]]:
        """Bring the name table in line with the titles and the catalog; returns the names
        that are new (key -> (ID, proper)). Names nobody has any more go, with their links."""
        db = self.db
        wanted: dict[str, tuple[bool, str]] = {}
        # a title names a thing: only a mention written with a capital or a digit links it
        # (the same for every title with the key, so whoever sees which passages, a name
        # links the same mentions)
        for (key,) in db.execute("SELECT DISTINCT title_key FROM passages WHERE title_key IS NOT NULL"):
            wanted[key] = (True, "title")
        for key, (proper, _) in catalog.items():
            wanted.setdefault(key, (proper, "catalog"))
        have = {key: (nid, bool(proper)) for nid, key, proper in
                db.execute("SELECT id, key, proper FROM names")}
        gone = [have[k][0] for k in have if k not in wanted or wanted[k][0] != have[k][1]]
        for nid in gone:
            db.execute("DELETE FROM links WHERE name=?", (nid,))
            db.execute("DELETE FROM names WHERE id=?", (nid,))
        fresh: dict[str, tuple[int, bool]] = {}
        for key, (proper, kind) in wanted.items():
            if key in have and have[key][1] == proper:
                continue
            cur = db.execute("INSERT INTO names(key, proper, kind) VALUES(?, ?, ?)",
                             (key, int(proper), kind))
            fresh[key] = (cur.lastrowid, proper)
        return fresh

    def _relink(self, touched: set[int], fresh: dict[str, tuple[int, bool]],
                result: IngestResult) -> None:
        """Link the touched passages against every name, and every other passage against the
        new names only."""
        db = self.db
        if touched and len(touched) <= FEW:  # look the texts' word runs up: no automaton
            longest = max((len(k.split()) for (k,) in db.execute(
                "SELECT key FROM names WHERE length(key) - length(replace(key, ' ', '')) >= ?",
                (LONG_NAME,))), default=LONG_NAME)
            self._link_rows(((row, nid, a, b) for row, text in self._texts(sorted(touched))
                             for nid, a, b in _first(find_by_lookup(text, self._lookup, longest))))
            result.relinked += len(touched)
        elif touched:
            names = {k: (nid, bool(p)) for nid, k, p in db.execute("SELECT id, key, proper FROM names")}
            self._link(Linker(names), self._texts(sorted(touched)))
            result.relinked += len(touched)
        if fresh:
            linker = Linker(fresh)
            others = (r for (r,) in db.execute("SELECT rowid FROM passages ORDER BY rowid").fetchall()
                      if r not in touched)
            self._link(linker, self._texts(list(others)))
            result.relinked += max(0, self.count() - len(touched))

    def _lookup(self, keys: set[str]) -> dict[str, tuple[int, bool]]:
        out: dict[str, tuple[int, bool]] = {}
        keys = sorted(keys)
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            out.update((k, (nid, bool(p))) for nid, k, p in self.db.execute(
                f"SELECT id, key, proper FROM names WHERE key IN ({','.join('?' * len(chunk))})",
                chunk))
        return out

    def _texts(self, rowids: list[int]) -> Iterator[tuple[int, str]]:
        for start in range(0, len(rowids), 2000):
            chunk = rowids[start:start + 2000]
            yield from self.db.execute(
                f"SELECT rowid, text FROM passages WHERE rowid IN ({','.join('?' * len(chunk))})",
                chunk).fetchall()

    def _link(self, linker: Linker, texts: Iterable[tuple[int, str]]) -> None:
        self._link_rows(link_all(linker, texts))

    def _link_rows(self, rows: Iterable[tuple[int, int, int, int]]) -> None:
        batch: list[tuple[int, int, int, int]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= 50_000:
                self.db.executemany("INSERT OR IGNORE INTO links VALUES(?,?,?,?)", batch)
                batch.clear()
        if batch:
            self.db.executemany("INSERT OR IGNORE INTO links VALUES(?,?,?,?)", batch)

    # --- vectors ------------------------------------------------------------------------------

    def missing_vectors(self, model: str) -> list[tuple[str, str]]:
        """``(hash, embedded text)`` of every passage without a vector for ``model``, each
        text once, in hash order."""
        rows = self.db.execute(
            "SELECT DISTINCT p.ehash, p.header, p.text FROM passages p WHERE NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.model=? AND v.hash=p.ehash) ORDER BY p.ehash",
            (model,)).fetchall()
        return [(h, embedded_text(head, text)) for h, head, text in rows]

    def put_vectors(self, model: str, items: list[tuple[str, bytes]]) -> None:
        """Store vectors (one transaction); the model's vector state changes, so its dense
        matrix is made again (the passages' revision stays)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany("INSERT OR REPLACE INTO vectors(model, hash, vec) VALUES(?,?,?)",
                                [(model, h, v) for h, v in items])
            self._set_meta(f"vectors:{model}", uuid.uuid4().hex)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
