"""`kgbuild extract` into a new store makes it while the requests are out and commits its few
documents in one transaction into the database the store was made with (a full rebuild's bulk
load would make a second one): the same graph as that full rebuild (`--full`), one database
folder; a store that cannot be made is an error before any request."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import llm_fixtures
from prose_oracle import oracle

from kgbuild.errors import KgbuildError
from kgbuild.extract.text.extractor import TextSettings
from kgbuild.llm.settings import LLMSettings
from kgbuild.project.textextract import extract_text
from kgbuild.store.export import export_store

fake_llm = llm_fixtures.fake_llm
_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

PROSE = Path(__file__).resolve().parents[2] / "fixtures" / "prose"


def test_a_new_store_is_made_once_and_holds_what_a_full_rebuild_holds(fake_llm, tmp_path):
    server = fake_llm(oracle)
    shutil.copytree(PROSE, tmp_path / "docs")
    llm = LLMSettings("fake-model", server.base_url)
    text = TextSettings(chunk_size=600, chunk_overlap=100)
    exports = {}
    for name, full in (("new", False), ("full", True)):
        store = tmp_path / name
        result = extract_text([tmp_path / "docs"], llm=llm, text=text, store=store, full=full,
                              timestamp=0, validate=False, root=tmp_path)
        try:
            assert result.stats.accepted > 0
            exports[name] = export_store(result.store, "nquads")
        finally:
            result.store.close()
        assert sorted(p.name for p in store.glob("db-*")) == (
            ["db-1", "db-1.id"] if name == "new" else ["db-2", "db-2.id"])
    assert exports["new"] == exports["full"]


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_a_store_that_cannot_be_made_fails_before_any_request(fake_llm, tmp_path, where):
    server = fake_llm(oracle)
    shutil.copytree(PROSE, tmp_path / "docs")
    (tmp_path / "taken").write_text("not a store")
    store = tmp_path / "taken" if where == "a file" else tmp_path / "taken" / "store"
    with pytest.raises((KgbuildError, OSError)):
        extract_text([tmp_path / "docs"], llm=LLMSettings("fake-model", server.base_url),
                     store=store, timestamp=0, validate=False, root=tmp_path)
    assert server.count == 0
