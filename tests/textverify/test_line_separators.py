"""`kgbuild verify` reads JSON Lines as JSON Lines: a line ends at ``\\n`` only.

U+2028, U+2029 and U+0085 are valid unescaped inside a JSON string; ``str.splitlines`` also
breaks there, which cut such a relation into two "not JSON" lines and shifted every later
line number.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from kgbuild.project.verifyfile import verify_file
from kgbuild.cli import main

DOC = "Checkout Service depends on Pricing SDK for every price it shows.\n"
GOOD = {"subject": "Checkout Service", "subject_type": "Service", "predicate": "dependsOn",
        "object": "Pricing SDK", "object_type": "Library", "source": "design.md",
        "evidence": "Checkout Service depends on Pricing SDK for every price it shows."}


def edges_file(tmp_path, newline: str = "\n"):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "design.md").write_text(DOC, encoding="utf-8")
    lines = [json.dumps({**GOOD, "model": "a\u2028b\u2029c\u0085d"}, ensure_ascii=False),
             "{not json",
             json.dumps({**GOOD, "predicate": "likes", "object": "Pricing\u2028SDK"}, ensure_ascii=False)]
    edges = tmp_path / "edges.jsonl"
    edges.write_bytes(newline.join(lines).encode("utf-8") + newline.encode())
    return edges, docs


def test_unicode_line_separators_inside_strings_do_not_split_a_line(tmp_path):
    edges, docs = edges_file(tmp_path)
    result = verify_file(edges, docs, timestamp=0)
    assert result.lines == 3
    assert [(r["line"], r["reason"]) for r in result.rejected] == [
        (2, "malformed"), (3, "unknown-predicate")]
    assert [(p.line, p.message[:8]) for p in result.problems] == [(2, "not JSON")]
    assert result.counts()["accepted"] == 1


def test_crlf_lines_are_read_and_counted(tmp_path):
    edges, docs = edges_file(tmp_path, "\r\n")
    result = verify_file(edges, docs, timestamp=0)
    assert [(r["line"], r["reason"]) for r in result.rejected] == [
        (2, "malformed"), (3, "unknown-predicate")]
    assert result.counts()["accepted"] == 1


def test_cli_names_the_one_bad_line(tmp_path, monkeypatch):
    edges_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["verify", "edges.jsonl", "--sources", "docs", "--timestamp", "0"])
    assert out.exit_code == 0, out.output
    assert "edges.jsonl:2: error: not JSON" in out.output
    assert out.output.count("not JSON") == 1 and "accepted 1, rejected 2" in out.output
