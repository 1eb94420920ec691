"""The store's bookkeeping against damage: CURRENT names the database and its identity, a
rebuild sets a damaged database aside and removes it only once replaced, revisions never
repeat, a store replaced under a reader says so."""

import re
import shutil

import pytest
from conftest import FIXTURE_CATALOG

from kgbuild.project.pipeline import build_graph
from kgbuild.errors import KgbuildError
from kgbuild.store import graphstore
from kgbuild.store.graphstore import DocumentUpdate, GraphStore


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "store"
    build_graph([FIXTURE_CATALOG], store=path, timestamp=0, validate=False,
                root=FIXTURE_CATALOG.parent).store.close()
    return path


def test_current_names_the_database_and_its_identity(store, schema):
    name = (store / "CURRENT").read_text()
    assert re.fullmatch(r"db-\d+\n", name) and (store / name.strip()).is_dir()  # format kept
    ident = (store / f"{name.strip()}.id").read_text().strip()
    with GraphStore(store, schema, write=False) as s:
        assert s.store_id() == ident


def test_a_database_without_the_named_identity_is_damage(store, schema):
    db = (store / "CURRENT").read_text().split()[0]
    shutil.rmtree(store / db)
    with GraphStore(store / "other", schema) as fresh:  # an empty database, another identity
        pass
    shutil.copytree(store / "other" / "db-1", store / db)
    with pytest.raises(KgbuildError) as info:
        GraphStore(store, schema, write=False)
    assert info.value.code == "store-damaged" and "identity" in str(info.value)
    assert "kgbuild build --full" in str(info.value)
    del fresh


def test_rebuild_sets_the_damaged_database_aside_until_replaced(store, schema):
    db = (store / "CURRENT").read_text().split()[0]
    (store / "CURRENT").write_bytes(b"\xff\xfe garbage")
    with pytest.raises(KgbuildError) as info:
        GraphStore(store, schema)
    assert info.value.code == "store-damaged" and "CURRENT holds" in str(info.value)
    s = GraphStore(store, schema, rebuild=True)
    try:
        assert s.damage and "CURRENT holds" in s.damage
        assert s.documents() == {} and s.knowledge_graph().nodes == {}
        assert (store / db).is_dir()  # nothing removed before the new database is complete
        problems = s.apply({"a.yaml": DocumentUpdate([], sha256="x")})  # becomes a full load
        assert [p.code for p in problems] == ["store-rebuilt"]
        assert s.damage is None and s.documents() == {"a.yaml": "x"}
    finally:
        s.close()
    assert not (store / db).exists()
    with GraphStore(store, schema, write=False) as again:
        assert again.documents() == {"a.yaml": "x"}


def test_revisions_never_repeat(tmp_path, schema):
    seen = set()
    with GraphStore(tmp_path / "s", schema) as s:
        for i in range(3):
            s.apply({f"d{i}.yaml": DocumentUpdate([], sha256=str(i))})
            seen.add(s.generation())
        s.replace_all({"d.yaml": DocumentUpdate([], sha256="z")})
        seen.add(s.generation())
    assert len(seen) == 4 and all(re.fullmatch(r"\d+-[0-9a-f]{16}", g) for g in seen)


def test_a_store_replaced_while_reading_says_so(store, schema):
    reader = GraphStore(store, schema, write=False)
    try:
        build_graph([FIXTURE_CATALOG], store=store, full=True, timestamp=0, validate=False,
                    root=FIXTURE_CATALOG.parent).store.close()

        class Gone:
            def quads_for_pattern(self, *args):
                raise OSError(2, "No such file or directory: 000012.sst")

        reader._db.db = Gone()
        with pytest.raises(KgbuildError) as info:
            list(reader.triples())
        assert info.value.code == "store-changed" and "run the command again" in str(info.value)
    finally:
        reader.close()


def test_never_committed_databases_are_collected_committed_ones_kept(store, schema):
    (store / "db-90").mkdir()
    (store / f"db-90{graphstore.BUILDING}").touch()
    (store / "db-91").mkdir()  # not marked, but CURRENT names another: replaced, garbage
    with GraphStore(store, schema):
        pass
    current = (store / "CURRENT").read_text().strip()
    assert sorted(p.name for p in store.glob("db-*")) == [current, f"{current}.id"]
