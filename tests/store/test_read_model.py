"""The store's read model: the same traversals as the store's whole graph, kept current by each
commit applying its change (equal to a model made from scratch), names and filters read from
it (never the whole graph), views per label set, damage made good."""

from __future__ import annotations

import os
import random
import re
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import CATALOGS, REPO

from kgbuild.cli.main import main
from kgbuild.graph.access import Principal
from kgbuild.project.pipeline import build_graph
from kgbuild.retrieve.sources import OpenModel
from kgbuild.retrieve.traverse import TraversalSpec, Traverser, open_traverser
from kgbuild.schema.loader import load_schema
from kgbuild.store import adjacency, splice, storemodel, strings
from kgbuild.store.graphstore import GraphStore
from kgbuild.store.modelfiles import MAX_VIEWS, current
from kgbuild.store.readmodel import FACET, PATCH, apply_patches, view_key
from kgbuild.store.splice import apply_changes
from kgbuild.store.strings import ChunkedStrings, Strings

FIXTURE = REPO / "fixtures" / "catalog"
SCHEMA = load_schema()


def _build(folder: Path, store: Path) -> None:
    build_graph([folder], SCHEMA, store=store, timestamp=0, validate=False, resolve=False,
                root=folder.parent).store.close()


def _built(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the fixture catalog and a store built from it."""
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)
    return folder, store


def _calls(monkeypatch, owner, name: str) -> list:
    """A list that gets an item per call of ``owner.name`` (still called)."""
    calls, real = [], getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *a: calls.append(1) or real(*a))
    return calls


def _specs(ids: list[str]) -> list[TraversalSpec]:
    specs = []
    for i, node in enumerate(ids):
        specs += [TraversalSpec(seeds=[node], hops=2, cap=3 if i % 2 else 50),
                  TraversalSpec(seeds=[node], follow=["dependsOn:both", "ownedBy:in"], hops=3),
                  TraversalSpec(seeds=[node], path="ownedBy:out/ownerOf:out/dependsOn:in",
                                include_seeds=bool(i % 2), max_chars=400),
                  TraversalSpec(seeds=[node, ids[(i * 7) % len(ids)]], types=["Component"],
                                max_nodes=5, max_edges=4, cap=None)]
    return specs + [TraversalSpec(seeds=["component:default/no-such-thing"]),
                    TraversalSpec(seeds=[ids[0].upper()], hops=1)]


def _saved(model) -> dict[str, np.ndarray]:
    return {p.stem: np.load(p) for p in model.folder.glob("*.npy")}


_CHUNK = re.compile(r"(.+)_c\d+_(blob|ends)")


def _columns(arrays: dict) -> dict:
    """``arrays`` by name, each patch applied to its column (and left out), each chunked
    column (``<name>_c<k>_blob``, ``_ends``) as the list of its items; the facets decoded
    (per edge its rows with their terms, not their codes: a commit codes its new terms after
    the old ones), the edges' latest times too (a commit keeps the times no edge has any
    more), the terms and times left out."""
    arrays = {k: np.array(a) for k, a in arrays.items()}
    apply_patches(arrays)
    chunked = {m.group(1) for k in arrays if (m := _CHUNK.fullmatch(k))}
    out = {k: a for k, a in arrays.items() if not _CHUNK.fullmatch(k)
           and not k.startswith(("terms_", "times_")) and not k.endswith(PATCH)}
    times = list(Strings(arrays["times_blob"], arrays["times_ends"]))
    out["recency"] = [times[c] for c in arrays["recency"].tolist()]
    out.update({c: list(ChunkedStrings.saved(arrays, c).raws()) for c in chunked})
    terms = list(Strings(arrays["terms_blob"], arrays["terms_ends"]))
    out["facets"] = [[(float(r["conf"]), terms[r["extractor"]], terms[r["time"]],
                       terms[r["qualifiers"]]) for r in np.frombuffer(item, dtype=FACET)]
                     for item in out["facets"]]
    return out


def _assert_equal_columns(model, arrays: dict, meta: dict, why=None) -> None:
    """The saved ``model``'s files hold the columns ``arrays`` and ``meta``: each array equal
    (dtype and values) to the file of its name, each chunked column (node and edge records,
    sources, facets) item for item, whatever its chunks (a spliced column may be chunked
    otherwise than the same column made from scratch), the facets by their terms."""
    saved, arrays = _columns(_saved(model)), _columns(arrays)
    assert saved.keys() == arrays.keys(), why
    for name, a in arrays.items():
        if isinstance(a, list):
            assert a == saved[name], (name, why)
        else:
            assert a.dtype == saved[name].dtype and np.array_equal(a, saved[name]), (name, why)
    assert model.meta == meta, why


def _assert_same(store: Path, principal: Principal, sample: int = 12) -> Traverser:
    """The store's model == one made from the whole graph, and its traversals == those of
    the whole graph in memory."""
    with GraphStore(store, SCHEMA, write=False) as st:
        kg = st.knowledge_graph()
        model = st.read_model()
        _assert_equal_columns(model, *storemodel._whole(st, kg))
    walker = open_traverser(store, SCHEMA, principal)
    reference = Traverser(kg, principal)
    ids = sorted(kg.nodes)
    for spec in _specs(ids[:: max(1, len(ids) // sample)]):
        assert walker.run(replace(spec)).to_dict() == reference.run(replace(spec)).to_dict(), spec
    return walker


def _current_revision(store: Path) -> str | None:
    """The revision of the store's saved model, None when there is none that opens."""
    model = current(store / "model", SCHEMA)
    return None if model is None else model.meta["revision"]


def _edit(folder: Path, rng: random.Random) -> str:
    """One random edit of the catalog's YAML files; returns what it did."""
    files = sorted(p for p in folder.rglob("*.yaml") if p.is_file())
    path = rng.choice(files)
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    op = rng.choice(["delete", "copy", "drop-item", "owner", "describe"])
    if op == "delete" and len(files) > 3:
        path.unlink()
    elif op == "copy" and "  name: " in text:
        copy = text.replace("  name: ", "  name: copied-", 1)
        (path.parent / f"copied-{rng.randrange(10**6)}-{path.name}").write_text(copy)
    elif op == "drop-item" and any(x.startswith("    - ") for x in lines):
        items = [i for i, x in enumerate(lines) if x.startswith("    - ")]
        del lines[rng.choice(items)]
        path.write_text("".join(lines))
    elif op == "owner" and "owner: " in text:
        others = [p for p in files if "owner: " in p.read_text()]
        owner = rng.choice(others).read_text().split("owner: ", 1)[1].split("\n", 1)[0]
        head, rest = text.split("owner: ", 1)
        path.write_text(head + "owner: " + owner + "\n" + rest.split("\n", 1)[1])
    else:
        path.write_text(text.replace("  name: ", "  description: edited\n  name: ", 1)
                        if "description:" not in text else text.replace("description: ",
                                                                          "description: edited ", 1))
        op = "describe"
    return f"{op} {path.name}"


@pytest.mark.slow
def test_the_model_walks_like_the_whole_graph_and_follows_every_change(tmp_path):
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)
    _assert_same(store, Principal.all_access())
    rng = random.Random(12)
    for _ in range(8):
        did = _edit(folder, rng)
        _build(folder, store)  # the commit brings the saved model up to date
        with GraphStore(store, SCHEMA, write=False) as st:
            assert _current_revision(store) == st.revision(), did
        _assert_same(store, Principal.all_access())


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("name", ["backstage-demo", "janus-idp-backstage-showcase"])
def test_the_model_follows_changes_to_real_catalogs(tmp_path, name):
    folder, store = tmp_path / name, tmp_path / "store"
    shutil.copytree(CATALOGS / "backstage" / name, folder)
    _build(folder, store)
    _assert_same(store, Principal(), sample=20)
    rng = random.Random(name)
    applied = 0
    for _ in range(6):
        _edit(folder, rng)
        _build(folder, store)
        with GraphStore(store, SCHEMA, write=False) as st:
            applied += _current_revision(store) == st.revision()
        _assert_same(store, Principal(), sample=20)
    assert applied == 6  # every change applied to the saved model, none made whole


@pytest.mark.slow
def test_many_random_edits_are_each_applied_exactly(tmp_path, monkeypatch):
    """Thirty builds of one to three random edits each (copies and deletions of files among
    them), at random times (new latest times, earlier and later ones): every change is applied
    to the saved model (never made from the whole graph), whose columns (the names table
    among them) equal those made from the whole graph after each build; chunks of about 600
    bytes, so that the records and node rows are many chunks, spliced, cut and dropped,
    patches of at most 8 positions, so that they are merged and written whole, and edge
    numbers moved past more than one insertion or removal by binary searches, past one by a
    pass (both ways of :func:`~kgbuild.store.splice._below`)."""
    folder, store = _built(tmp_path)
    made = storemodel._whole
    whole = _calls(monkeypatch, storemodel, "_whole")
    monkeypatch.setattr(strings, "CHUNK", 600)
    monkeypatch.setattr(adjacency, "PATCH_MAX", 8)  # (patches merged, and written whole past 8)
    monkeypatch.setattr(splice, "FEW_POINTS", 1)
    rng, widest = random.Random(7), 0
    for step in range(30):
        did = [_edit(folder, rng) for _ in range(rng.randint(1, 3))]
        build_graph([folder], SCHEMA, store=store, timestamp=rng.randrange(5) * 86400,
                    validate=False, resolve=False, root=folder.parent).store.close()
        assert not whole, (step, did)
        with GraphStore(store, SCHEMA, write=False) as st:
            assert _current_revision(store) == st.revision()
            model = st.read_model()
            _assert_equal_columns(model, *made(st, st.knowledge_graph()), did)
            widest = max(widest, len(model.times))
    assert widest > 2  # (edges of several latest times, new ones among them)
    _assert_same(store, Principal.all_access())


def test_a_new_file_stating_edges_others_state_keeps_their_assertions(tmp_path):
    """Regression: a new document stating edges unchanged documents already state (a copied
    multi-entity file) replaced their records with its own assertions only."""
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)
    shutil.copy(folder / "org" / "systems.yaml", folder / "org" / "systems-copy.yaml")
    _build(folder, store)
    with GraphStore(store, SCHEMA, write=False) as st:
        assert _current_revision(store) == st.revision()  # applied, not made whole
    _assert_same(store, Principal.all_access())


@pytest.mark.slow
def test_restricted_principals_walk_a_model_of_their_view(tmp_path, monkeypatch):
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)  # payments is labelled pci
    spec = TraversalSpec(seeds=["group:default/payments-team"], hops=2)
    with GraphStore(store, SCHEMA, write=False) as st:
        kg = st.knowledge_graph()
    public, pci = Principal(), Principal.of("pci")
    assert Traverser(kg, public).run(replace(spec)).to_dict() != \
        Traverser(kg, Principal.all_access()).run(replace(spec)).to_dict()  # something is hidden
    for principal in (public, pci):
        walker = _assert_same(store, principal)  # == Traverser(whole graph, principal)
        assert walker.model.view == view_key(principal)
    views = store / "model" / "views"
    assert sorted(p.name for p in views.iterdir()) == sorted({view_key(public), view_key(pci)})
    with GraphStore(store, SCHEMA, write=False) as st:
        with pytest.raises(ValueError):  # the unrestricted model shows a public caller too much
            OpenModel(st.read_model()).model(public)
        for other in (Principal.all_access(), pci):
            with pytest.raises(ValueError):  # a view serves its own label set only
                OpenModel(st.read_model(public)).model(other)
    with monkeypatch.context() as m:  # a saved view is opened, not made again
        m.setattr(GraphStore, "knowledge_graph", lambda self: pytest.fail("read whole"))
        assert open_traverser(store, SCHEMA, public).run(replace(spec)).to_dict() == \
            Traverser(kg, public).run(replace(spec)).to_dict()
    rng = random.Random(5)
    for _ in range(3):  # a build drops every view (stale); the next call makes it again
        _edit(folder, rng)
        _build(folder, store)
        assert not views.exists()
        _assert_same(store, public)
    for i in range(MAX_VIEWS + 2):
        open_traverser(store, SCHEMA, Principal.of(f"team-{i}"))
    assert len(list(views.iterdir())) == MAX_VIEWS


def test_names_questions_and_filters_read_the_model_not_the_whole_graph(tmp_path, monkeypatch):
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)
    edited = folder / "components" / "pricing-sdk.yaml"
    edited.write_text(edited.read_text().replace("name: pricing-sdk", "name: pricing-kit"))
    _build(folder, store)  # (the names table spliced)
    with GraphStore(store, SCHEMA, write=False) as st:
        reference = Traverser(st.knowledge_graph(), Principal.all_access())
    monkeypatch.setattr(GraphStore, "knowledge_graph", lambda self: pytest.fail("read whole"))
    walker = open_traverser(store, SCHEMA, Principal.all_access())
    for spec in (TraversalSpec(names=["Payments API"], path="ownedBy:out/ownerOf:out"),
                 TraversalSpec(names=["pricing kit", "Pricing SDK", "paymnets api"]),
                 TraversalSpec(question="Who owns Pricing Kit?", types=["Group"], shortest_path=True),
                 TraversalSpec(seeds=["component:default/payments-service"], min_confidence=0.9),
                 TraversalSpec(seeds=["group:default/commerce-platform"],
                               exclude_qualifiers=["dev,test"], extractors=["backstage"])):
        assert walker.run(replace(spec)).to_dict() == reference.run(replace(spec)).to_dict()


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated", "pointer", "fifo", "fifo-pointer"])
def test_a_damaged_model_is_made_again(tmp_path, damage):
    store = tmp_path / "store"
    _build(FIXTURE, store)
    open_traverser(store, SCHEMA, Principal.all_access())
    root = store / "model"
    folder = root / (root / "current").read_text()
    if damage == "garbage":
        (folder / "src.npy").write_bytes(b"\x93NUMPY garbage")
    elif damage == "truncated":
        data = (folder / "records_c00000_blob.npy").read_bytes()
        (folder / "records_c00000_blob.npy").write_bytes(data[: len(data) // 2])
    elif damage == "fifo":
        (folder / "src.npy").unlink()
        os.mkfifo(folder / "src.npy")  # never opened (reading it would wait forever)
    elif damage == "fifo-pointer":
        (root / "current").unlink()
        os.mkfifo(root / "current")
    else:
        (root / "current").write_text("../../elsewhere")
    _assert_same(store, Principal.all_access())


def test_a_writer_closing_beside_a_fifo_pointer_does_not_wait_on_it(tmp_path):
    """Regression: a writer's close read ``model/current`` to record its model fresh without
    the check every reader makes, so a FIFO there would have held the store's lock for
    ever."""
    store = tmp_path / "store"
    _build(FIXTURE, store)
    (store / "model" / "current").unlink()
    os.mkfifo(store / "model" / "current")
    closed = threading.Event()

    def write_and_close():
        GraphStore(store, SCHEMA).close()
        closed.set()

    threading.Thread(target=write_and_close, daemon=True).start()
    assert closed.wait(60), "the writer's close waited on the FIFO"


def test_what_the_merge_cannot_reproduce_is_refused(tmp_path):
    store = tmp_path / "store"
    _build(FIXTURE, store)
    with GraphStore(store, SCHEMA, write=False) as st:
        old = st.read_model()
        for meta in ({"schema": "other"}, {"untyped": 1}, {"settings": {}},
                     {"revision": "another-database:1"}):
            assert apply_changes(replace(old, meta={**old.meta, **meta}), st, SCHEMA, [],
                                 set()) is None


def test_a_model_older_than_the_change_is_not_patched_with_it(tmp_path):
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)
    root = store / "model"
    stale = root / (root / "current").read_text()
    shutil.copytree(stale, tmp_path / "stale")
    first = folder / "components" / "web-shop.yaml"
    first.write_text(first.read_text().replace("  name: ", "  description: one\n  name: ", 1))
    _build(folder, store)  # (a change the stale model never saw)
    shutil.copytree(tmp_path / "stale", stale)
    (root / "current").write_text(stale.name)
    last = folder / "components" / "pricing-sdk.yaml"
    last.write_text(last.read_text().replace("  name: ", "  description: two\n  name: ", 1))
    _build(folder, store)
    _assert_same(store, Principal.all_access())


def test_strings_find_and_index():  # (kgbuild/store/strings.py)
    items = sorted(["a", "ab", "b", "ü", ""])
    strings = Strings(*Strings.pack(items))
    assert list(strings) == items and strings[1] == items[1] and strings[-1] == items[-1]
    assert [strings.find(x) for x in items] == list(range(len(items)))
    assert strings.find("aa") is None and strings.find("zzz") is None


def test_strings_splice():
    strings = Strings(*Strings.pack([b"a", b"bc", b"", b"def", b"g"]))
    spliced = strings.splice(np.array([3, -1, 0, 1, -1, -1, 4]), [b"x", b"", "ü".encode()])
    assert list(Strings(*spliced).raws()) == [b"def", b"x", b"a", b"bc", b"", "ü".encode(), b"g"]
    assert len(Strings(*strings.splice(np.zeros(0, dtype=np.int64), []))) == 0


def test_strings_changed():
    strings = Strings.of(["a", "c", "e", "g"])
    changed = Strings(*strings.changed({"c", "g"}, {"b", "d", "h", "0"}))
    assert list(changed) == ["0", "a", "b", "d", "e", "h"]
    same = strings.changed(set(), set())  # (nothing to change: the column itself, not a copy)
    assert same[0] is strings.blob and same[1] is strings.ends


def test_traverse_cli_answers_from_the_model(tmp_path, monkeypatch):
    from click.testing import CliRunner

    store = tmp_path / "store"
    _build(FIXTURE, store)
    args = ["traverse", "--store", str(store), "--all-access", "--seed",
            "component:default/payments-service", "--hops", "2", "--format", "json"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert (store / "model" / "current").exists()
    monkeypatch.setattr(GraphStore, "knowledge_graph", lambda self: pytest.fail("read whole"))
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and again.output == first.output


def test_a_no_change_build_leaves_the_model_alone(tmp_path):
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)  # the build made it
    made = (store / "model" / "current").read_text()
    _build(folder, store)
    assert (store / "model" / "current").read_text() == made
    assert sorted(p.name for p in (store / "model").iterdir()) == ["current", made, "seen.json"]


def test_a_full_rebuild_at_another_time_makes_a_whole_model(tmp_path):
    store = tmp_path / "store"
    _build(FIXTURE, store)
    build_graph([FIXTURE], SCHEMA, store=store, full=True, timestamp=86400, validate=False,
                resolve=False, root=FIXTURE.parent).store.close()  # same files, new times
    walker = _assert_same(store, Principal.all_access())
    edge = walker.run(TraversalSpec(seeds=["component:default/payments-service"], hops=1)).edges[0]
    assert edge["assertions"][0]["generated_at"].startswith("1970-01-02")


@pytest.mark.slow
def test_a_walk_reads_the_saved_model_without_the_database_until_it_changes(tmp_path, monkeypatch):
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)
    everyone = Principal.all_access()
    spec = TraversalSpec(seeds=["component:default/payments-service"], hops=2)

    def walk_unopened() -> dict:
        with monkeypatch.context() as m:
            m.setattr(GraphStore, "__init__", lambda *a, **k: pytest.fail("database opened"))
            return open_traverser(store, SCHEMA, everyone).run(replace(spec)).to_dict()

    db = next(p for p in store.iterdir() if p.name.startswith("db-") and p.is_dir())
    (db / "LOG.unrelated").write_text("files changed behind the record")
    assert storemodel.saved_model(store, SCHEMA) is None  # (checked again: opened once)
    first = open_traverser(store, SCHEMA, everyone).run(replace(spec)).to_dict()
    assert storemodel.saved_model(store, SCHEMA) is not None
    assert walk_unopened() == first
    for seed in range(2):  # each build records its model fresh for the files it leaves
        _edit(folder, random.Random(seed))
        _build(folder, store)
        assert storemodel.saved_model(store, SCHEMA) is not None
        with GraphStore(store, SCHEMA, write=False) as st:
            reference = Traverser(st.knowledge_graph(), everyone).run(replace(spec)).to_dict()
        assert walk_unopened() == reference
    # another schema's walk does not take this model
    other = replace(SCHEMA, description="another")
    assert other.digest != SCHEMA.digest and storemodel.saved_model(store, other) is None


def test_a_principal_s_saved_view_is_read_without_the_database_too(tmp_path, monkeypatch):
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)
    public = Principal()  # the fixture labels some documents: the public walk reads a view
    spec = TraversalSpec(seeds=["component:default/payments-service"], hops=2)
    first = open_traverser(store, SCHEMA, public).run(replace(spec)).to_dict()
    assert storemodel.saved_model(store, SCHEMA) is not None
    assert storemodel.saved_model(store, SCHEMA, public).view == view_key(public)
    with monkeypatch.context() as m:
        m.setattr(GraphStore, "__init__", lambda *a, **k: pytest.fail("the database was opened"))
        assert open_traverser(store, SCHEMA, public).run(replace(spec)).to_dict() == first
    assert storemodel.saved_model(store, SCHEMA, Principal.of("nobody-has-this")) is None


@pytest.mark.slow
def test_a_rebuild_links_the_columns_it_left_as_they_were(tmp_path):
    folder, store = tmp_path / "catalog", tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    _build(folder, store)
    old = store / "model" / (store / "model" / "current").read_text()
    before = {p.name: (np.load(p), p.stat().st_ino) for p in old.glob("*.npy")}
    path = next(p for p in sorted(folder.rglob("*.yaml")) if "owner: " in p.read_text())
    path.write_text(path.read_text().replace("owner: ", "owner: someone-else\n  x-owner: ", 1))
    _build(folder, store)
    new = store / "model" / (store / "model" / "current").read_text()
    linked = {p.name for p in new.glob("*.npy")
              if p.name in before and p.stat().st_ino == before[p.name][1]}
    same = {p.name for p in new.glob("*.npy") if p.name in before
            and np.array_equal(np.load(p), before[p.name][0])
            and np.load(p).dtype == before[p.name][0].dtype}
    assert linked == same and "terms_blob.npy" in same  # (the same extractors and times)
    assert "records_c00000_blob.npy" not in same and "ids_ends.npy" not in same
    _assert_same(store, Principal.all_access())


@pytest.mark.slow
def test_a_change_adding_and_removing_nothing_rewrites_only_its_rows(tmp_path, monkeypatch):
    """A commit that adds and removes no node and no edge (a description edited) writes only
    its rows: the edge columns are the old files (linked), the confidence, time codes and
    lists too, with patches of the positions that changed (a time code column is written
    whole when a time comes between the others: every later code moves), the general splice
    is never run, and the columns equal those made from scratch after each step: a new
    latest time, an earlier one, then one more while the latest is no edge's any more."""
    folder, store = _built(tmp_path)
    general = _calls(monkeypatch, splice, "_spliced")
    payments, checkout = (folder / "components" / f"{x}.yaml"
                          for x in ("payments", "checkout-service"))
    texts = {p: p.read_text() for p in (payments, checkout)}
    for step, (path, day, edited, times, recency) in enumerate([  # (recency: linked, patched)
            (payments, 3, True, 2, (True, True)), (checkout, 1, True, 3, (False, False)),
            (payments, 2, False, 4, (True, False))]):  # (the last: the same codes as before)
        old = store / "model" / (store / "model" / "current").read_text()
        inodes = {p.name: p.stat().st_ino for p in old.glob("*.npy")}
        path.write_text(texts[path].replace("description: ", "description: x ") if edited
                        else texts[path])
        build_graph([folder], SCHEMA, store=store, timestamp=day * 86400, validate=False,
                    resolve=False, root=folder.parent).store.close()
        with GraphStore(store, SCHEMA, write=False) as st:
            assert _current_revision(store) == st.revision(), step
            model = st.read_model()
            _assert_equal_columns(model, *storemodel._whole(st, st.knowledge_graph()), step)
            assert len(model.times) == times, step  # (kept: 1970, day 3, day 1, day 2)
        new = store / "model" / (store / "model" / "current").read_text()
        linked = {p.name for p in new.glob("*.npy") if p.stat().st_ino == inodes.get(p.name)}
        assert {"src.npy", "dst.npy", "etype.npy", "ids_blob.npy", "conf.npy"} <= linked, step
        assert ("recency.npy" in linked, (new / "recency_ppos.npy").is_file()) == recency, step
        lists = {p.name for p in new.glob("l*_*.npy") if p.name.count("_") == 2}
        assert lists <= linked and any(new.glob("l*_rank_ppos.npy")), step
    assert not general
    _assert_same(store, Principal.all_access())


def test_a_model_is_checked_whole_once_then_while_its_files_stay_as_they_were(tmp_path,
                                                                              monkeypatch):
    """Opening a saved model reads every number of it only when its files are not as its
    record of them says: a model just written, or checked once, is not read whole again; a
    copy (other inodes) is, once; a column rewritten in place (same size, new time) is, and
    found damaged (an edge number past the end, a chunk's ends out of order)."""
    from kgbuild.store import modelfiles
    from kgbuild.store.adjacency import AdjacencyIndex

    store = tmp_path / "store"
    _build(FIXTURE, store)
    whole = []
    check = AdjacencyIndex.check
    monkeypatch.setattr(AdjacencyIndex, "check",
                        lambda self, values=True: whole.append(values) or check(self, values))
    root = store / "model"

    def opened(path: Path) -> tuple[bool, list[bool]]:
        whole.clear()
        return modelfiles.current(path, SCHEMA) is not None, list(whole)

    assert opened(root) == (True, [False])  # (as written)
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    assert opened(copy) == (True, [True]) and opened(copy) == (True, [False])
    folder = copy / (copy / "current").read_text()
    dst = np.load(folder / "dst.npy")
    np.save(folder / "dst.npy", dst + 10_000)  # values past the end, the same size
    assert opened(copy) == (False, [True])
    np.save(folder / "dst.npy", dst)
    assert opened(copy) == (True, [True]) and opened(copy) == (True, [False])
    ends = np.load(folder / "records_c00000_ends.npy")
    np.save(folder / "records_c00000_ends.npy", ends[[1, 0, *range(2, len(ends))]])
    assert opened(copy) == (False, [True])  # (a chunk's ends out of order: read, refused)
