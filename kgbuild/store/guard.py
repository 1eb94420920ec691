"""The store's database behind a guard: what pyoxigraph raises, on a call or while its results
are read, goes to the owning :class:`~kgbuild.store.graphstore.GraphStore`, which turns it into
a one-line error or, in a full rebuild, sets the damaged database aside."""

from __future__ import annotations

import errno

import pyoxigraph as ox

DB_ERRORS = (OSError, RuntimeError)  # pyoxigraph: OSError for I/O, RuntimeError("Corruption...")


class Damaged(Exception):
    """The database cannot be trusted (the message says why); never leaves the store."""


def detail(exc: BaseException) -> str:
    """The first line of what was raised (at most 200 characters)."""
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


def is_permission(exc: BaseException) -> bool:
    """Whether ``exc`` says the file system refused access (not damage)."""
    return isinstance(exc, PermissionError) or getattr(exc, "errno", None) in (
        errno.EACCES, errno.EPERM, errno.EROFS) or any(
        s in str(exc) for s in ("Permission denied", "Read-only file system"))


class Guarded:
    """A pyoxigraph store whose errors, raised on a call or while iterating its results,
    become the owning store's one-line errors (see ``StoreFolder._on_error``)."""

    __slots__ = ("db", "owner")

    def __init__(self, db: ox.Store, owner):
        self.db = db
        self.owner = owner

    def quads_for_pattern(self, *args):
        return self._reading(lambda db: db.quads_for_pattern(*args))

    def query(self, query: str):
        return self._reading(lambda db: db.query(query))

    def named_graphs(self):
        return self._reading(lambda db: db.named_graphs())

    def dump(self, **kwargs) -> bytes:
        return self._bytes(lambda db: db.dump(**kwargs))

    def _bytes(self, call) -> bytes:
        try:
            return call(self.db)
        except DB_ERRORS as exc:
            self.owner._on_error(exc, reading=True)
            return call(self.owner._db.db)

    def _reading(self, start):
        try:
            it = start(self.db)
        except DB_ERRORS as exc:
            self.owner._on_error(exc, reading=True)  # raises, or set the database aside
            return iter(start(self.owner._db.db))
        return self._iterate(it, start)

    def _iterate(self, it, start):
        yielded = False
        try:
            for item in it:
                yielded = True
                yield item
        except DB_ERRORS as exc:
            self.owner._on_error(exc, reading=True)
            if not yielded:
                yield from start(self.owner._db.db)

    def _writing(self, call):
        try:
            return call()
        except DB_ERRORS as exc:
            self.owner._on_error(exc, reading=False)

    def update(self, update: str) -> None:
        self._writing(lambda: self.db.update(update))

    def bulk_load(self, data: bytes, **kwargs) -> None:
        self._writing(lambda: self.db.bulk_load(data, **kwargs))

    def flush(self) -> None:
        self._writing(self.db.flush)

    def clear(self) -> None:
        self._writing(self.db.clear)
