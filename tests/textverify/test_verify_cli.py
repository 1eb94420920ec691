"""`kgbuild verify` end to end: another tool's relations, a catalog store, a bad line."""

from __future__ import annotations

import json

from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO

from kgbuild import load_schema
from kgbuild.io.rdffile import load_graph
from kgbuild.project.pipeline import build_graph
from kgbuild.project.verifyfile import verify_file
from kgbuild.validate.validator import validate_graph
from kgbuild.cli import main

DOC = """# Checkout pricing

Checkout Service depends on Pricing SDK for every price it shows. The Pricing SDK
is owned by Commerce Platform. The Billing Worker depends on the Orders DB.
"""

LINES = [
    {"subject": "Checkout Service", "predicate": "dependsOn", "object": "Pricing SDK",
     "evidence": "Checkout Service depends on Pricing SDK for every price it shows.",
     "source": "design.md"},
    {"subject": "Commerce Platform", "subject_type": "Group", "predicate": "ownerOf",
     "object": "pricing sdk", "evidence": "The Pricing SDK is owned by Commerce Platform.",
     "source": "design.md", "model": "someone else's"},
    {"subject": "Pricing SDK", "predicate": "dependsOn", "object": "pricingSDK",
     "evidence": "a-verbatim quote", "source": "design.md"},
    {"subject": "Billing Worker", "predicate": "dependsOn", "object": "Orders DB",
     "evidence": "The Billing Worker depends on the Orders DB.", "source": "design.md"},
    {"subject": "Checkout Service", "predicate": "likes", "object": "Pricing SDK",
     "evidence": "Checkout Service depends on Pricing SDK", "source": "design.md"},
]


def setup(tmp_path):
    store = tmp_path / "store"
    build_graph([FIXTURE_CATALOG], "software", store=store, timestamp=0, root=REPO,
                resolve=False, validate=False).store.close()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "design.md").write_text(DOC, encoding="utf-8")
    edges = tmp_path / "edges.jsonl"
    text = "\n".join(json.dumps(x) for x in LINES[:2]) + "\n{not json\n" + \
        "\n".join(json.dumps(x) for x in LINES[2:]) + "\n" + \
        json.dumps({**LINES[0], "source": "../outside.md"}) + "\n\n"
    edges.write_text(text, encoding="utf-8")
    return store, docs, edges


def test_cli_writes_the_graph_and_the_report_and_names_the_bad_lines(tmp_path, monkeypatch):
    store, docs, edges = setup(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["verify", "edges.jsonl", "--sources", "docs", "--store", "store",
                                    "-o", "verified.ttl", "--report", "rejected.jsonl",
                                    "--timestamp", "0"])
    assert out.exit_code == 0, out.output
    assert "accepted 3, rejected 4" in out.output
    assert "malformed 2" in out.output and "evidence-not-found 1" in out.output
    assert "unknown-predicate 1" in out.output
    assert "edges.jsonl:3: error: not JSON" in out.output
    assert "edges.jsonl:7: error: source '../outside.md' is outside --sources" in out.output
    assert "Traceback" not in out.output

    report = [json.loads(x) for x in (tmp_path / "rejected.jsonl").read_text().splitlines()]
    assert [(r["line"], r["reason"]) for r in report] == [
        (3, "malformed"), (4, "evidence-not-found"), (6, "unknown-predicate"), (7, "malformed")]

    schema = load_schema("software")
    g = load_graph(tmp_path / "verified.ttl")
    assert validate_graph(g, schema).conforms
    ttl = (tmp_path / "verified.ttl").read_text()
    # the extracted names joined the catalog's entities; the new one got a stable ID
    assert "<https://kgbuild.dev/id/component:default/checkout-service> a sw:Service" in ttl
    assert "sw:dependsOn <https://kgbuild.dev/id/component:default/pricing-sdk>" in ttl
    assert "sw:ownedBy <https://kgbuild.dev/id/group:default/commerce-platform>" in ttl
    assert "<https://kgbuild.dev/id/component:default/billing-worker> a sw:Component" in ttl
    assert "pricingsdk" not in ttl.lower().replace("pricing-sdk", "")
    assert 'kg:extractor "verify:edges.jsonl"' in ttl and "kg:spanStart" in ttl

    again = CliRunner().invoke(main, ["verify", "edges.jsonl", "--sources", "docs", "--store",
                                      "store", "-o", "again.ttl", "--timestamp", "0"])
    assert again.exit_code == 0
    assert (tmp_path / "again.ttl").read_text() == ttl  # deterministic


def test_json_format_and_no_store(tmp_path, monkeypatch):
    _store, docs, edges = setup(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["verify", str(edges), "--sources", str(docs), "--no-store",
                                    "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["accepted"] == 3 and data["rejected"] == 4 and data["relations"] == 7
    assert data["rejected_by_reason"] == {"evidence-not-found": 1, "malformed": 2,
                                          "unknown-predicate": 1}
    assert [p["line"] for p in data["problems"]] == [3, 7]


def test_library_result_without_a_store_still_gives_stable_ids(tmp_path):
    _store, docs, edges = setup(tmp_path)
    result = verify_file(edges, docs, "software", timestamp=0)
    ids = {(e.subject_id, e.predicate, e.object_id) for e in result.accepted["design.md"]}
    assert ("component:default/checkout-service", "dependsOn", "component:default/pricing-sdk") in ids


def test_missing_inputs_are_one_line_errors(tmp_path, monkeypatch):
    _store, docs, edges = setup(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["verify", "missing.jsonl", "--sources", "docs"])
    assert out.exit_code == 2 and "Traceback" not in out.output
    out = CliRunner().invoke(main, ["verify", "edges.jsonl", "--sources", "nowhere"])
    assert out.exit_code == 2 and "Traceback" not in out.output
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00garbage\x00\x00")
    out = CliRunner().invoke(main, ["verify", "bin.jsonl", "--sources", "docs", "--no-store"])
    assert out.exit_code in (0, 2) and "Traceback" not in out.output
