"""``resolve explain`` and ``resolve review`` answer for a principal; hostile queue files."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from kgbuild import Assertion, InputError, KnowledgeGraph, load_schema
from kgbuild.graph.model import SourceDocument
from kgbuild.cli.main import main
from kgbuild.graph.access import Principal
from kgbuild.resolve.review import explain, load_review_queue, review, save_review_queue

SCHEMA = load_schema()
ALL = Principal.all_access()


def graph() -> KnowledgeGraph:
    kg = KnowledgeGraph(SCHEMA)
    kg.add_document(SourceDocument("pub.yaml", "pub.yaml", "0" * 64))
    kg.add_document(SourceDocument("sec.yaml", "sec.yaml", "1" * 64, frozenset({"s"})))
    kg.add_node("component:default/payments", "Service", "Payments", source="pub.yaml")
    kg.add_node("component:default/payment", "Service", "Payment", source="pub.yaml")
    for name in ("zephyr-vault", "zephyr-vaults"):  # a hidden pair of look-alikes
        kg.add_node(f"component:default/{name}", "Service", name, source="sec.yaml").access.add("s")
    kg.add_node("pkg:npm/quokka", "Library", "quokka")  # a stub only the secret file names
    kg.add_assertion(Assertion("component:default/zephyr-vault", "dependsOn", "pkg:npm/quokka",
                               "sec.yaml", "t", "2024-01-01T00:00:00Z", access=frozenset({"s"})))
    return kg


@pytest.fixture
def registry(tmp_path):
    path = tmp_path / "aliases.yaml"
    path.write_text("aliases:\n  Service:\n    component:default/zephyr-vault: [zv]\n"
                    "    component:default/nowhere: [nw]\n    component:default/payments: [pay]\n")
    return path


def test_explain_sees_only_what_the_principal_sees(registry):
    kg = graph()
    for hidden, ghost in [("zephyr-vault", "wobbegong"), ("quokka", "wombat"), ("zv", "nw")]:
        a, b = (explain(kg, m, None, registry) for m in (hidden, ghost))  # public by default
        for d in (a, b):
            del d["mention"], d["suggested_id"]
        assert a == b and a["status"] == "new", hidden
    assert explain(kg, "pay", None, registry)["id"] == "component:default/payments"
    assert explain(kg, "zv", None, registry, ALL)["id"] == "component:default/zephyr-vault"
    assert explain(kg, "zephyr-vault", "Service", registry, Principal.of("s"))["status"] == "resolved"


def test_review_lists_only_visible_mentions_and_duplicates(tmp_path, registry):
    kg = graph()
    queue = tmp_path / "queue.json"
    save_review_queue(queue, [
        {"mention": "quokka", "type": "Library", "status": "review", "reason": "x",
         "candidates": [{"id": "component:default/payments", "score": 80.0}]},
        {"mention": "Payment", "type": "Service", "status": "review",
         "reason": "looks like component:default/zephyr-vault",
         "candidates": [{"id": "component:default/payments", "score": 90.0}]},
        {"mention": "Payment", "type": None, "status": "review", "reason": "similar",
         "candidates": [{"id": "component:default/zephyr-vault", "score": 90.0}]},
        {"mention": "payments", "type": None, "status": "review", "reason": "similar",
         "candidates": [{"id": "component:default/payment", "score": 90.0}]},
        {"mention": "ghost", "type": None, "status": "review", "reason": "similar",
         "candidates": []}])
    public = review(kg, registry, queue)
    assert [q["mention"] for q in public["queue"]] == ["payments"]
    assert [(d["a"], d["b"]) for d in public["possible_duplicates"]] == [
        ("component:default/payment", "component:default/payments")]
    assert "zephyr" not in json.dumps(public)
    everyone = review(kg, registry, queue, principal=ALL)
    assert len(everyone["queue"]) == 5
    assert ("component:default/zephyr-vault", "component:default/zephyr-vaults") in {
        (d["a"], d["b"]) for d in everyone["possible_duplicates"]}


def test_an_unlabelled_graph_is_reviewed_as_before(tmp_path):
    kg = KnowledgeGraph(SCHEMA)
    kg.add_node("component:default/payments", "Service", "Payments")
    queue = tmp_path / "queue.json"
    save_review_queue(queue, [{"mention": "anything", "type": None, "status": "review",
                               "reason": "r", "candidates": [{"id": "component:default/x"}]}])
    assert len(review(kg, None, queue)["queue"]) == 1  # nothing is hidden: nothing filtered


@pytest.mark.parametrize("content, message", [
    (b"{not json", "not JSON"),
    (b"[" * 200_000 + b"]" * 200_000, "not JSON"),
    (b'{"queue": 3}', 'expected {"queue"'),
    (b"[]", 'expected {"queue"'),
    (b'{"queue": [1]}', "item 1 is not a queued mention"),
    (b'{"queue": [{"mention": 5}]}', "item 1"),
    (b'{"queue": [{"mention": "a", "type": 7}]}', "item 1"),
    (b'{"queue": [{"mention": "a", "candidates": [{"score": 1}]}]}', "item 1"),
    (b'{"queue": [{"mention": "a", "candidates": "xy"}]}', "item 1"),
    (b'{"queue": [{"mention": "a", "type": null}, {"mention": "b", "id": [1]}]}', "item 2"),
    (b'\xff\xfe{"queue": []}', "not UTF-8"),
])
def test_bad_queue_files_are_one_located_error(tmp_path, content, message):
    path = tmp_path / "queue.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        load_review_queue(path)
    assert info.value.file == str(path)
    r = CliRunner().invoke(main, ["resolve", "review", "--queue", str(path), "--graph",
                                  str(_graph_file(tmp_path))])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert str(path) in r.output and "Traceback" not in r.output


def test_a_queue_that_is_a_fifo_or_huge_is_refused_unread(tmp_path):
    fifo = tmp_path / "queue.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        load_review_queue(fifo)  # returns: never opened for a blocking read
    huge = tmp_path / "huge.json"
    with huge.open("wb") as fh:
        fh.truncate(64 * 2**20)  # sparse: nothing written
    with pytest.raises(InputError, match="over the"):
        load_review_queue(huge)


def _graph_file(tmp_path):
    path = tmp_path / "g.nt"
    path.write_text("")
    return path


def test_cli_resolve_principal_options(tmp_path, registry):
    from kgbuild.graph.rdf import to_rdflib

    path = tmp_path / "g.ttl"
    to_rdflib(graph()).serialize(path, format="turtle")
    base = ["--graph", str(path), "--registry", str(registry), "--format", "json"]
    run = CliRunner().invoke
    public = json.loads(run(main, ["resolve", "explain", "zv", *base]).output)
    secret = json.loads(run(main, ["resolve", "explain", "zv", *base, "--principal", "s"]).output)
    everyone = json.loads(run(main, ["resolve", "explain", "zv", *base, "--all-access"]).output)
    assert public["status"] == "new" and secret["id"] == everyone["id"] == "component:default/zephyr-vault"
    r = run(main, ["resolve", "review", *base])
    assert r.exit_code == 0 and "zephyr" not in r.output
    r = run(main, ["resolve", "review", *base, "--as", "s"])
    assert r.exit_code == 0 and "zephyr-vaults" in r.output
    r = run(main, ["resolve", "explain", "zv", *base, "--principal", "bad label"])
    assert r.exit_code == 2 and "invalid access label" in r.output
