"""The name index of one entity type, and its blocking: which known names a mention's key
is compared with in the fuzzy stage (rare words, sorted neighbourhoods of the compact key,
acronyms), how they are scored, and the one-typo rule a fuzzy match must pass."""

from __future__ import annotations

import re
from bisect import bisect_left
from itertools import chain
from typing import Iterable

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from .results import Thresholds

_extract, _cpdist, _ratio, _osa = process.extract, process.cpdist, fuzz.ratio, OSA.distance
DIGITS = re.compile(r"\d+")  # the numbers of a key: two keys with different ones differ


def put_multi(table: dict, key, value) -> None:
    """Add ``value`` under ``key`` in a multimap storing one value bare, several as a tuple."""
    old = table.setdefault(key, value)
    if old is value or old == value:
        return
    if isinstance(old, tuple):
        if value not in old:
            table[key] = old + (value,)
    else:
        table[key] = (old, value)


def get_multi(table: dict, key) -> tuple:
    found = table.get(key)
    return () if found is None else found if isinstance(found, tuple) else (found,)


def _neighbourhoods(flat: np.ndarray, start: np.ndarray, where: np.ndarray,
                    width: int) -> tuple[np.ndarray, np.ndarray]:
    """The sorted neighbourhoods of a batch's keys: the ``k``-th key sits before sorted key
    ``where[k]`` and has the slots of the ``width`` sorted keys either side (``flat`` from
    ``start[i]`` on for sorted key ``i``); as (key number, slot) arrays."""
    lo = start[np.maximum(where - width, 0)]
    lengths = start[np.minimum(where + width, len(start) - 1)] - lo
    ends = np.cumsum(lengths)
    q = np.repeat(np.arange(len(where), dtype=np.int64), lengths)
    return q, flat[np.arange(ends[-1] if len(ends) else 0) + np.repeat(lo - ends + lengths,
                                                                       lengths)]


def _may_reach(a: np.ndarray, b: np.ndarray, cutoff: float) -> np.ndarray:
    """Whether strings of lengths ``a`` and ``b`` may have a ``fuzz.ratio`` of ``cutoff``:
    at best the shorter is all of the longer, ``200 * min / (a + b)``."""
    return 200 * np.minimum(a, b) >= cutoff * (a + b) - 1e-6


class TypeIndex:
    """The name keys of one type's entities, with the blocking structures over them.

    A *slot* is one distinct key; several entities may share it.
    """

    def __init__(self) -> None:
        self.keys: list[str] = []  # slot -> key
        self.compacts: list[str] = []  # slot -> key without spaces
        self.sorted_keys: list[str] = []  # slot -> key with its words sorted
        self.owners: dict[int, tuple[int, ...]] = {}  # slot -> entity numbers
        self.by_key: dict[str, int] = {}
        self.by_compact: dict[str, tuple[int, ...]] = {}
        self.by_word: dict[str, list[int]] = {}
        self.by_acronym: dict[str, int | tuple] = {}
        self._views: tuple[list, ...] | None = None
        self._arrays: tuple | None = None  # the views as arrays (scores_many)
        self._common: dict[str, set[int]] = {}  # word -> its postings as a set (cache)

    def add(self, entries: Iterable[tuple[str, int, Iterable[str]]]) -> None:
        """Index each ``(key, entity, acronyms)``: the entity under the key, and under each
        acronym of 2+ letters; the keys new here get their slots and blocks together."""
        by_key, owners, by_acronym = self.by_key, self.owners, self.by_acronym
        new: list[str] = []
        for key, ent, acronyms in entries:
            slot = by_key.get(key)
            if slot is None:
                slot = by_key[key] = len(by_key)
                new.append(key)
                owners[slot] = (ent,)
            elif ent not in owners[slot]:
                owners[slot] += (ent,)
            for acr in acronyms:
                if len(acr) >= 2:
                    put_multi(by_acronym, acr, slot)
        if not new:
            return
        start = len(self.keys)
        self.keys += new
        compacts = [key.replace(" ", "") for key in new]
        self.compacts += compacts
        splits = [key.split() for key in new]
        self.sorted_keys += [key if len(split) == 1 else " ".join(sorted(split))
                             for key, split in zip(new, splits)]
        by_compact, by_word = self.by_compact, self.by_word
        for slot, compact in enumerate(compacts, start):
            same = by_compact.get(compact)
            by_compact[compact] = (slot,) if same is None else same + (slot,)
        for slot, split in enumerate(splits, start):
            for w in (split if len(split) == 1 else set(split)):
                postings = by_word.get(w)
                if postings is None:
                    by_word[w] = [slot]
                else:
                    postings.append(slot)
        self._common.clear()
        self._views = self._arrays = None

    def exact(self, key: str, compacts: Iterable[str] = ()) -> set[int]:
        """Slots whose key equals ``key`` or whose compact key is one of ``compacts``."""
        out: set[int] = set()
        get = self.by_compact.get
        for c in compacts:
            found = get(c)
            if found is not None:
                out.update(found)
        slot = self.by_key.get(key)
        if slot is not None:
            out.add(slot)
        return out

    def block(self, key: str, th: Thresholds) -> list[int]:
        """Candidate slots for a fuzzy comparison with ``key``.

        An unknown word of ``key`` stands for its vocabulary neighbours within two edits, and
        the key with one such correction is looked up as a whole. Then: names with a rare
        word; when all words are common, names sharing the two rarest; and the sorted
        neighbourhoods of the compact key, forwards and backwards.
        """
        compacts, rcompacts, vocab, rvocab, cslots, rcslots = self._views or self.views()
        out: set[int] = set()
        for found in self._word_blocks(key, th, vocab, rvocab):
            out.update(found)
        compact = key.replace(" ", "")
        width = th.window
        i = bisect_left(compacts, compact)
        for found in cslots[max(0, i - width):i + width]:
            out.update(found)
        i = bisect_left(rcompacts, compact[::-1])
        for found in rcslots[max(0, i - width):i + width]:
            out.update(found)
        return list(out)

    def _word_blocks(self, key: str, th: Thresholds, vocab, rvocab) -> list:
        """The slot collections :meth:`block` takes from the words of ``key``."""
        by_word, max_df = self.by_word, th.max_df
        out: list = []
        rare = False
        common: list[tuple[int, str]] = []  # (names, word) of the words in more than max_df
        split = key.split()
        for w in (split if len(split) == 1 else set(split)):
            postings = by_word.get(w)
            if postings is None:
                if len(w) >= 4:
                    rare |= self._neighbours(w, split, vocab, rvocab, max_df, out, common)
            elif len(postings) <= max_df:
                out.append(postings)
                rare = True
            else:
                common.append((len(postings), w))
        if not rare and len(common) >= 2:  # names sharing the two rarest common words
            (_, a), (_, b) = sorted(common)[:2]
            out.append(self._common_set(a) & self._common_set(b))
        return out

    def _neighbours(self, w: str, split: list[str], vocab, rvocab, max_df: int, out: list,
                    common: list) -> bool:
        """For an unknown word ``w`` of a key: the postings of its vocabulary neighbours
        within two edits (rare ones into ``out``, else into ``common``) and the key with one
        of them for ``w`` as a whole; whether a rare neighbour was found."""
        by_word = self.by_word
        i = bisect_left(vocab, w)
        near = vocab[max(0, i - 2):i + 2]
        i = bisect_left(rvocab, w[::-1])
        near += [x[::-1] for x in rvocab[max(0, i - 2):i + 2]]
        rare = False
        for n in near:
            if _osa(w, n, score_cutoff=2) <= 2:
                postings = by_word[n]
                if len(postings) <= max_df:
                    out.append(postings)
                    rare = True
                else:
                    common.append((len(postings), n))
                slot = self.by_key.get(" ".join(n if x == w else x for x in split))
                if slot is not None:
                    out.append((slot,))
        return rare

    def _common_set(self, word: str) -> set[int]:
        """The postings of ``word`` as a set (cached until new slots come)."""
        found = self._common.get(word)
        if found is None:
            found = self._common[word] = set(self.by_word[word])
        return found

    def scores(self, key: str, slots: list[int], cutoff: float) -> dict[int, float]:
        """Similarity of ``key`` to each slot's key, where at least ``cutoff``.

        The better of the compact forms' ratio (separators do not matter) and the word-order
        free ratio of the keys.
        """
        out: dict[int, float] = {}
        for _, sc, i in _extract(key.replace(" ", ""), list(map(self.compacts.__getitem__, slots)),
                                 scorer=_ratio, limit=None, score_cutoff=cutoff):
            out[slots[i]] = sc
        if " " in key:  # token_sort_ratio, the slots' sorted keys made once
            get = out.get
            for _, sc, i in _extract(" ".join(sorted(key.split())),
                                     list(map(self.sorted_keys.__getitem__, slots)),
                                     scorer=_ratio, limit=None, score_cutoff=cutoff):
                slot = slots[i]
                old = get(slot)
                out[slot] = sc if old is None or sc > old else old
        return out

    def scores_many(self, keys: list[str], th: Thresholds, cutoff: float) -> list[dict[int, float]]:
        """``scores(key, block(key, th), cutoff)`` for each of ``keys``, the batch at once:
        the candidates of all keys as one array of (key, slot) pairs, each pair scored in one
        rapidfuzz call per form (compact, words sorted)."""
        if not keys:
            return []
        compacts, rcompacts, vocab, rvocab, _, _ = self._views or self.views()
        cflat, cstart, rflat, rstart, cobj, sobj, clen, slen = self._arrays or self.prepare()
        compact = [k.replace(" ", "") for k in keys]
        cand: list[int] = []
        counts: list[int] = []
        for key in keys:
            before = len(cand)
            for found in self._word_blocks(key, th, vocab, rvocab):
                cand.extend(found)
            counts.append(len(cand) - before)
        qs = [np.repeat(np.arange(len(keys), dtype=np.int64), counts)]
        slots = [np.array(cand, dtype=np.int64)]
        for flat, start, where in ((cflat, cstart, [bisect_left(compacts, c) for c in compact]),
                                   (rflat, rstart, [bisect_left(rcompacts, c[::-1])
                                                    for c in compact])):
            q, found = _neighbourhoods(flat, start, np.array(where, dtype=np.int64), th.window)
            qs.append(q)
            slots.append(found)
        qs, slots = np.concatenate(qs), np.concatenate(slots)
        spaced = np.array([" " in k for k in keys])
        words = [" ".join(sorted(k.split())) for k in keys] if spaced.any() else []
        near = _may_reach(np.array(list(map(len, compact)))[qs], clen[slots], cutoff)
        if words:  # (or the word-order free ratio may)
            near |= spaced[qs] & _may_reach(np.array(list(map(len, words)))[qs], slen[slots],
                                            cutoff)
        size = len(self.keys)
        pairs = np.unique(qs[near] * size + slots[near])
        out: list[dict[int, float]] = [{} for _ in keys]
        if not len(pairs):
            return out
        qs, slots = np.divmod(pairs, size)
        score = _cpdist(np.array(compact, dtype=object)[qs], cobj[slots], scorer=_ratio,
                        dtype=np.float64, score_cutoff=cutoff)
        spaced = spaced[qs]
        if spaced.any():  # token_sort_ratio of the keys with several words
            score[spaced] = np.maximum(score[spaced], _cpdist(
                np.array(words, dtype=object)[qs[spaced]], sobj[slots[spaced]], scorer=_ratio,
                dtype=np.float64, score_cutoff=cutoff))
        keep = score >= cutoff
        for q, slot, s in zip(qs[keep].tolist(), slots[keep].tolist(), score[keep].tolist()):
            out[q][slot] = s
        return out

    def prepare(self) -> tuple:
        """:meth:`views` made for :meth:`scores_many` (cached): the slots of the sorted compact
        keys and reversed ones as flat arrays with each key's start, and every slot's compact
        and sorted key and their lengths as arrays."""
        cslots, rcslots = (self._views or self.views())[4:]
        flat = []
        for groups in (cslots, rcslots):
            lengths = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
            flat += [np.fromiter(chain.from_iterable(groups), dtype=np.int64,
                                 count=int(lengths.sum())),
                     np.concatenate(([0], np.cumsum(lengths)))]
        self._arrays = (*flat, np.array(self.compacts, dtype=object),
                        np.array(self.sorted_keys, dtype=object),
                        np.fromiter(map(len, self.compacts), np.int64, len(self.compacts)),
                        np.fromiter(map(len, self.sorted_keys), np.int64, len(self.keys)))
        return self._arrays

    def containing(self, key: str) -> list[int]:
        """Slots whose key holds all of ``key``'s words in a row, and more."""
        words = key.split()
        postings = sorted((self.by_word.get(w, ()) for w in set(words)), key=len)
        if not postings or not postings[0]:
            return []
        found = set(postings[0]).intersection(*postings[1:])
        padded = f" {key} "
        return sorted((s for s in found if self.keys[s] != key and padded in f" {self.keys[s]} "),
                      key=self.keys.__getitem__)

    def views(self) -> tuple[list, ...]:
        """Sorted compact keys, reversed compact keys, words and reversed words, and the slots
        of each sorted (reversed) compact key (cached)."""
        if self._views is None:
            by_compact = self.by_compact
            compacts = sorted(by_compact)
            by_reversed = {c[::-1]: slots for c, slots in by_compact.items()}
            rcompacts = sorted(by_reversed)
            self._views = (compacts, rcompacts, sorted(self.by_word),
                           sorted(w[::-1] for w in self.by_word),
                           list(map(by_compact.__getitem__, compacts)),
                           list(map(by_reversed.__getitem__, rcompacts)))
        return self._views


def typo_only(mention_key: str, key: str, vocabulary: dict) -> bool:
    """Whether the keys differ only by word order and one misspelt word of the mention.

    Both words must have 5+ letters, share the first letter, be one edit apart (two from 9
    letters), and neither may start or end the other (``jsonc`` is no typo of ``json``). The
    misspelt word must not be a word of the type's vocabulary (``router`` is no typo of
    ``route``).
    """
    a, missing = mention_key.split(), key.split()
    if len(a) != len(missing):  # one extra and one missing word keep the count
        return False
    extra = []
    for w in a:  # the multiset differences, both ways
        if w in missing:
            missing.remove(w)
        else:
            extra.append(w)
    if not extra:
        return True
    if len(extra) != 1:
        return False
    word, target = extra[0], missing[0]
    short, long = sorted((word, target), key=len)
    return (len(short) >= 5 and word not in vocabulary
            and word[0] == target[0] and not long.startswith(short) and not long.endswith(short)
            and OSA.distance(word, target) <= (2 if len(target) >= 9 else 1))
