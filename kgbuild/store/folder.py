"""A store folder's lifecycle, mixed into :class:`~kgbuild.store.graphstore.GraphStore`:
opening it, the write lock, the ``CURRENT`` pointer, the database generations (``db-N/``) and
the identities recorded beside them (``db-N.id``), garbage collection of databases replaced or
never committed, damage detected (or set aside by a full rebuild), every failure a one-line
:class:`~kgbuild.errors.KgbuildError`, and the ``.gitignore`` that keeps the folder out of git."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import time
from pathlib import Path

import pyoxigraph as ox

from ..errors import KgbuildError
from ..io.atomic import atomic_write
from .guard import DB_ERRORS, Damaged, Guarded, detail, is_permission
from .manifest import MANIFEST_GRAPH, STORE_ID
from .storemodel import record_fresh

REBUILD_HINT = "run `kgbuild build --full` to rebuild it from the sources"
BUILDING = ".building"  # beside db-N while it is loaded: never committed if still there
IDENTITY = ".id"  # beside db-N: the random identity it must hold (CURRENT keeps its old format)
_CURRENT = re.compile(r"(db-[0-9]{1,9})(?: ([0-9a-f]{32}))?")  # an identity after it: read too
_ID = re.compile(r"[0-9a-f]{32}")
READ_ATTEMPTS = 30  # read-only opens of a database a build keeps changing, before giving up
GITIGNORE = ".gitignore"  # written into the folder: a store is build output, never committed
IGNORE_ALL = "# kgbuild's store: build output, never committed (written by kgbuild)\n*\n"


def _db_files(db: Path) -> frozenset[str]:
    try:
        return frozenset(os.listdir(db))
    except OSError:
        return frozenset()


def _listing(store: Path) -> tuple:
    """What a build's commit, compaction or switch changes: ``CURRENT`` and every database
    folder's files (name, size, modification time); a fresh object when unreadable."""
    try:
        out: list = [(store / "CURRENT").read_bytes()[:200]]
        for name in sorted(n for n in os.listdir(store) if n.startswith("db-")):
            if (store / name).is_dir():
                with os.scandir(store / name) as it:
                    out.append((name, sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns)
                                             for e in it)))
    except OSError:
        return (object(),)
    return tuple(out)


def _remove(path: Path) -> None:
    """Remove a leftover database folder or bookkeeping file (errors ignored)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


class StoreFolder:
    """The folder a persistent store lives in (``path``; None: in memory) and its database."""

    path: Path | None
    _db: Guarded
    _lock_fh: object
    _write: bool
    _rebuild: bool
    _damage: str | None
    _current_name: str | None
    _opened: frozenset[str]

    def _open(self, write: bool) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise self._error("is not a folder (a file is in its place): pass --store DIR, or "
                              "move the file away", "store-not-folder")
        if write:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise self._translate(exc, writing=True) from None
            self._lock()
            self._ignore_in_git()
        elif not self.path.is_dir():
            raise KgbuildError(f"no kgbuild store at {self.path} (run kgbuild build first)",
                               code="no-store")
        for attempt in range(1 if write else READ_ATTEMPTS):
            before = None if write else _listing(self.path)
            try:
                self._open_current(write)
                return
            except Damaged as exc:
                # a read-only open that met a build's commit, compaction or switch (a file
                # listed one moment and removed the next) opens again: only damage that stays
                # while nothing changes is reported
                if write or attempt + 1 == READ_ATTEMPTS or _listing(self.path) == before:
                    if not self._rebuild:
                        raise self._damaged(str(exc)) from None
                    self._set_aside(str(exc))
                    return
            time.sleep(0.002 * (attempt + 1))

    def _open_current(self, write: bool) -> None:
        """Open the database ``CURRENT`` names (a new one when there is none and ``write``);
        raises Damaged when it cannot be trusted."""
        current, expected_id = self._current()
        if write:
            self._collect_garbage(current)
        if current is None:
            if not write:
                raise KgbuildError(f"no kgbuild store at {self.path} (run kgbuild build first)",
                                   code="no-store")
            self._db = Guarded(self._new_database("db-1"), self)
            self._set_current("db-1")
            self._finish_new("db-1")
            self._current_name = "db-1"
            return
        db = self.path / current
        self._current_name = current
        if not (db / "CURRENT").is_file():  # RocksDB's own; opening would create an empty db
            raise Damaged(f"the database folder {current} is empty or incomplete")
        try:
            raw = ox.Store(str(db)) if write else ox.Store.read_only(str(db))
        except (OSError, RuntimeError) as exc:
            if is_permission(exc):
                raise self._translate(exc, writing=write) from None
            raise Damaged(detail(exc)) from None
        self._db = Guarded(raw, self)
        self._opened = _db_files(db)
        try:
            found = next((q.object.value for q in raw.quads_for_pattern(
                None, ox.NamedNode(STORE_ID[1:-1]), None, ox.NamedNode(MANIFEST_GRAPH))), None)
        except DB_ERRORS as exc:
            raise Damaged(detail(exc)) from None
        if expected_id and found != expected_id:
            raise Damaged(f"{current} does not hold the database CURRENT names (identity "
                          f"{found or 'missing'}, expected {expected_id}): it was truncated "
                          f"or replaced")

    def _ignore_in_git(self) -> None:
        """Write the folder's ``.gitignore`` (everything, itself too) when it has none, so a
        store inside a git checkout never shows in ``git status``. Not being able to is no
        error: the store works without it."""
        ignore = self.path / GITIGNORE
        if not os.path.lexists(ignore):
            try:
                atomic_write(ignore, IGNORE_ALL, durable=False)
            except OSError:
                pass

    # -- errors ----------------------------------------------------------------------------------
    def _error(self, message: str, code: str) -> KgbuildError:
        return KgbuildError(message, str(self.path) if self.path else "(memory store)", code=code)

    def _damaged(self, why: str) -> KgbuildError:
        return self._error(f"the store is damaged ({why}); {REBUILD_HINT}", "store-damaged")

    def _translate(self, exc: BaseException, writing: bool = False) -> KgbuildError:
        """A one-line error for what the database or the file system raised."""
        if is_permission(exc):
            if writing:
                return self._error(f"cannot write the store ({detail(exc)}): building needs "
                                   f"write access to the store folder; pass --store DIR to build "
                                   f"elsewhere", "store-permission")
            return self._error(f"cannot read the store ({detail(exc)}): check the folder's "
                               f"permissions", "store-permission")
        if getattr(exc, "errno", None) == errno.ENOSPC or "No space left" in str(exc):
            return self._error(f"no space left to write the store ({detail(exc)})", "store-full")
        if self._replaced():
            return self._error(f"the store was replaced by a build while this command read it "
                               f"({detail(exc)}); run the command again", "store-changed")
        return self._damaged(detail(exc))

    def _replaced(self) -> bool:
        """Whether ``CURRENT`` now names another database than the one this store opened, or
        (read-only) a build's compaction removed a file the database had when opened."""
        if self.path is None or self._current_name is None:
            return False
        try:
            named = (self.path / "CURRENT").read_bytes()[:200].decode("utf-8", "replace").split()
        except OSError:
            return False
        if named and named[0] != self._current_name and (self.path / named[0]).is_dir():
            return True
        return not self._write and not self._opened <= _db_files(self.path / self._current_name)

    def _on_error(self, exc: BaseException, reading: bool) -> bool:
        """Called by the guarded database: raises the one-line error, or (a read during a full
        rebuild) sets the damaged database aside and returns True: read again, from nothing."""
        if reading and self._rebuild and self._damage is None and not is_permission(exc):
            self._set_aside(detail(exc))
            return True
        raise self._translate(exc, writing=not reading) from None

    def _set_aside(self, why: str) -> None:
        """Rebuild mode: forget the damaged database (left on disk until the new one is
        complete) and read as an empty store."""
        self._damage = why
        self._db = Guarded(ox.Store(), self)

    @property
    def damage(self) -> str | None:
        """What was wrong with the store a full rebuild is replacing (None: nothing)."""
        return self._damage

    # -- the lock, CURRENT and the databases -------------------------------------------------------
    def _lock(self) -> None:
        try:
            fh = open(self.path / "lock", "a+", encoding="utf-8", errors="replace")
        except OSError as exc:
            if is_permission(exc):
                raise self._translate(exc, writing=True) from None
            raise self._error(f"cannot open the store's lock file ({detail(exc)}): remove "
                              f"{self.path / 'lock'} if it is not a file", "store-lock") from None
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read(40).strip() or "?"
            fh.close()
            raise KgbuildError(f"another kgbuild process (pid {holder}) is writing the store "
                               f"{self.path}; wait for it to finish", code="store-locked") from None
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(str(os.getpid()))
            fh.flush()
        except OSError as exc:
            fh.close()
            raise self._translate(exc, writing=True) from None
        self._lock_fh = fh

    def _current(self) -> tuple[str | None, str | None]:
        """The committed database's folder (from ``CURRENT``) and the identity it must hold
        (from ``db-N.id``, when recorded); (None, None) when nothing was ever committed.
        Raises Damaged when ``CURRENT`` is unreadable, malformed or names a missing folder,
        or is missing while databases remain, or the identity record is unreadable."""
        try:
            raw = (self.path / "CURRENT").read_bytes()[:200]
        except FileNotFoundError:
            left = sorted(p.name for p in self.path.glob("db-*") if p.is_dir() and
                          not (self.path / f"{p.name}{BUILDING}").exists())
            if left:
                raise Damaged(f"CURRENT is missing but database folder(s) {', '.join(left[:3])} "
                              f"remain") from None
            return None, None
        except OSError as exc:
            if is_permission(exc):
                raise self._translate(exc) from None
            raise Damaged(f"CURRENT cannot be read: {detail(exc)}") from None
        text = raw.decode("utf-8", "replace").strip()
        m = _CURRENT.fullmatch(text)
        if not m:
            raise Damaged("CURRENT is empty" if not text else
                          f"CURRENT holds {text[:40]!r}, not a database name")
        name = m.group(1)
        if not (self.path / name).is_dir():
            raise Damaged(f"CURRENT names {name}, which is missing")
        record = self.path / f"{name}{IDENTITY}"
        try:
            ident = record.read_bytes()[:100].decode("ascii", "replace").strip()
        except FileNotFoundError:
            return name, m.group(2)  # None: made by an older kgbuild
        except OSError as exc:
            if is_permission(exc):
                raise self._translate(exc) from None
            raise Damaged(f"{record.name} cannot be read: {detail(exc)}") from None
        if not _ID.fullmatch(ident):
            raise Damaged(f"{record.name} holds {ident[:40]!r}, not a database identity")
        return name, ident

    def _set_current(self, name: str, store_id: str | None = None) -> None:
        """Make ``name`` the committed database (its identity recorded first)."""
        try:
            if store_id:
                self._record_identity(name, store_id)
            current = self.path / "CURRENT"
            if current.is_dir() and not current.is_symlink():  # damage a rebuild replaces
                shutil.rmtree(current)
            atomic_write(current, f"{name}\n")
        except OSError as exc:
            raise self._translate(exc, writing=True) from None

    def _record_identity(self, name: str, store_id: str) -> None:
        record = self.path / f"{name}{IDENTITY}"
        if record.is_dir() and not record.is_symlink():
            shutil.rmtree(record)
        atomic_write(record, store_id + "\n")

    def _new_database(self, name: str) -> ox.Store:
        """Create database folder ``name``, marked as being built until :meth:`_finish_new`."""
        try:
            (self.path / f"{name}{BUILDING}").touch()
            shutil.rmtree(self.path / name, ignore_errors=True)
            return ox.Store(str(self.path / name))
        except (OSError, RuntimeError) as exc:
            raise self._translate(exc, writing=True) from None

    def _finish_new(self, name: str) -> None:
        (self.path / f"{name}{BUILDING}").unlink(missing_ok=True)

    def _next_database(self) -> tuple[str, Guarded]:
        """A new database folder after every existing one, marked as being built."""
        taken = [int(p.name[3:]) for p in self.path.glob("db-*")
                 if p.name[3:].isdigit() and p.is_dir()]
        name = f"db-{max(taken, default=0) + 1}"
        return name, Guarded(self._new_database(name), self)

    def _switch(self, name: str, target: Guarded, store_id: str) -> tuple[str | None, str | None]:
        """Commit the complete database ``name``: ``CURRENT`` names it, and the one it
        replaces (damaged or not) and any leftovers are removed. Returns the replaced
        database's name and the damage it had."""
        target.flush()
        old, damaged = self._current_name, self._damage
        self._db = target
        self._set_current(name, store_id)
        self._finish_new(name)
        self._current_name, self._damage = name, None
        for p in self.path.glob("db-*"):  # the replaced (or damaged) database, leftovers
            if p.name not in (name, f"{name}{IDENTITY}"):
                _remove(p)
        return old, damaged

    def _collect_garbage(self, current: str | None) -> None:
        """Remove databases that were never committed or were replaced: with a ``CURRENT``,
        every other one; without, only those still marked as being built."""
        for p in self.path.glob("db-*"):
            if p.name.endswith(BUILDING):
                if p.name[:-len(BUILDING)] != current:
                    shutil.rmtree(self.path / p.name[:-len(BUILDING)], ignore_errors=True)
                    (self.path / f"{p.name[:-len(BUILDING)]}{IDENTITY}").unlink(missing_ok=True)
                p.unlink(missing_ok=True)
            elif current is not None and p.name not in (current, f"{current}{IDENTITY}"):
                _remove(p)

    def close(self) -> None:
        """Release the database and the write lock (committed writes are already durable).
        A writer records, between the two, that the read model is current for the database's
        files as closed (:func:`~kgbuild.store.storemodel.record_fresh`)."""
        revision = None
        if (self._lock_fh is not None and self.path is not None and "_db" in self.__dict__
                and self._damage is None):
            try:
                revision = self.revision()
            except (KgbuildError, OSError):
                pass
        self.__dict__.pop("_db", None)
        if self._lock_fh is not None:
            if revision is not None:
                record_fresh(self.path, revision)
            self._lock_fh.close()
            self._lock_fh = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
