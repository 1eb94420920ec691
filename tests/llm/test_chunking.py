"""Chunking at natural boundaries with overlap, and the prompt layout."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kgbuild.extract.text.chunking import blocks, chunk_text, document_title
from kgbuild.extract.text.prompts import (
    GLEANING,
    extraction_request,
    gleaning_request,
    predicates,
    response_schema,
    system_message,
)
from kgbuild.schema.loader import load_schema

DOC = """# Checkout design

Intro paragraph. It has two sentences.

## Dependencies

Checkout Service depends on Pricing SDK. The Pricing SDK is maintained by Commerce Platform.

```yaml
# not a heading, inside a fence
dependsOn: [pricing-sdk]
```

Runbook
=======

Step one. Step two! Step three?

### Deep
Text under deep.
"""


def test_blocks_headings_fences_and_sections():
    found = [(DOC[b.start:b.end].splitlines()[0], b.heading, b.section) for b in blocks(DOC)]
    assert found == [
        ("# Checkout design", 1, ("Checkout design",)),
        ("Intro paragraph. It has two sentences.", 0, ("Checkout design",)),
        ("## Dependencies", 2, ("Checkout design", "Dependencies")),
        ("Checkout Service depends on Pricing SDK. The Pricing SDK is maintained by Commerce "
         "Platform.", 0, ("Checkout design", "Dependencies")),
        ("```yaml", 0, ("Checkout design", "Dependencies")),  # the fence is one block
        ("Runbook", 1, ("Runbook",)),  # setext: '=' is the first underline seen, level 1
        ("Step one. Step two! Step three?", 0, ("Runbook",)),
        ("### Deep", 3, ("Runbook", "Deep")),
        ("Text under deep.", 0, ("Runbook", "Deep")),
    ]


def test_rst_titles_and_title_fallback():
    rst = "=====\nGuide\n=====\n\nIntro.\n\nInstall\n-------\n\nRun it.\n"
    assert [(b.heading, b.title) for b in blocks(rst) if b.heading] == [(1, "Guide"), (2, "Install")]
    assert document_title(rst, "x.rst") == "Guide"
    assert document_title("no heading here\n", "notes.txt") == "notes.txt"
    assert document_title("## only a second level\n\ntext", "x.md") == "only a second level"


def test_chunks_are_spans_with_stable_ids_sections_and_overlap():
    chunks = chunk_text(DOC, "docs/design.md", size=120, overlap=40)
    assert [c.id for c in chunks] == [f"docs/design.md#c{i}" for i in range(1, len(chunks) + 1)]
    for c in chunks:
        assert DOC[c.start:c.end] == c.text and c.title == "Checkout design"
        assert not c.text.rstrip().endswith(("# Checkout design", "## Dependencies", "### Deep"))
    assert chunks[1].section == ("Checkout design", "Dependencies")
    assert chunks[-1].section[0] == "Runbook"
    # each chunk after the first repeats the end of the one before (at most `overlap` chars)
    for prev, cur in zip(chunks, chunks[1:]):
        if cur.start < prev.end:
            assert prev.end - cur.start <= 40
    assert chunk_text(DOC, "docs/design.md", size=120, overlap=40) == chunks  # deterministic


def test_a_heading_stays_with_its_text_and_long_blocks_split_at_sentences():
    text = "# T\n\n" + " ".join(f"Sentence number {i} is here." for i in range(60)) + "\n"
    chunks = chunk_text(text, "d", size=200, overlap=0)
    assert chunks[0].text.startswith("# T\n\nSentence number 0")
    assert all(len(c.text) <= 200 for c in chunks[1:])
    assert all(c.text.endswith(".") for c in chunks[:-1])  # cut after a sentence
    words = "x" * 1000  # no boundary at all: cut anyway
    assert [len(c.text) for c in chunk_text(words, "d", size=300, overlap=0)] == [300, 300, 300, 100]


def test_document_mode_and_empty_documents():
    [whole] = chunk_text(DOC, "d.md", mode="document")
    assert whole.text == DOC.strip() and whole.id == "d.md#c1" and whole.section == ()
    assert chunk_text("", "d.md") == [] and chunk_text("  \n\n ", "d.md", mode="document") == []


def test_crlf_text_keeps_exact_spans():
    text = "# A\r\n\r\nFirst para.\r\n\r\n## B\r\n\r\nSecond para.\r\n"
    for c in chunk_text(text, "d", size=100, overlap=0):
        assert text[c.start:c.end] == c.text
    assert [b.title for b in blocks(text) if b.heading] == ["A", "B"]


_PIECES = st.sampled_from(["# Title\n", "## Sub\n", "Para one. Two!\n", "\n", "\n\n", "```\ncode\n",
                           "```\n", "Setext\n===\n", "- item\n", "word " * 30, "x" * 250, "\r\n"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=40), st.integers(100, 400), st.integers(0, 120))
def test_chunks_cover_the_text_exactly(pieces, size, overlap):
    text = "".join(pieces)
    chunks = chunk_text(text, "d", size=size, overlap=overlap)
    covered = set()
    for c in chunks:
        assert text[c.start:c.end] == c.text and c.start < c.end
        covered.update(range(c.start, c.end))
    missing = [i for i, ch in enumerate(text) if i not in covered and not ch.isspace()]
    assert missing == []  # every character that is not white space is in some chunk
    starts = [c.start for c in chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)


def test_prompts_put_the_fixed_part_first():
    schema = load_schema("software")
    chunks = chunk_text(DOC, "docs/design.md", size=120, overlap=0)
    reqs = [extraction_request(schema, c) for c in chunks]
    assert len({r.messages[0]["content"] for r in reqs}) == 1  # one system message for all
    system = system_message(schema)
    assert system == reqs[0].messages[0]["content"]
    for word in ("dependsOn: Component|Resource -> Component|Resource|API", "ownerOf", "Library",
                 "description (string)", "verbatim"):
        assert word in system
    user = reqs[1].messages[1]["content"]
    assert user.startswith("Document: Checkout design\nSection: Checkout design > Dependencies\n")
    assert user.endswith('"""\n' + chunks[1].text + '\n"""')
    assert reqs[1].tag == "docs/design.md#c2"
    schema_json = response_schema(schema)
    item = schema_json["properties"]["relations"]["items"]
    assert set(item["properties"]["predicate"]["enum"]) == set(predicates(schema))
    assert {"dependsOn", "dependencyOf", "description"} <= set(predicates(schema))
    assert item["additionalProperties"] is False and set(item["required"]) == set(item["properties"])
    follow = gleaning_request(reqs[0], '{"relations": []}')
    assert follow.messages[:2] == reqs[0].messages and follow.messages[-1]["content"] == GLEANING
    assert re.fullmatch(r"[A-Za-z0-9_-]+", reqs[0].schema_name)  # what OpenAI accepts as a name
