"""A column of strings as two arrays: one UTF-8 blob and each item's end offset.

Saved as ``.npy`` files and memory-mapped, an item costs the pages it lies on. A sorted
column is searched by binary search (:meth:`Strings.find`, :func:`bisect` on it) and
changed by :meth:`Strings.splice`: runs of unchanged items are copied as slices of the blob.
A large column changed a few rows at a time is a :class:`ChunkedStrings`: a splice makes
again only the chunks whose rows changed, the others are the very arrays (files) they were.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import numpy as np

CHUNK = 32 << 20  # bytes of blob at which a chunk of a ChunkedStrings is closed


class Strings(Sequence):
    """Strings stored as one UTF-8 blob and end offsets (or byte strings, read with ``raw``);
    ``find`` needs them sorted."""

    def __init__(self, blob: np.ndarray, ends: np.ndarray):
        self.blob, self.ends = blob, ends

    @staticmethod
    def pack(items: Sequence[str | bytes]) -> tuple[np.ndarray, np.ndarray]:
        data = [x if isinstance(x, bytes) else x.encode() for x in items]
        ends = np.cumsum([len(x) for x in data], dtype=np.int64) if data else np.zeros(0, np.int64)
        return np.frombuffer(b"".join(data), dtype=np.uint8), ends

    @classmethod
    def of(cls, items: Sequence[str | bytes]) -> Strings:
        return cls(*cls.pack(items))

    def __len__(self) -> int:
        return len(self.ends)

    def raw(self, i: int) -> bytes:
        start = int(self.ends[i - 1]) if i else 0
        return self.blob[start:int(self.ends[i])].tobytes()

    def __getitem__(self, i: int) -> str:
        if i < 0:
            i += len(self)
        return self.raw(int(i)).decode()

    def raws(self):
        """Every item as bytes, in order."""
        data, start = self.blob.tobytes(), 0
        for end in self.ends.tolist():
            yield data[start:end]
            start = end

    def __iter__(self):
        return (x.decode() for x in self.raws())

    def splice(self, take: np.ndarray, fresh: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Packed items: ``take[i]`` is the old item to copy, or -1 for the next of ``fresh``
        (each run of consecutive old items is copied as one slice of the blob; every old
        item in order is these very arrays, not a copy)."""
        take = np.asarray(take, dtype=np.int64)
        if not fresh and len(take) == len(self) and np.array_equal(take, np.arange(len(take))):
            return self.blob, self.ends
        ends = np.asarray(self.ends, dtype=np.int64)
        starts = ends - np.diff(ends, prepend=0)
        old = take >= 0
        size = np.zeros(len(take), dtype=np.int64)
        size[old] = ends[take[old]] - starts[take[old]]
        size[~old] = [len(x) for x in fresh]
        first = np.ones(len(take), dtype=bool)
        first[1:] = ~old[1:] | ~old[:-1] | (take[1:] != take[:-1] + 1)
        bounds = np.append(np.flatnonzero(first), len(take)).tolist()
        pieces, new = [np.zeros(0, dtype=np.uint8)], iter(fresh)
        for a, b in zip(bounds, bounds[1:]):
            i, j = int(take[a]), int(take[b - 1])
            pieces.append(np.frombuffer(next(new), dtype=np.uint8) if i < 0
                          else self.blob[int(starts[i]):int(ends[j])])
        return np.concatenate(pieces), np.cumsum(size)

    def find(self, text: str) -> int | None:
        """Position of ``text`` in these sorted strings, or None."""
        i = bisect.bisect_left(self, text)
        return i if i < len(self) and self[i] == text else None

    def changed(self, removed: Iterable[str], added: Iterable[str]
                ) -> tuple[np.ndarray, np.ndarray]:
        """These sorted, distinct strings packed without ``removed`` (each one of them) and
        with ``added`` (none of them), still sorted."""
        gone = sorted(self.find(x) for x in removed)
        fresh = sorted(added)
        if not gone and not fresh:  # (these very arrays: no pass over the column)
            return self.blob, self.ends
        at = [bisect.bisect_left(self, x) for x in fresh]
        keep = np.ones(len(self), dtype=bool)
        keep[gone] = False
        kept = np.flatnonzero(keep)
        take = np.insert(kept, np.searchsorted(kept, at), -1)
        return self.splice(take, [x.encode() for x in fresh])


def chunk_key(name: str, k: int) -> str:
    """The name of chunk ``k`` of column ``name``: its arrays are ``<key>_blob``, ``<key>_ends``."""
    return f"{name}_c{k:05d}"


class ChunkedStrings(Sequence):
    """Strings in chunks, each a :class:`Strings` (its ends its own), read like one column.

    Made from scratch, a chunk is closed at the first row that brings its blob to
    :data:`CHUNK` bytes, so equal columns have equal chunks. Spliced, each chunk keeps its
    rows and takes the fresh ones after them; it is cut so again when it grew past twice
    that, and goes when no row is left in it (small chunks are not merged): a spliced column
    may be chunked otherwise than the same column made from scratch. There is always one
    chunk at least."""

    def __init__(self, chunks: list[Strings]):
        self.chunks = chunks
        sizes = [len(c) for c in chunks]
        self.starts = np.cumsum([0, *sizes[:-1]], dtype=np.int64)  # each chunk's first row
        self._starts = self.starts.tolist()  # (bisected per row read: a list, not numpy)
        self._len = sum(sizes)

    @classmethod
    def of(cls, items: Sequence[str | bytes]) -> ChunkedStrings:
        return cls(_cut(*Strings.pack(items)))

    @classmethod
    def packed(cls, blob: np.ndarray, ends: np.ndarray) -> ChunkedStrings:
        """The items ``blob`` and ``ends`` (:meth:`Strings.pack`) chunked."""
        return cls(_cut(blob, ends))

    @classmethod
    def saved(cls, arrays: dict[str, np.ndarray], name: str,
              values: bool = True) -> ChunkedStrings:
        """Column ``name`` of a model's ``arrays`` (:meth:`arrays`; one chunk when they hold it
        unchunked, as ``<name>_blob`` and ``<name>_ends``); raises ValueError when a chunk is
        missing or its ends do not fit its blob (``values=False``: the ends' order is not
        read, only their sizes and last one: a model checked whole before)."""
        keys = {k for k in arrays if k.startswith(f"{name}_c")}
        if not keys and {f"{name}_blob", f"{name}_ends"} <= arrays.keys():
            keys = {f"{chunk_key(name, 0)}_{part}" for part in ("blob", "ends")}
            arrays = {f"{chunk_key(name, 0)}_{part}": arrays[f"{name}_{part}"]
                      for part in ("blob", "ends")}
        n = len(keys) // 2
        if not n or keys != {f"{chunk_key(name, k)}_{part}" for k in range(n)
                             for part in ("blob", "ends")}:
            raise ValueError(f"missing or stray chunks of column {name!r}")
        chunks = []
        for k in range(n):
            blob, ends = arrays[f"{chunk_key(name, k)}_blob"], arrays[f"{chunk_key(name, k)}_ends"]
            if not (blob.ndim == ends.ndim == 1 and blob.dtype == np.uint8
                    and ends.dtype.kind in "iu" and (int(ends[-1]) if len(ends) else 0) == len(blob)
                    and (not len(ends) or int(ends[0]) >= 0)
                    and not (values and np.any(ends[1:] < ends[:-1]))):
                raise ValueError(f"inconsistent chunk {k} of column {name!r}")
            chunks.append(Strings(blob, ends))
        return cls(chunks)

    def arrays(self, name: str) -> dict[str, np.ndarray]:
        """The arrays a model holds this column as (column ``name``): each chunk's blob and
        ends, named by :func:`chunk_key`."""
        out = {}
        for k, c in enumerate(self.chunks):
            out[f"{chunk_key(name, k)}_blob"], out[f"{chunk_key(name, k)}_ends"] = c.blob, c.ends
        return out

    def __len__(self) -> int:
        return self._len

    def _at(self, i: int) -> tuple[Strings, int]:
        k = bisect.bisect_right(self._starts, i) - 1
        return self.chunks[k], i - self._starts[k]

    def raw(self, i: int) -> bytes:
        chunk, j = self._at(i)
        return chunk.raw(j)

    def empty(self, i: int) -> bool:
        """Whether item ``i`` is empty (its bytes not read)."""
        chunk, j = self._at(i)
        return chunk.ends[j] == (chunk.ends[j - 1] if j else 0)

    def __getitem__(self, i: int) -> str:
        if i < 0:
            i += len(self)
        return self.raw(int(i)).decode()

    def raws(self):
        """Every item as bytes, in order."""
        for c in self.chunks:
            yield from c.raws()

    def __iter__(self):
        return (x.decode() for x in self.raws())

    def edited(self, removed: Iterable[int], replaced: dict[int, bytes],
               inserted: Sequence[tuple[int, bytes]]) -> ChunkedStrings:
        """These items less the rows ``removed``, with ``replaced[i]`` for row ``i`` and each
        ``(r, item)`` of ``inserted`` put before old row ``r`` (``len(self)``: at the end;
        several before one row in their order): only the chunks these rows are in (an
        inserted item's: that of the row before it, the first for none) are made again, cut
        as :meth:`splice` cuts them (a chunk whose rows are only replaced, each by as many
        bytes, keeps its very ends); a chunk left without rows goes."""
        per: dict[int, tuple[list, dict, list]] = {}

        def edits(row: int) -> tuple[list, dict, list]:
            return per.setdefault(max(bisect.bisect_right(self._starts, row) - 1, 0), ([], {}, []))

        for i in removed:
            edits(i)[0].append(i)
        for i, x in replaced.items():
            edits(i)[1][i] = x
        for r, x in inserted:
            edits(r - 1)[2].append((r, x))
        chunks = []
        for k, c in enumerate(self.chunks):
            if k not in per:
                chunks.append(c)
                continue
            gone, fresh, put = per[k]
            base = self._starts[k]
            if not gone and not put and len(c.blob) <= 2 * CHUNK:  # (larger: an older model's)
                same = _overwritten(c, {i - base: x for i, x in fresh.items()})
                if same is not None:
                    chunks.append(same)
                    continue
            take = np.arange(len(c), dtype=np.int64)
            take[[i - base for i in fresh]] = -1
            keep = np.ones(len(c), dtype=bool)
            keep[[i - base for i in gone]] = False
            at = [r - base for r, _ in put]
            take, keep = np.insert(take, at, -1), np.insert(keep, at, True)
            # the fresh items in their order: those put before a row, then the row's own
            events = sorted([(r, 0, j, x) for j, (r, x) in enumerate(put)]
                            + [(i, 1, 0, x) for i, x in fresh.items()])
            spliced = c.splice(take[keep], [x for *_, x in events])
            if len(spliced[1]):
                chunks += _cut(*spliced, 2 * CHUNK)
        return ChunkedStrings(chunks or _cut(*Strings.pack([])))

    def splice(self, take: np.ndarray, fresh: Sequence[bytes]) -> ChunkedStrings:
        """The items :meth:`Strings.splice` gives (the old items taken in ascending order):
        a fresh item goes in the chunk of the old one before it (the first chunk when none
        is), each chunk given exactly its old items is that very chunk, the others are
        spliced one by one (:meth:`Strings.splice`)."""
        take = np.asarray(take, dtype=np.int64)
        old = take >= 0
        taken = take[old]
        if np.any(taken[1:] <= taken[:-1]):
            raise ValueError("the old items of a chunked column are taken in ascending order")
        owner = np.zeros(len(take), dtype=np.int64)  # per new item its chunk
        owner[old] = np.searchsorted(self.starts, taken, side="right") - 1
        owner = np.maximum.accumulate(owner)
        bounds = np.searchsorted(owner, np.arange(len(self.chunks) + 1)).tolist()
        before = np.concatenate([[0], np.cumsum(~old)]).tolist()  # fresh items before each
        chunks = []
        for k, c in enumerate(self.chunks):
            a, b = bounds[k], bounds[k + 1]
            if before[a] == before[b] and b - a == len(c):  # (the old items, ascending)
                chunks.append(c)
            elif a < b:
                local = np.where(old[a:b], take[a:b] - self._starts[k], -1)
                chunks += _cut(*c.splice(local, fresh[before[a]:before[b]]), 2 * CHUNK)
        return ChunkedStrings(chunks or _cut(*Strings.pack([])))


def _overwritten(c: Strings, rows: dict[int, bytes]) -> Strings | None:
    """Chunk ``c`` with its rows ``rows`` replaced when each new item is as long as the old
    (a new blob written over, the very ends), else None."""
    ends = c.ends[list(rows)].tolist()
    starts = [int(c.ends[j - 1]) if j else 0 for j in rows]
    if any(e - s != len(x) for x, s, e in zip(rows.values(), starts, ends)):
        return None
    blob = np.array(c.blob)
    for x, s, e in zip(rows.values(), starts, ends):
        blob[s:e] = np.frombuffer(x, dtype=np.uint8)
    return Strings(blob, c.ends)


def _cut(blob: np.ndarray, ends: np.ndarray, over: int = 0) -> list[Strings]:
    """Items ``blob`` and ``ends`` as chunks (slices of ``blob``), each closed at the first
    item that brings it to :data:`CHUNK` bytes; one chunk when ``blob`` is ``over`` bytes or
    less."""
    if len(blob) <= over:
        return [Strings(blob, ends)]
    chunks, row, base = [], 0, 0
    while row < len(ends) or not chunks:
        stop = min(int(np.searchsorted(ends, base + CHUNK)) + 1, len(ends))
        end = int(ends[stop - 1]) if stop else 0
        chunks.append(Strings(blob[base:end], ends[row:stop] - base))
        row, base = stop, end
    return chunks


class SortedStrings(Strings):
    """A sorted column of distinct strings, a set by binary search (``x in column``)."""

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and self.find(text) is not None
