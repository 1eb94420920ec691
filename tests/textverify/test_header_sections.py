"""The context header of a quote is the document's title and the section path in effect where
the quote is, the same in `kgbuild extract` (a chunk of the chunker) and `kgbuild verify`
(the whole document): an edge it grounds records `grounding: header` and that header."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from kgbuild.extract.text.chunking import chunk_text
from kgbuild.extract.text.verify import verify_relations
from kgbuild.project.verifyfile import verify_file
from kgbuild.schema.loader import parse_schema

# a page laid out as encyclopedias lay one out: the subject named by the title, the
# sentences of later sections referring to it
PAGE = """# Funny Lady

Funny Lady is a 1975 American musical comedy-drama film directed by Herbert Ross. It is
the sequel to the 1968 film Funny Girl.

## Production

### Casting

James Caan was cast as Billy Rose after Robert Blake turned the part down.

## Reception

### Awards

The film was nominated for five Academy Awards, including Best Original Song.
"""

NOMINATED = {"subject": "Funny Lady", "predicate": "nominatedFor",
             "object": "Academy Awards",
             "evidence": "The film was nominated for five Academy Awards, including Best "
                         "Original Song."}


@pytest.fixture(scope="module")
def film():
    return parse_schema({
        "name": "film", "namespace": "https://example.org/film#",
        "node_types": {"Film": {}, "Person": {}, "Award": {}},
        "edge_types": {"director": {"domain": "Film", "range": "Person"},
                       "castMember": {"domain": "Film", "range": "Person"},
                       "nominatedFor": {"domain": "Film", "range": "Award"}}})


def test_the_chunker_marks_every_heading_with_its_whole_path():
    [doc] = chunk_text(PAGE, "funny-lady.md", mode="document")
    paths = [path for _, path in doc.marks]
    assert paths == [("Funny Lady",), ("Funny Lady", "Production"),
                     ("Funny Lady", "Production", "Casting"), ("Funny Lady", "Reception"),
                     ("Funny Lady", "Reception", "Awards")]
    assert all(PAGE[doc.start + at:].startswith("#") for at, _ in doc.marks)


@pytest.mark.parametrize("size", [4000, 200])
def test_extract_chunks_ground_by_the_section_the_quote_is_in(film, size):
    """One chunk for the page (its section is the title's), or small chunks: either way the
    header is the one in effect at the quote, parents included."""
    chunks = chunk_text(PAGE, "funny-lady.md", size=size, overlap=0)
    [chunk] = [c for c in chunks if NOMINATED["evidence"] in c.text]
    referring = {**NOMINATED, "subject": "The film"}  # never the name before the heading
    named, pointed = verify_relations([NOMINATED, referring], chunk, film).accepted
    for edge in (named, pointed):
        assert edge.subject_label == "Funny Lady" and edge.grounding == ("header", "quote")
        assert edge.header == "Funny Lady > Reception > Awards"
        assert edge.qualifiers == ("grounding:header", "header:Funny Lady > Reception > Awards")


def test_verify_grounds_by_the_section_path_and_records_it(film, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "funny-lady.md").write_text(PAGE, encoding="utf-8")
    edges = tmp_path / "edges.jsonl"
    referring = {**NOMINATED, "subject": "The film"}
    edges.write_text("\n".join(json.dumps({**r, "source": "funny-lady.md"})
                               for r in (NOMINATED, referring)) + "\n", encoding="utf-8")
    result = verify_file(edges, docs, film, output=tmp_path / "out.ttl", timestamp=0)
    accepted = result.accepted["funny-lady.md"]
    assert [e.header for e in accepted] == ["Funny Lady > Reception > Awards"] * 2
    assert {e.subject_label for e in accepted} == {"Funny Lady"}
    ttl = (tmp_path / "out.ttl").read_text()
    assert "grounding:header" in ttl and "header:Funny Lady > Reception > Awards" in ttl
    # the cited evidence shows the header beside the quote
    assert "Funny Lady > Reception > Awards \u2026 The film was nominated" in ttl


# -- real text: two Wikipedia paragraphs (HotpotQA's corpus) as two sections of one page ------

HOTPOT = REPO.parent / "shared" / "corpora" / "multihop" / "hotpotqa-train-100" / "corpus.jsonl"


def passages(*ids):
    rows = {d["id"]: d for d in map(json.loads, HOTPOT.read_text(encoding="utf-8").splitlines())}
    return [rows[i] for i in ids]


@pytest.mark.corpus
def test_each_section_grounds_its_own_subject_on_real_text(film, tmp_path):
    """Each section's "The film" / "It" is the film its heading names, never the one the
    section before talks about: the section path at the quote grounds it, in extract's
    chunks and in verify's whole document alike."""
    brady, ankur = passages("hp0032", "hp0068")
    page = "# Films\n\n" + "".join(f"## {p['title']}\n\n{p['text']}\n\n" for p in (brady, ankur))
    sanford = "The film was directed by Arlene Sanford (in her feature film directorial debut)"
    benegal = "It was the first feature film directed by Shyam Benegal"
    assert sanford in brady["text"] and benegal in ankur["text"]
    relations = [
        {"subject": "A Very Brady Sequel", "predicate": "director", "object": "Arlene Sanford",
         "evidence": sanford},
        {"subject": "Ankur (film)", "predicate": "director", "object": "Shyam Benegal",
         "evidence": benegal},
        {"subject": "A Very Brady Sequel", "predicate": "director", "object": "Shyam Benegal",
         "evidence": benegal},  # the section before's film: not what "It" is
    ]
    expected = [("A Very Brady Sequel", "Films > A Very Brady Sequel"),
                ("Ankur (film)", "Films > Ankur (film)")]
    for chunk in chunk_text(page, "films.md", size=4000) + chunk_text(page, "films.md", size=700):
        out = verify_relations(relations, chunk, film)
        found = [(e.subject_label, e.header) for e in out.accepted]
        assert set(found) <= set(expected)
        assert all(e.grounding == ("header", "quote") for e in out.accepted)
        if len(chunk.text) > 1000:  # the whole page in one chunk
            assert found == expected
            assert [r.reason for r in out.rejected] == ["subject-not-grounded"]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "films.md").write_text(page, encoding="utf-8")
    edges = tmp_path / "edges.jsonl"
    edges.write_text("".join(json.dumps({**r, "source": "films.md"}) + "\n" for r in relations))
    result = verify_file(edges, docs, film, timestamp=0)
    assert [(e.subject_label, e.header) for e in result.accepted["films.md"]] == expected
    assert [r["reason"] for r in result.rejected] == ["subject-not-grounded"]


@pytest.mark.corpus
@pytest.mark.slow
def test_the_context_pack_cites_the_header_with_the_quote(tmp_path, monkeypatch):
    """verify --store, then traverse: the evidence of a header-grounded edge is the header
    and the quote, and the assertion records grounding:header."""
    from click.testing import CliRunner

    from kgbuild.cli import main

    brady, ankur = passages("hp0032", "hp0068")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "films.md").write_text(
        "# Films\n\n" + "".join(f"## {p['title']}\n\n{p['text']}\n\n" for p in (brady, ankur)),
        encoding="utf-8")
    (tmp_path / "edges.jsonl").write_text(json.dumps(
        {"subject": "Ankur (film)", "predicate": "director", "object": "Shyam Benegal",
         "evidence": "It was the first feature film directed by Shyam Benegal",
         "source": "films.md"}) + "\n")
    (tmp_path / "film.yaml").write_text(
        "name: film\nnamespace: https://example.org/film#\nnode_types:\n  Film: {}\n"
        "  Person: {}\nedge_types:\n  director: {domain: Film, range: Person}\n")
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke
    out = run(main, ["verify", "edges.jsonl", "--sources", "docs", "--schema", "film.yaml",
                     "--store", "st", "--timestamp", "0"])
    assert out.exit_code == 0, out.output
    walk = run(main, ["traverse", "--store", "st", "--schema", "film.yaml", "--seed",
                      "film:default/ankur-film", "--path", "director", "--format", "json"])
    assert walk.exit_code == 0, walk.output
    data = json.dumps(json.loads(walk.output), ensure_ascii=False)
    assert "person:default/shyam-benegal" in data
    cited = "Films > Ankur (film) \u2026 It was the first feature film directed by Shyam Benegal"
    assert cited in data
    assert "grounding:header" in data
