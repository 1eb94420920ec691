"""kgbuild ingest and retrieve: corpora in, incremental updates, links, every method, the CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgbuild.cli import main
from kgbuild.errors import KgbuildError
from kgbuild.passages.dense import EmbeddingSettings
from kgbuild.passages.index import PassageIndex
from kgbuild.passages.ingest import ingest
from kgbuild.passages.retrieve import Question, retrieve

from .helpers import write_jsonl

CORPUS = [
    {"id": "p1", "title": "Blue Harbor", "text": "Blue Harbor is a 1999 film directed by Mara Quill."},
    {"id": "p2", "title": "Mara Quill", "text": "Mara Quill is a director born in Tallinn."},
    {"id": "p3", "title": "Tallinn", "text": "Tallinn is the capital of Estonia."},
    {"id": "p4", "title": "Red Valley", "text": "Red Valley is a 2004 documentary about rivers."},
    {"id": "p5", "title": "Signs (film)", "text": "Signs is a film; signs of it are everywhere."},
]


def ids(result) -> list[str]:
    return [p["id"] for p in result.passages]


def test_ingest_indexes_links_and_is_incremental(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    store = tmp_path / "store"
    first = ingest(store, [corpus])
    assert (first.added, first.passages) == (5, 5)
    with PassageIndex(store) as index:
        links = set(index.db.execute(
            "SELECT p.id, n.key FROM links l JOIN passages p ON p.rowid=l.passage "
            "JOIN names n ON n.id=l.name"))
        revision = index.revision
    assert ("p1", "mara quill") in links and ("p2", "tallinn") in links
    assert ("p5", "signs") in links  # 'Signs' written as a name is a mention...
    assert len([p for p, k in links if k == "signs"]) == 1  # ...'signs' is not
    again = ingest(store, [corpus])
    assert (again.files_unchanged, again.unchanged, again.added) == (1, 5, 0)
    with PassageIndex(store) as index:
        assert index.revision == revision  # nothing changed, nothing rewritten
    rows = CORPUS[:3] + [{"id": "p4", "title": "Red Valley", "text": "Red Valley is set in Tallinn."}]
    write_jsonl(corpus, rows)
    third = ingest(store, [corpus])
    assert (third.added, third.changed, third.removed, third.unchanged) == (0, 1, 1, 3)
    with PassageIndex(store) as index:
        assert sorted(r[0] for r in index.db.execute("SELECT id FROM passages")) == ["p1", "p2", "p3", "p4"]
        keys = {r[0] for r in index.db.execute("SELECT key FROM names")}
        assert "signs" not in keys  # the removed passage's title took its name along
        linked = {r[0] for r in index.db.execute(
            "SELECT p.id FROM links l JOIN passages p ON p.rowid=l.passage JOIN names n "
            "ON n.id=l.name WHERE n.key='tallinn'")}
        assert linked == {"p2", "p3", "p4"}  # p3 names itself
    assert [p["id"] for p in retrieve(store, ["Red Valley Tallinn"], method="bm25")[0].passages][:1] == ["p4"]


def test_a_new_title_links_unchanged_passages(tmp_path):
    store = tmp_path / "store"
    ingest(store, [write_jsonl(tmp_path / "a.jsonl", CORPUS[:1])])
    ingest(store, [write_jsonl(tmp_path / "b.jsonl", [CORPUS[1]])])
    with PassageIndex(store) as index:
        assert index.db.execute("SELECT count(*) FROM links l JOIN passages p ON p.rowid=l.passage "
                                "JOIN names n ON n.id=l.name WHERE p.id='p1' AND n.key='mara quill'"
                                ).fetchone()[0] == 1


def test_bad_lines_are_reported_with_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "text": "fine"}\nnot json\n{"id": "a", "text": "again"}\n'
                    '{"text": "no id"}\n[1]\n', encoding="utf-8")
    result = ingest(tmp_path / "store", [path])
    assert result.added == 1
    where = [(p.line, p.code) for p in result.problems]
    assert where == [(2, "json-syntax"), (3, "duplicate-id"), (4, "missing-id"), (5, "not-an-object")]
    assert str(result.problems[0]).startswith(f"{path}:2: error: not JSON")


def test_every_method_and_the_graph_bridge(tmp_path, fake_embeddings):
    store = tmp_path / "store"
    settings = EmbeddingSettings(fake_embeddings.url, "e5-passage", "e5-query")
    result = ingest(store, [write_jsonl(tmp_path / "c.jsonl", CORPUS)], embeddings=settings)
    assert result.embedded == 5
    question = Question("x", "Where was the director of Blue Harbor born?")
    for method in ("bm25", "dense", "hybrid", "graph", "default"):
        answer = retrieve(store, [question], k=3, method=method, embeddings=settings)[0]
        assert answer.passages and answer.passages[0]["rank"] == 1, method
    default = retrieve(store, [question], k=3, embeddings=settings)[0]
    assert ids(default)[:2] == ["p1", "p2"]
    bridge = default.passages[1]["signals"]["graph"]
    assert bridge == {"from": "p1", "way": "mentions", "name": "mara quill"}
    assert default.passages[0]["signals"]["graph"]["question"] is True
    again = ingest(store, [tmp_path / "c.jsonl"], embeddings=settings, full=True)
    assert again.embedded == 0  # vectors are cached by text


def test_without_embeddings_the_default_says_so(tmp_path):
    store = tmp_path / "store"
    ingest(store, [write_jsonl(tmp_path / "c.jsonl", CORPUS)])
    answer = retrieve(store, ["Who directed Blue Harbor?"])[0]
    assert ids(answer)[0] == "p1"
    assert any("no embeddings endpoint" in n for n in answer.notes)
    with pytest.raises(KgbuildError, match="--method dense needs"):
        retrieve(store, ["x"], method="dense")


def test_cli_ingest_and_jsonl(tmp_path, fake_embeddings, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("KGBUILD_EMBEDDINGS_URL", "OPENAI_BASE_URL", "KGBUILD_EMBEDDINGS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    write_jsonl(tmp_path / "c.jsonl", CORPUS)
    write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "question": "Who directed Blue Harbor?"},
                                       {"id": "b", "question": "What is the capital of Estonia?"}])
    runner = CliRunner()
    out = runner.invoke(main, ["ingest", "c.jsonl", "--embeddings-url", fake_embeddings.url,
                               "--embeddings-model", "e5-passage"])
    assert out.exit_code == 0, out.output
    assert "5 added" in out.output
    # no embeddings flag: the endpoint and models the ingest used
    out = runner.invoke(main, ["retrieve", "--questions", "q.jsonl", "--k", "2", "--format", "jsonl"])
    assert out.exit_code == 0, out.output
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["a", "b"]
    assert set(lines[0]) == {"id", "passages", "abstain"}
    assert lines[0]["passages"][0]["id"] == "p1" and lines[1]["passages"][0]["id"] == "p3"
    assert sorted(fake_embeddings.inputs[-2:]) == ["What is the capital of Estonia?", "Who directed Blue Harbor?"]
    out = runner.invoke(main, ["retrieve", "-q", "capital of Estonia", "--format", "context", "--k", "1"])
    assert out.stdout.startswith("[p3] (title: Tallinn)\nTallinn is the capital")


def test_cli_errors_are_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.jsonl").write_text('{"id": "a", "question": "x"}\n{"id": "b"}\n')
    runner = CliRunner()
    out = runner.invoke(main, ["retrieve", "-q", "x"])
    assert out.exit_code == 2 and "no passages here" in out.output
    write_jsonl(tmp_path / "c.jsonl", CORPUS)
    runner.invoke(main, ["ingest", "c.jsonl", "--no-embed"])
    out = runner.invoke(main, ["retrieve", "--questions", "q.jsonl"])
    assert out.exit_code == 2
    assert out.output.strip().endswith("q.jsonl:2: question 'b': no 'question' (a non-empty string) [input]")
    assert len(out.output.strip().splitlines()) == 1


def test_looking_word_runs_up_finds_what_the_automaton_finds():
    from kgbuild.passages.links import Linker, find_by_lookup

    names = {"mara quill": (1, True), "tallinn": (2, True), "pricing sdk": (3, False),
             "quill": (4, True), "blue harbor": (5, True), "young new south wales": (6, True)}
    automaton = Linker(names)
    for text in ["Blue Harbor, by Mara Quill (born in Tallinn).", "the pricing-sdk and Pricing SDK",
                 "mara quill in lower case; Quill alone", "Mara  Quill with two spaces", "",
                 "born in Young, New South Wales, in 1962"]:
        looked_up = find_by_lookup(text, lambda keys: {k: names[k] for k in keys if k in names}, 4)
        assert sorted(looked_up) == sorted(automaton.find(text)), text
    found = list(automaton.find("born in Young, New South Wales, in 1962"))
    assert found == [(6, 8, 30)]  # the words, whatever punctuation separates them


def test_the_header_carries_short_metadata_and_dates_in_words():
    from kgbuild.passages.corpus import header

    assert header("Apple unveils a phone", {
        "source": "TechCrunch", "published_at": "2023-10-05T14:00:00+00:00",
        "url": "https://example.org/a", "tags": ["x"], "body_length": 5000,
        "summary": "a" * 200}) == ("Apple unveils a phone\nbody_length: 5000\n"
                                   "published_at: 2023-10-05T14:00:00+00:00 (October 5, 2023)\n"
                                   "source: TechCrunch")


def test_a_name_many_questions_share_and_the_corpus_lacks_is_no_reason_to_abstain(tmp_path):
    store = tmp_path / "store"
    ingest(store, [write_jsonl(tmp_path / "c.jsonl", CORPUS)])
    asked = [Question(f"q{i}", f"According to Gazettia, who directed Blue Harbor? ({i})")
             for i in range(3)] + [Question("z", "What did Zorblatt report about Blue Harbor?")]
    answers = {r.id: r.abstain for r in retrieve(store, asked)}
    assert [answers[f"q{i}"] for i in range(3)] == [None, None, None]  # the corpus's gap
    assert answers["z"]["names"] == ["Zorblatt"]  # one question's unknown name
    alone = retrieve(store, [asked[0]])[0].abstain
    assert alone["names"] == ["Gazettia"]  # asked alone, nothing says it is a gap


def test_unchanged_lines_are_not_parsed_again_but_keep_their_line(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS[:3])
    store = tmp_path / "store"
    ingest(store, [corpus])
    lines = corpus.read_text().splitlines(keepends=True)
    corpus.write_text(json.dumps(CORPUS[3]) + "\n" + "".join(lines) + lines[0])  # moved, repeated
    again = ingest(store, [corpus])
    assert (again.added, again.unchanged, again.changed) == (1, 3, 0)
    assert [(p.line, p.code) for p in again.problems] == [(5, "duplicate-id")]
    with PassageIndex(store) as index:
        assert dict(index.db.execute("SELECT id, line FROM passages")) == {
            "p1": 2, "p2": 3, "p3": 4, "p4": 1}
