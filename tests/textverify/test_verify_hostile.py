"""`kgbuild verify` on hostile edges files and sources: one-line reports, never a traceback."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kgbuild import load_schema
from kgbuild.project.verifyfile import verify_file
from kgbuild.cli import main
from kgbuild.extract.text.contract import Relation, parse_relations
from kgbuild.extract.text.verify import REASONS, TextChunk, verify_relations

DOC = "Checkout Service depends on Pricing SDK.\n"
GOOD = {"subject": "Checkout Service", "predicate": "dependsOn", "object": "Pricing SDK",
        "evidence": "Checkout Service depends on Pricing SDK.", "source": "a.md"}


def files(tmp_path, lines):
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "a.md").write_text(DOC)
    edges = tmp_path / "edges.jsonl"
    edges.write_text("\n".join(lines) + "\n")
    return edges, docs


def test_deep_nesting_huge_values_and_odd_types_are_bad_lines(tmp_path):
    lines = ["[" * 100_000 + "]" * 100_000,
             json.dumps({**GOOD, "evidence": "x" * 200_000}),
             json.dumps({**GOOD, "subject": {"nested": ["object"]}}),
             json.dumps({**GOOD, "source": None}),
             json.dumps([GOOD]),
             json.dumps(GOOD)]
    edges, docs = files(tmp_path, lines)
    result = verify_file(edges, docs, "software", timestamp=0)
    assert result.counts()["accepted"] == 1
    by_line = {r["line"]: r["reason"] for r in result.rejected}
    assert by_line == {1: "malformed", 2: "malformed", 3: "malformed", 4: "malformed",
                       5: "malformed"}


def test_sources_that_escape_or_are_not_files(tmp_path):
    outside = tmp_path / "secret.md"
    outside.write_text("Checkout Service depends on Pricing SDK.\n")
    edges, docs = files(tmp_path, [json.dumps({**GOOD, "source": s}) for s in
                                   ("link.md", "/etc/passwd", "sub", "missing.md", "a.md")])
    os.symlink(outside, docs / "link.md")
    (docs / "sub").mkdir()
    result = verify_file(edges, docs, "software", timestamp=0)
    details = {r["line"]: r["detail"] for r in result.rejected}
    assert "outside --sources" in details[1]
    assert "relative" in details[2]
    assert "not a file" in details[3] and "not a file" in details[4]
    assert result.counts()["accepted"] == 1


def test_a_binary_edges_file_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "bin.jsonl").write_bytes(bytes(range(256)) * 4)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["verify", "bin.jsonl", "--sources", "docs", "--no-store"])
    assert "Traceback" not in out.output
    assert out.exit_code in (0, 2)
    assert len(out.output.strip().splitlines()) <= 30


def test_parse_relations_on_a_megabyte_of_garbage_is_bounded():
    rels, errors = parse_relations("{" * 500_000)
    assert rels == [] and len(errors) == 1


SCHEMA = load_schema("software")
NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40) | \
    st.sampled_from(["Checkout Service", "Pricing SDK", "(", "a)", "1,000", "2 May 1980", "U.S."])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NAMES, st.sampled_from(["dependsOn", "ownerOf", "tag", "x", ""]), NAMES,
                          NAMES | st.just(DOC.strip())), max_size=6),
       st.text(max_size=200))
@pytest.mark.slow
def test_verification_never_raises_and_accepts_only_quotes_of_the_text(items, extra):
    text = DOC + extra
    rels = [Relation(s, None, p, o, None, e) for s, p, o, e in items]
    out = verify_relations(rels, TextChunk(text, "a.md", "a.md#c0", 0), SCHEMA)
    assert len(out.accepted) + len(out.rejected) == len(rels)
    assert all(r.reason in REASONS for r in out.rejected)
    for edge in out.accepted:
        start, end = edge.span
        assert text[start:end] == edge.evidence and 0.0 <= edge.confidence <= 1.0
