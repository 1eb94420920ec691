"""A read model on disk: one folder of ``.npy`` files and ``meta.json``, opened memory-mapped.

Under a root folder, ``current`` names the model in use (``s-<random>/``); a new model is
written beside it and ``current`` replaced atomically, so a reader opens the old one or the
new one, never a part. The label sets' views live in ``views/<key>/``, each such a root, at
most :data:`MAX_VIEWS` of them (the least recently made go). Anything missing, partial,
damaged or of another format is made again, never trusted.

The confidence, time-code and list columns are mapped copy-on-write, so that a patch
saved beside a file (:func:`~kgbuild.store.readmodel.apply_patches`) is applied in memory,
to the pages it touches, and a commit can write over them before saving its own patch.

Checking every number of a model is in range reads every page of it (at 10M edges, a
quarter of a second and half a gigabyte of a walk's memory). A folder records, in
:data:`CHECKED`, its files as they were when written or last checked whole (inode, size,
modification time); while they stay so, opening it checks sizes and types only. A file
changed, replaced or copied (another inode) is checked whole again.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..io.atomic import atomic_write
from .readmodel import FORMAT, GraphModel, apply_patches, model_of, patchable

VIEWS = "views"
CHECKED = "checked.json"  # in a model folder: its files as they were when last checked
SCRATCH = ".scratch-"  # in a root: the files of a model being made
MAX_VIEWS = 4  # label sets whose views are kept
RETRIES = 5  # lookups of ``current`` while writers keep replacing the model


def save(arrays: dict[str, np.ndarray], meta: dict, root: Path, like: Path | None = None) -> Path:
    """Write the columns ``arrays`` and ``meta`` as a new model folder under ``root`` and make
    it the current one; earlier ones are removed. A column that is a file of folder ``like``
    (the model it was made from) mapped, or equal to the file of its name there, is that file
    hard-linked, not written again (files are never changed once written). Returns the
    folder."""
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"s-{uuid.uuid4().hex[:16]}"
    tmp = root / f".tmp-{folder.name}"
    tmp.mkdir()
    try:
        for name, a in arrays.items():
            if not (like is not None and _linked(like, name, a, tmp / f"{name}.npy")):
                np.save(tmp / f"{name}.npy", a, allow_pickle=False)
        (tmp / "meta.json").write_text(json.dumps(meta, sort_keys=True))
        (tmp / CHECKED).write_text(json.dumps(_stats(sorted(tmp.glob("*.npy")))))
        os.replace(tmp, folder)
        pointer = root / f".current-{folder.name}"
        pointer.write_text(folder.name)
        os.replace(pointer, root / "current")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for old in root.iterdir():
        if old.name.startswith("s-") and old.name != folder.name:
            shutil.rmtree(old, ignore_errors=True)
    return folder


def _linked(like: Path, name: str, a: np.ndarray, new: Path) -> bool:
    """Hard-link as ``new`` the file of folder ``like`` holding the array ``a``: the one ``a``
    is the whole mapping of (whatever its name: a chunk renumbered), else the file of column
    ``name`` when equal to ``a``; whether it did."""
    try:
        mapped = a.base if isinstance(a.base, np.memmap) else None
        if (mapped is not None and mapped.filename
                and os.path.samefile(Path(mapped.filename).parent, like)
                and mapped.shape == a.shape and mapped.dtype == a.dtype
                and mapped.ctypes.data == a.ctypes.data):
            old = Path(mapped.filename)
        else:
            old = like / f"{name}.npy"
            held = np.load(old, mmap_mode="r", allow_pickle=False)
            if held.dtype != a.dtype or held.shape != a.shape or not _equal(held, a):
                return False
        os.link(old, new)
    except (OSError, ValueError):
        return False
    return True


def _equal(a: np.ndarray, b: np.ndarray, block: int = 1 << 20) -> bool:
    """Whether two arrays of one shape are equal, compared a block at a time: two columns
    that differ (a renumbered list) usually differ early, and are then not read whole."""
    return all(np.array_equal(a[i:i + block], b[i:i + block]) for i in range(0, len(a), block))


def load(folder: Path, schema) -> GraphModel:
    """Open a saved model (columns memory-mapped); raises on anything incomplete."""
    files = sorted(folder.glob("*.npy")) + [folder / "meta.json"]
    if not all(p.is_file() for p in files):
        raise ValueError("not a read model's regular files")
    meta = json.loads((folder / "meta.json").read_text())
    if meta.get("format") != FORMAT:
        raise ValueError("another read model format")
    # plain arrays over the mapped pages (a memmap's indexing costs Python calls per item);
    # the columns a commit may patch mapped copy-on-write, their patches applied (in memory:
    # the pages they touch are this process's, the files stay as they were)
    arr = {p.stem: np.load(p, mmap_mode="c" if patchable(p.stem) else "r",
                           allow_pickle=False).view(np.ndarray) for p in files[:-1]}
    apply_patches(arr)
    if "names_blob" not in arr:
        raise ValueError("a read model without its names")
    checked = _checked(folder, files[:-1])
    try:
        model = model_of(arr, meta, schema, folder, checked)
    except KeyError as exc:  # a column missing: listed while a writer was removing the folder
        raise ValueError(f"an incomplete read model (no {exc})") from None
    if not checked:
        with contextlib.suppress(OSError):  # (a folder that cannot be written: checked again)
            atomic_write(folder / CHECKED, json.dumps(_stats(files[:-1])), durable=False)
    return model


def _stats(files: list[Path]) -> dict[str, list[int]]:
    """Each file's inode, size and modification time, by name."""
    return {p.name: [st.st_ino, st.st_size, st.st_mtime_ns] for p in files
            for st in (p.stat(),)}


def _checked(folder: Path, files: list[Path]) -> bool:
    """Whether ``files`` (every column of ``folder``) are as :data:`CHECKED` records them."""
    try:
        return json.loads((folder / CHECKED).read_bytes()) == _stats(files)
    except (OSError, ValueError):
        return False


def current(root: Path, schema) -> GraphModel | None:
    """The saved model ``root/current`` names, or None (missing, partial or damaged). A model
    that a writer replaced (and removed) between reading the name and opening the files is
    looked up again: the name has changed then."""
    name = None
    for _ in range(RETRIES):
        try:
            seen, name = name, current_name(root)
            if name is None or name == seen:
                return None
            return load(root / name, schema)
        except Exception:  # noqa: BLE001 - missing, partial or damaged: made again
            continue
    return None


def current_name(root: Path) -> str | None:
    """The model folder ``root/current`` names, None when it names none (raises OSError when
    it cannot be read)."""
    if not (root / "current").is_file():  # (a FIFO or device is never opened)
        return None
    name = (root / "current").read_text()[:100].strip()
    return name if name.startswith("s-") and "/" not in name else None


def saved(root: Path, schema, make: Callable[[Path], tuple[dict, dict]],
          like: Path | None = None, opening: bool = True) -> GraphModel | None:
    """``make(scratch)``'s columns and metadata saved as the current model under ``root``
    (``scratch``: a new folder there for the largest columns made as files, then linked,
    not copied; ``like``: the model they were made from, whose equal files are linked),
    and opened (``opening=False``: not, and None returned); raises OSError where ``root``
    cannot be written."""
    scratch = root / f"{SCRATCH}{uuid.uuid4().hex[:16]}"
    made = list(itertools.takewhile(lambda p: not p.exists(), scratch.parents))
    try:
        scratch.mkdir(parents=True)
        arrays, meta = make(scratch)
        folder = save(arrays, meta, root, scratch if _in(arrays, scratch) else like)
        if not opening:  # (its sizes checked all the same: a column short is an error)
            model_of(arrays, meta, schema, checked=True)
            return None
        try:
            return load(folder, schema)
        except (OSError, ValueError):  # (replaced at once by another's: this one in memory)
            arrays = dict(arrays)
            apply_patches(arrays)
            return model_of(arrays, meta, schema)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        for folder in made:  # (made for the scratch folder and left empty: none left)
            with contextlib.suppress(OSError):
                folder.rmdir()


def _in(arrays: dict, folder: Path) -> bool:
    """Whether some of ``arrays`` are files of ``folder`` mapped."""
    return any(isinstance(a.base, np.memmap) and Path(a.base.filename).parent == folder.resolve()
               for a in arrays.values())


def opened(root: Path | None, schema, fresh: Callable[[GraphModel], bool],
           make: Callable[[Path | None], tuple[dict, dict]]) -> GraphModel:
    """The model saved under ``root`` when ``fresh(model)``, else ``make``'s (:func:`saved`)
    saved there, or made in memory (``make(None)``) and none left where ``root`` cannot be
    written."""
    previous = current(root, schema) if root else None
    if previous is not None and fresh(previous):
        return previous
    if root is not None:
        with contextlib.suppress(OSError):  # (a folder that cannot be written: in memory)
            return saved(root, schema, make)
    return model_of(*make(None), schema)


def prune(views: Path) -> None:
    """Keep the :data:`MAX_VIEWS` most recently made views."""
    try:
        made = sorted(views.iterdir(), key=lambda p: (p / "current").stat().st_mtime
                      if (p / "current").is_file() else 0, reverse=True)
    except OSError:
        return
    for old in made[MAX_VIEWS:]:
        shutil.rmtree(old, ignore_errors=True)
