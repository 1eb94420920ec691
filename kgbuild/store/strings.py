"""A column of strings as two arrays: one UTF-8 blob and each item's end offset.

Saved as ``.npy`` files and memory-mapped, an item costs the pages it lies on. A sorted
column is searched by binary search (:meth:`Strings.find`, :func:`bisect` on it) and
changed by :meth:`Strings.splice`: runs of unchanged items are copied as slices of the blob.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import numpy as np


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
        at = [bisect.bisect_left(self, x) for x in fresh]
        keep = np.ones(len(self), dtype=bool)
        keep[gone] = False
        kept = np.flatnonzero(keep)
        take = np.insert(kept, np.searchsorted(kept, at), -1)
        return self.splice(take, [x.encode() for x in fresh])


class SortedStrings(Strings):
    """A sorted column of distinct strings, a set by binary search (``x in column``)."""

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and self.find(text) is not None
