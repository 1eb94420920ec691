"""What models really send back, and what users really point `kgbuild extract` at: runaway
answers, prose around JSON, empty answers, lone surrogates, binary files, explicit files."""

from __future__ import annotations

import json

import llm_fixtures
import pytest
from fakellm import Reply, Script, rel

from kgbuild.extract.text.extractor import MAX_RELATIONS_PER_ANSWER, TextSettings
from kgbuild.llm.settings import LLMSettings
from kgbuild.project.textextract import extract_text

fake_llm = llm_fixtures.fake_llm
_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

TEXT = "# Notes\n\nBilling Worker depends on Ledger Library.\n"
GOOD = rel("Billing Worker", "dependsOn", "Ledger Library", "Billing Worker depends on Ledger Library.")


def run(server, tmp_path, *paths, **kw):
    settings = LLMSettings("m", server.base_url, max_retries=kw.pop("max_retries", 0))
    result = extract_text([str(p) for p in paths], llm=settings, store=tmp_path / "store",
                          root=tmp_path, timestamp=0, text=kw.pop("text", None), **kw)
    kg = result.store.knowledge_graph()
    result.store.close()
    return result, kg


def doc(tmp_path, name="notes.md", text=TEXT):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_json_inside_prose_and_fences_is_read(fake_llm, tmp_path):
    answer = "Sure! Here are the relations:\n```json\n" + json.dumps({"relations": [GOOD]}) + "\n```"
    server = fake_llm(Script(default=Reply(answer)))
    result, kg = run(server, tmp_path, doc(tmp_path))
    assert result.stats.accepted == 1 and server.count == 1  # no repair needed
    [(s, p, o)] = list(kg.edges())
    assert p == "dependsOn" and kg.nodes[s].label == "Billing Worker"
    assert kg.nodes[o].label == "Ledger Library"
    assert all(n.defined_in == {"notes.md"} for n in kg.nodes.values())  # the note introduces both


@pytest.mark.slow
def test_a_runaway_answer_is_capped(fake_llm, tmp_path):
    many = [GOOD] * (MAX_RELATIONS_PER_ANSWER + 500)
    server = fake_llm(Script(default=Reply(json.dumps({"relations": many}))))
    result, kg = run(server, tmp_path, doc(tmp_path))
    assert result.stats.relations == MAX_RELATIONS_PER_ANSWER
    assert any(p.code == "llm-answer" and "first 1,000" in p.message for p in result.build.problems)
    assert len(kg.edges()) == 1 and result.stats.duplicates == MAX_RELATIONS_PER_ANSWER - 1


def test_an_empty_answer_is_repaired_once_then_reported(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply("")))
    result, kg = run(server, tmp_path, doc(tmp_path))
    assert server.count == 2 and result.usage["repairs"] == 1
    assert result.stats.unreadable_answers == 1 and not kg.edges()
    assert [p.code for p in result.build.problems] == ["llm-answer"]
    again, _ = run(server, tmp_path, doc(tmp_path))  # stored as extracted: not asked again
    assert server.count == 2 and again.build.changes["unchanged"] == ["notes.md"]


def test_lone_surrogates_and_odd_values_never_break_the_store(fake_llm, tmp_path):
    odd = [rel("Billing Worker\ud800", "dependsOn", "Ledger Library", "Billing Worker depends on"),
           {"subject": ["a", "list"], "predicate": "dependsOn", "object": "x", "evidence": "y"},
           {"subject": "Billing Worker", "predicate": "dependsOn", "object": "Ledger Library",
            "evidence": "Billing Worker depends on Ledger Library." * 5000},
           GOOD]
    server = fake_llm(Script(default=Reply(json.dumps({"relations": odd}))))
    result, kg = run(server, tmp_path, doc(tmp_path), validate=True)
    assert result.stats.accepted >= 1 and result.build.validation.conforms
    assert result.stats.relations == 2  # the list-valued subject and the 215k-char quote refused
    for n in kg.nodes.values():  # a lone surrogate is carried as an escape: everything encodes
        n.id.encode("utf-8"), n.label.encode("utf-8")


def test_binary_and_undecodable_files_are_reported_without_a_request(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(json.dumps({"relations": [GOOD]}))))
    binary = doc(tmp_path, "blob.txt", b"\x00\x01\x02binary")
    latin = doc(tmp_path, "latin.md", "caf\xe9 au lait\n".encode("latin-1"))
    result, kg = run(server, tmp_path, binary, latin)
    assert server.count == 0
    codes = sorted((p.file, p.code) for p in result.build.problems)
    assert [f for f, _ in codes] == ["blob.txt", "latin.md"]


def test_an_explicit_file_is_read_whatever_its_name_but_folders_only_give_text(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(json.dumps({"relations": [GOOD]}))))
    folder = tmp_path / "docs"
    folder.mkdir()
    doc(folder, "notes.md")
    doc(folder, "catalog-info.yaml", "apiVersion: backstage.io/v1alpha1\nkind: Component\n")
    doc(folder, "requirements-dev.txt", "pytest>=8\n")  # a manifest `kgbuild build` reads
    doc(tmp_path, "NOTES", TEXT.replace("Notes", "Other notes"))  # no suffix, named explicitly
    result, kg = run(server, tmp_path, folder, tmp_path / "NOTES")
    assert sorted(result.build.changes["added"]) == ["NOTES", "docs/notes.md"]
    assert server.count == 2


@pytest.mark.slow
def test_document_mode_and_chunk_settings_are_part_of_the_extractor_tag(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(json.dumps({"relations": [GOOD]}))))
    path = doc(tmp_path)
    run(server, tmp_path, path)
    result, _ = run(server, tmp_path, path, text=TextSettings(mode="document"))
    assert result.build.changes["changed"] == ["notes.md"]  # other settings: re-extracted
    assert server.count == 2  # the whole document has no section header: another prompt
    result, _ = run(server, tmp_path, path, text=TextSettings(mode="document"))
    assert result.build.changes["unchanged"] == ["notes.md"] and server.count == 2
