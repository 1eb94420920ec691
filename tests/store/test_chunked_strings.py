"""The read model's chunked columns (kgbuild/store/strings.py ``ChunkedStrings``): read and
spliced like one :class:`Strings` column, a splice making again only the chunks whose rows
changed (the others the very arrays, so that a saved model's files are hard-linked), chunks
cut when they grow too large, damaged chunks refused."""

from __future__ import annotations

import bisect
import re
import shutil

import numpy as np
import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from kgbuild.project.pipeline import build_graph
from kgbuild.schema.loader import load_schema
from kgbuild.store import storemodel, strings
from kgbuild.store.graphstore import GraphStore
from kgbuild.store.modelfiles import current, save
from kgbuild.store.readmodel import graph_tables, model_arrays, model_of
from kgbuild.store.strings import ChunkedStrings, Strings

FIXTURE = REPO / "fixtures" / "catalog"
SCHEMA = load_schema()


def _sizes(c: Strings) -> np.ndarray:
    return np.diff(np.asarray(c.ends), prepend=0)


def _canonical(column: ChunkedStrings) -> bool:
    """Whether each chunk is closed at the first row that brings it to CHUNK bytes (one
    empty chunk for no rows)."""
    if not column.chunks or any(not len(c) for c in column.chunks[1:]):
        return False
    return all(_sizes(c)[:-1].sum() < strings.CHUNK for c in column.chunks) and all(
        _sizes(c).sum() >= strings.CHUNK for c in column.chunks[:-1])


@st.composite
def splices(draw, n: int) -> tuple[np.ndarray, list[bytes]]:
    """A splice of ``n`` rows: some kept (in order), fresh ones put anywhere among them."""
    rows: list = [i for i in range(n) if draw(st.booleans()) or draw(st.booleans())]
    for at, x in draw(st.lists(st.tuples(st.integers(0, n), st.binary(max_size=9)),
                               max_size=6)):
        rows.insert(min(at, len(rows)), x)
    take = [-1 if isinstance(r, bytes) else r for r in rows]
    return np.array(take, dtype=np.int64), [r for r in rows if isinstance(r, bytes)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=9), max_size=40), st.integers(1, 24), st.data())
def test_chunked_strings_read_and_splice_as_plain_strings(items, chunk, data):
    """Random columns chunked at random sizes, then spliced again and again: the same items
    as a plain column spliced alike; each old chunk given exactly its own rows (no fresh row
    after one of them) is the same object, every other chunk a new one; a chunk made again
    larger than twice the target is cut back to the target."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(strings, "CHUNK", chunk)
        column, plain = ChunkedStrings.of(items), Strings.of(items)
        assert _canonical(column)
        for _ in range(data.draw(st.integers(1, 4))):
            assert list(column.raws()) == list(plain.raws()) and len(column) == len(plain)
            assert [column.raw(i) for i in range(len(column))] == list(plain.raws())
            assert all(column.empty(i) == (not plain.raw(i)) for i in range(len(plain)))
            take, fresh = data.draw(splices(len(plain)))
            spliced = column.splice(take, fresh)
            plain = Strings(*plain.splice(take, fresh))
            # per new row its old chunk: a fresh row's that of the nearest kept row before it
            owner, k = [], 0
            for t in take.tolist():
                k = bisect.bisect_right(column.starts.tolist(), t) - 1 if t >= 0 else k
                owner.append(k)
            kept = [c for k, c in enumerate(column.chunks)
                    if owner.count(k) == len(c) and all(
                        t >= 0 for t, o in zip(take.tolist(), owner) if o == k)]
            assert [c for c in spliced.chunks if any(c is x for x in column.chunks)] == kept
            for c in spliced.chunks:
                if not any(c is x for x in column.chunks):
                    assert len(c.blob) <= 2 * chunk or _sizes(c)[:-1].sum() < chunk
            assert all(len(c) for c in spliced.chunks) or len(spliced.chunks) == 1 == len(plain) + 1
            assert spliced.chunks and sum(len(c) for c in spliced.chunks) == len(plain)
            column = spliced
        assert list(column.raws()) == list(plain.raws())


def test_a_chunk_grown_past_twice_the_target_is_cut(monkeypatch):
    monkeypatch.setattr(strings, "CHUNK", 10)
    column = ChunkedStrings.of([b"aaaa"] * 9)  # 4-byte rows: chunks of 3, 3 and 3 rows
    assert [len(c) for c in column.chunks] == [3, 3, 3]
    take = np.array([0, 1, 2, 3, -1, -1, 4, 5, 6, 7, 8])  # 8 bytes more: 20, not cut
    grown = column.splice(take, [b"bbbb", b"cccc"])
    assert [len(c) for c in grown.chunks] == [3, 5, 3]
    assert grown.chunks[0] is column.chunks[0] and grown.chunks[2] is column.chunks[2]
    take = np.array([0, 1, 2, 3, 4, 5, -1, 6, 7, 8, 9, 10])  # 21 bytes: cut at 10 bytes
    cut = grown.splice(take, [b"d"])
    assert [len(c) for c in cut.chunks] == [3, 3, 3, 3]
    assert [list(c.raws()) for c in cut.chunks[1:3]] == [[b"aaaa", b"bbbb", b"cccc"],
                                                         [b"d", b"aaaa", b"aaaa"]]
    assert cut.chunks[0] is column.chunks[0] and cut.chunks[3] is column.chunks[2]
    gone = cut.splice(np.array([0, 1, 2, 9, 10, 11]), [])  # the middle chunks' rows all gone
    assert gone.chunks == [column.chunks[0], column.chunks[2]]
    empty = gone.splice(np.zeros(0, dtype=np.int64), [])
    assert len(empty) == 0 and len(empty.chunks) == 1
    assert list(empty.splice(np.array([-1]), [b"x"]).raws()) == [b"x"]
    with pytest.raises(ValueError):  # the old rows out of order
        column.splice(np.array([1, 0]), [])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=9), min_size=1, max_size=40), st.integers(1, 24), st.data())
def test_rows_replaced_make_again_only_their_chunks(items, chunk, data):
    """Random rows replaced in random columns: the items are the old ones with those rows
    replaced, the chunks of no replaced row are the very chunks they were, and a chunk made
    again past twice the target is cut."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(strings, "CHUNK", chunk)
        column = ChunkedStrings.of(items)
        rows = data.draw(st.dictionaries(st.integers(0, len(items) - 1),
                                         st.binary(max_size=30), max_size=5))
        new = column.edited([], rows, [])
        assert list(new.raws()) == [rows.get(i, x) for i, x in enumerate(items)]
        touched = {bisect.bisect_right(column.starts.tolist(), i) - 1 for i in rows}
        kept = [c for k, c in enumerate(column.chunks) if k not in touched]
        assert [c for c in new.chunks if any(c is x for x in column.chunks)] == kept
        assert all(len(c.blob) <= 2 * chunk or _sizes(c)[:-1].sum() < chunk
                   for c in new.chunks if not any(c is x for x in column.chunks))
        alike = column.edited([], {i: x[::-1] for i, x in rows.items() if i < len(items)
                                   for x in (items[i],)}, [])  # (each row the length it was: a
        # chunk not over twice the target keeps its ends; a larger one, an older model's, is cut)
        assert list(alike.raws()) == [x[::-1] if i in rows else x for i, x in enumerate(items)]
        kept_ends = [c.ends for c in column.chunks if len(c.blob) <= 2 * chunk]
        assert all(any(a.ends is e for a in alike.chunks) for e in kept_ends)  # (the same ends)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=9), max_size=40), st.integers(1, 24), st.data())
def test_rows_removed_replaced_and_inserted_make_again_only_their_chunks(items, chunk, data):
    """Random removals, replacements and insertions: the items are those of the old column
    so edited, a chunk with no row edited (an insertion's: the chunk of the row before it)
    is the very chunk it was, and no chunk is left empty but the only one."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(strings, "CHUNK", chunk)
        column = ChunkedStrings.of(items)
        rows = list(range(len(items)))
        removed = data.draw(st.sets(st.sampled_from(rows))) if rows else set()
        replaced = data.draw(st.dictionaries(st.sampled_from(rows), st.binary(max_size=12))
                             ) if rows else {}
        replaced = {i: x for i, x in replaced.items() if i not in removed}
        inserted = data.draw(st.lists(st.tuples(st.integers(0, len(items)),
                                                st.binary(max_size=12)), max_size=6))
        new = column.edited(sorted(removed), replaced, inserted)
        expected = []
        for i in range(len(items) + 1):
            expected += [x for r, x in inserted if r == i]
            if i < len(items) and i not in removed:
                expected.append(replaced.get(i, items[i]))
        assert list(new.raws()) == expected and len(new) == len(expected)
        edited = {bisect.bisect_right(column.starts.tolist(), i) - 1
                  for i in [*removed, *replaced, *(max(r - 1, 0) for r, _ in inserted)]}
        kept = [c for k, c in enumerate(column.chunks) if k not in edited]
        assert [c for c in new.chunks if any(c is x for x in column.chunks)] == kept
        assert all(len(c) for c in new.chunks) or len(new.chunks) == 1


def test_a_column_saved_unchunked_is_read_as_one_chunk():
    """A model's column saved as ``<name>_blob`` and ``<name>_ends`` (the sources and facets
    of models made before they were chunked) reads as a column of one chunk, the same
    arrays."""
    blob, ends = Strings.pack([b"ab", b"", b"cde"])
    column = ChunkedStrings.saved({"sources_blob": blob, "sources_ends": ends}, "sources")
    assert list(column.raws()) == [b"ab", b"", b"cde"] and len(column.chunks) == 1
    assert column.chunks[0].blob is blob and column.chunks[0].ends is ends
    with pytest.raises(ValueError):
        ChunkedStrings.saved({"sources_blob": blob}, "sources")


@pytest.mark.parametrize("damage", ["missing", "missing-ends", "none", "stray", "descending",
                                    "short", "long", "negative"])
def test_inconsistent_chunks_are_refused(monkeypatch, damage):
    monkeypatch.setattr(strings, "CHUNK", 500)
    tables = graph_tables(build_graph([FIXTURE], SCHEMA, timestamp=0, validate=False,
                                      resolve=False).graph)
    arrays, meta = model_arrays(tables, SCHEMA), tables.meta
    model = model_of(arrays, meta, SCHEMA)
    assert len(model.records.chunks) > 3 and len(model.info.chunks) > 1
    assert [model.records.raw(i) for i in range(len(model.records))] == tables.records
    assert list(model.info) == tables.info and model.info[-1] == tables.info[-1]
    ends = arrays["records_c00001_ends"].copy()
    assert len(ends) > 1
    if damage == "missing":
        del arrays["records_c00001_blob"], arrays["records_c00001_ends"]
    elif damage == "missing-ends":
        del arrays["info_c00000_ends"]
    elif damage == "none":
        arrays = {k: a for k, a in arrays.items() if not k.startswith("info_c")}
    elif damage == "stray":
        arrays["records_c99999_blob"] = arrays["records_c00000_blob"]
    elif damage == "descending":
        ends[0] = ends[-1] + 1  # (its last end still the blob's length)
    elif damage == "short":
        arrays["records_c00001_blob"] = arrays["records_c00001_blob"][:-1]
    elif damage == "long":
        ends[-1] -= 1
    else:
        ends[0] = -1
    if damage in ("descending", "long", "negative"):
        arrays["records_c00001_ends"] = ends
    with pytest.raises(ValueError):
        model_of(arrays, meta, SCHEMA)


def test_a_one_document_change_links_the_chunks_it_left_as_they_were(tmp_path, monkeypatch):
    """Chunks of 600 bytes: after one document's change (applied to the saved model, not
    made whole) every chunk holding what a chunk of the model before held is that chunk's
    files hard-linked (the same inodes), and most are; the model equals the whole graph's
    item for item. A saved model missing a chunk file is made again."""
    monkeypatch.setattr(strings, "CHUNK", 600)
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    build_graph([folder], SCHEMA, store=store, timestamp=0, validate=False, resolve=False,
                root=folder.parent).store.close()
    root = store / "model"
    old = _chunks(root / (root / "current").read_text())
    assert sum(1 for c in old if c.startswith("records_")) > 5
    path = folder / "components" / "web-shop.yaml"
    path.write_text(path.read_text().replace("owner: ", "owner: someone-else\n  x-owner: ", 1))
    monkeypatch.setattr(storemodel, "_whole", lambda *a: pytest.fail("made whole"))
    build_graph([folder], SCHEMA, store=store, timestamp=0, validate=False, resolve=False,
                root=folder.parent).store.close()
    new = root / (root / "current").read_text()
    chunks, before = _chunks(new), {data: inodes for data, inodes in old.values()}
    linked = [c for c, (data, inodes) in chunks.items() if before.get(data) == inodes]
    held = [c for c, (data, _) in chunks.items() if data in before]
    written = sorted(chunks.keys() - set(linked))
    assert linked == held and len(linked) > 2 * len(written) > 0, written
    assert any(c.startswith("records_") for c in written)
    monkeypatch.undo()
    with GraphStore(store, SCHEMA, write=False) as st:
        model = st.read_model()
        assert model.folder == new
        whole = model_of(*storemodel._whole(st, st.knowledge_graph()), SCHEMA)
    for name in ("records", "info"):
        assert list(getattr(model, name).raws()) == list(getattr(whole, name).raws()), name
    (new / "records_c00001_ends.npy").unlink()
    assert current(root, SCHEMA) is None


def _chunks(folder) -> dict[str, tuple[tuple[bytes, bytes], tuple[int, int]]]:
    """Per chunk of a saved model (``records_c00001``) its blob's and ends' bytes, and their
    inodes."""
    out = {}
    for p in folder.glob("*_blob.npy"):
        if re.fullmatch(r"\w+_c\d+", key := p.name[:-len("_blob.npy")]):
            ends = folder / f"{key}_ends.npy"
            out[key] = ((p.read_bytes(), ends.read_bytes()), (p.stat().st_ino,
                                                               ends.stat().st_ino))
    return out


def test_a_renumbered_chunk_is_linked_from_the_file_it_maps(tmp_path):
    """A chunk numbered otherwise than before (a chunk before it cut or gone) is still the
    file it is the mapping of, hard-linked."""
    first = save({"x_c00000_blob": np.arange(5, dtype=np.uint8),
                  "x_c00001_blob": np.arange(7, dtype=np.uint8)}, {}, tmp_path)
    inode = (first / "x_c00001_blob.npy").stat().st_ino
    mapped = np.load(first / "x_c00001_blob.npy", mmap_mode="r").view(np.ndarray)
    second = save({"x_c00000_blob": mapped}, {}, tmp_path, like=first)
    assert (second / "x_c00000_blob.npy").stat().st_ino == inode
