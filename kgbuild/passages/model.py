"""The passage read model: arrays a query reads, made once per index revision.

``<store>/passages/cache/model-<revision>/`` holds, as ``.npy`` files opened memory-mapped:
the passages' rowids (row order), the rank of each passage ID in sorted order (ties broken
by ID, so two indexes of the same passages rank alike whatever their rowids), each row's
access label set, its title's name, and the links as CSR arrays both ways (row -> names it
mentions; name -> rows mentioning it; name -> rows it is the title of). Dense vectors of a
model are one ``float32`` matrix in row order (``dense-<model>-<key>.npy``). A cache that
cannot be written (a read-only store) is made in memory; a damaged one is made again.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..graph.access import Principal
from .index import PassageIndex

ARRAYS = ("rowids", "idrank", "labelset", "title", "out_ptr", "out_names", "in_ptr", "in_rows",
          "t_ptr", "t_rows")
KEEP = 2  # read models kept per store (the current one and the one before)


@dataclass
class ReadModel:
    """The arrays of one index revision (see the module docstring)."""

    revision: str
    rowids: np.ndarray
    idrank: np.ndarray
    labelset: np.ndarray
    labelsets: list[tuple[str, ...]]
    title: np.ndarray  # name index of each row's title, -1 without
    out_ptr: np.ndarray
    out_names: np.ndarray
    in_ptr: np.ndarray
    in_rows: np.ndarray
    t_ptr: np.ndarray
    t_rows: np.ndarray
    name_ids: list[int]  # name index -> names.id
    catalog: dict[int, list[tuple[str, tuple[str, ...]]]]  # name index -> (entity, access)

    @property
    def size(self) -> int:
        return len(self.rowids)

    def mask(self, principal: Principal | None) -> np.ndarray | None:
        """Rows the principal sees (None: every row)."""
        if principal is None or principal.everyone or all(not s for s in self.labelsets):
            return None
        ok = np.array([principal.can_see(s) for s in self.labelsets], dtype=bool)
        if ok.all():
            return None
        return ok[self.labelset]

    def entities(self, name: int, principal: Principal | None) -> list[str]:
        """The catalog entities behind a name that the principal sees."""
        return [node for node, access in self.catalog.get(name, ())
                if principal is None or principal.can_see(access)]

    def mentions(self, row: int) -> np.ndarray:
        return self.out_names[self.out_ptr[row]:self.out_ptr[row + 1]]

    def mentioned_by(self, name: int) -> np.ndarray:
        return self.in_rows[self.in_ptr[name]:self.in_ptr[name + 1]]

    def titled(self, name: int) -> np.ndarray:
        return self.t_rows[self.t_ptr[name]:self.t_ptr[name + 1]]


def _csr(keys: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((values, keys))
    ptr = np.zeros(size + 1, dtype=np.int64)
    np.add.at(ptr, keys + 1, 1)
    return np.cumsum(ptr), values[order].astype(np.int32)


def load_model(index: PassageIndex) -> ReadModel:
    """The current read model: from the cache, else made (and cached where possible)."""
    revision = index.revision
    cache = index.folder / "cache" / f"model-{revision}"
    model = _read(cache, revision)
    if model is not None:
        return model
    model = _make(index, revision)
    _write(cache, model)
    return model


def _read(folder: Path, revision: str) -> ReadModel | None:
    try:
        info = json.loads((folder / "info.json").read_text())
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                  for name in ARRAYS}
        if info.get("revision") != revision:
            return None
        model = ReadModel(revision, labelsets=[tuple(s) for s in info["labelsets"]],
                          name_ids=list(info["name_ids"]),
                          catalog={int(k): [(n, tuple(a)) for n, a in v]
                                   for k, v in info["catalog"].items()}, **arrays)
        if len(model.out_ptr) != model.size + 1 or len(model.in_ptr) != len(model.name_ids) + 1:
            return None
        return model
    except Exception:  # noqa: BLE001 - absent or damaged: made again
        return None


def _write(folder: Path, model: ReadModel) -> None:
    tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex}")
    try:
        tmp.mkdir(parents=True)
        for name in ARRAYS:
            np.save(tmp / f"{name}.npy", getattr(model, name), allow_pickle=False)
        (tmp / "info.json").write_text(json.dumps({"revision": model.revision,
                                                   "labelsets": model.labelsets,
                                                   "name_ids": model.name_ids,
                                                   "catalog": model.catalog}))
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
        _prune(folder.parent, keep=folder.name)
    except OSError:  # a read-only store: the model lives in memory for this process
        shutil.rmtree(tmp, ignore_errors=True)


def _prune(cache: Path, keep: str) -> None:
    """Remove read models, dense matrices and view indexes of older revisions (the newest
    few stay)."""
    models = sorted((p for p in cache.glob("model-*") if p.name != keep),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for old in models[KEEP - 1:]:
        revision = old.name.removeprefix("model-")
        shutil.rmtree(old, ignore_errors=True)
        for stale in [*cache.glob(f"dense-*-{revision}.npy"), *cache.glob(f"view-*-{revision}.sqlite")]:
            stale.unlink(missing_ok=True)


def _make(index: PassageIndex, revision: str) -> ReadModel:
    db = index.db
    rows = db.execute("SELECT rowid, id, access, title_key FROM passages ORDER BY rowid").fetchall()
    n = len(rows)
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    ids = [r[1] for r in rows]
    idrank = np.empty(n, dtype=np.int64)
    idrank[np.array(sorted(range(n), key=ids.__getitem__), dtype=np.int64)] = np.arange(n)
    sets: dict[str, int] = {}
    labelset = np.fromiter((sets.setdefault(r[2], len(sets)) for r in rows), dtype=np.int32, count=n)
    labelsets = [tuple(a for a in s.split(",") if a) for s in sets]
    names = db.execute("SELECT id, key FROM names ORDER BY id").fetchall()
    index_of = {nid: i for i, (nid, _) in enumerate(names)}
    by_key = {key: index_of[nid] for nid, key in names}
    title = np.fromiter((by_key.get(r[3], -1) if r[3] else -1 for r in rows), dtype=np.int32, count=n)
    position = {rid: i for i, rid in enumerate(rowids.tolist())}
    link_rows = db.execute("SELECT passage, name FROM links").fetchall()
    lp = np.fromiter((position[p] for p, _ in link_rows), dtype=np.int64, count=len(link_rows))
    ln = np.fromiter((index_of[m] for _, m in link_rows), dtype=np.int64, count=len(link_rows))
    out_ptr, out_names = _csr(lp, ln, n)
    in_ptr, in_rows = _csr(ln, lp, len(names))
    has = title >= 0
    t_ptr, t_rows = _csr(title[has].astype(np.int64), np.nonzero(has)[0].astype(np.int64), len(names))
    catalog: dict[int, list] = {}
    for nid, node, access in db.execute("SELECT name, node, access FROM catalog ORDER BY name, node"):
        if nid in index_of:
            catalog.setdefault(index_of[nid], []).append((node, tuple(a for a in access.split(",") if a)))
    return ReadModel(revision, rowids, idrank, labelset, labelsets, title, out_ptr, out_names,
                     in_ptr, in_rows, t_ptr, t_rows, [nid for nid, _ in names], catalog)


def dense_matrix(index: PassageIndex, model: ReadModel, key: str) -> tuple[np.ndarray, np.ndarray]:
    """The unit vectors of ``key`` (a model and its endpoint and prefix) in row order, and which
    rows have one; cached per revision and per state of the vectors."""
    state = index.meta(f"vectors:{key}") or "none"
    slug = hashlib.sha256(f"{key}\n{state}".encode()).hexdigest()[:16]
    path = index.folder / "cache" / f"dense-{slug}-{model.revision}.npy"
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
        if matrix.ndim == 2 and matrix.shape[0] == model.size:
            return matrix, np.asarray(matrix.any(axis=1)) if matrix.size else np.zeros(model.size, bool)
    except Exception:  # noqa: BLE001 - absent or damaged: made again
        pass
    position = {rid: i for i, rid in enumerate(model.rowids.tolist())}
    matrix = None
    for rowid, blob in index.db.execute(
            "SELECT p.rowid, v.vec FROM passages p JOIN vectors v ON v.model=? AND v.hash=p.ehash",
            (key,)):
        vec = np.frombuffer(blob, dtype=np.float32)
        if matrix is None:
            matrix = np.zeros((model.size, len(vec)), dtype=np.float32)
        if len(vec) == matrix.shape[1] and rowid in position:
            matrix[position[rowid]] = vec
    if matrix is None:
        matrix = np.zeros((model.size, 0), dtype=np.float32)
    try:
        tmp = path.with_name(f".{uuid.uuid4().hex}.tmp.npy")
        np.save(tmp, matrix, allow_pickle=False)
        tmp.rename(path)
        for old in path.parent.glob("dense-*.npy"):
            if old != path and re.match(rf"dense-{slug}-", old.name):
                old.unlink(missing_ok=True)
    except OSError:
        pass
    return matrix, matrix.any(axis=1) if matrix.size else np.zeros(model.size, bool)
