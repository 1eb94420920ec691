"""The prompts of relation extraction, laid out for providers' prompt caching.

Every request starts with the same system message for a schema (the instructions, the entity
types, predicates and attributes with their descriptions), then a short context header (the
document's title, the chunk's section path), then the chunk: whatever varies comes last, so a
provider's prefix cache (OpenAI, vLLM, llama.cpp) serves the fixed part of every call after
the first. A gleaning pass adds the previous answer and asks for relations it missed.
"""

from __future__ import annotations

from ...llm.client import Request
from ...schema.model import Schema
from .chunking import Chunk
from .contract import relations_json_schema

PROMPT_VERSION = 1  # bump when the wording changes: the text extractor's version includes it

INSTRUCTIONS = """\
You extract relations from a technical document into a knowledge graph with a fixed schema.

Rules:
- Use only the entity types, predicates and attributes listed below, in the direction shown
  (subject type -> object type). An inverse predicate states the same relation the other way.
- "subject" and "object" are entity names exactly as the text writes them: no IDs, no
  invented or completed names. For an attribute, "object" is the value as the text writes it.
- "evidence" is a verbatim quote from the text, copied character for character: the shortest
  sentence or clause that states the relation. Never paraphrase it.
- Extract only what the text states, not what you know or guess. Give a type when the text
  makes it clear, else null.
- Answer with JSON only, in this shape:
  {"relations": [{"subject": "...", "subject_type": "..." or null, "predicate": "...",
                  "object": "...", "object_type": "..." or null, "evidence": "..."}]}
  and {"relations": []} when the text states no relation of the schema."""

GLEANING = ("Some relations of the schema stated in the text may be missing from your answer. "
            "List only the relations you missed, in the same JSON shape; answer "
            '{"relations": []} if there are none.')


def schema_section(schema: Schema) -> str:
    """The schema as the model reads it: types (with their parents), predicates with their
    domain, range, inverse and description, attributes with their datatype."""
    lines = ["Entity types:"]
    for t in sorted(schema.node_types.values(), key=lambda t: t.name):
        parent = f" (a kind of {t.parent})" if t.parent else ""
        lines.append(f"- {t.name}{parent}" + (f": {t.description}" if t.description else ""))
    lines.append("")
    lines.append("Predicates (subject type -> object type):")
    for e in sorted(schema.edge_types.values(), key=lambda e: e.name):
        about = f" {e.description}" if e.description else ""
        lines.append(f"- {e.name}: {'|'.join(e.domain)} -> {'|'.join(e.range)}.{about}")
        if e.inverse:
            lines.append(f"- {e.inverse}: {'|'.join(e.range)} -> {'|'.join(e.domain)}. "
                         f"The inverse of {e.name} (\"B {e.inverse} A\" means \"A {e.name} B\").")
    if schema.attributes:
        lines.append("")
        lines.append("Attributes (the object is a literal value, not an entity):")
        for a in sorted(schema.attributes.values(), key=lambda a: a.name):
            lines.append(f"- {a.name} ({a.datatype})" + (f": {a.description}" if a.description else ""))
    return "\n".join(lines)


def predicates(schema: Schema) -> list[str]:
    """Every name a relation may use: stored edges, their inverses, attributes."""
    names = {e.name for e in schema.edge_types.values()}
    names |= {e.inverse for e in schema.edge_types.values() if e.inverse}
    return sorted(names | set(schema.attributes))


def response_schema(schema: Schema) -> dict:
    """The strict JSON schema of the answer: the contract with the schema's predicate and
    type enums."""
    return relations_json_schema(predicates(schema), sorted(schema.node_types))


def system_message(schema: Schema) -> str:
    return INSTRUCTIONS + "\n\n" + schema_section(schema)


def user_message(chunk: Chunk) -> str:
    header = [f"Document: {chunk.title}"]
    if chunk.section:
        header.append("Section: " + " > ".join(chunk.section))
    return "\n".join(header) + '\n\nText:\n"""\n' + chunk.text + '\n"""'


def extraction_request(schema: Schema, chunk: Chunk, system: str | None = None,
                       schema_json: dict | None = None) -> Request:
    """The first request for a chunk (``system``/``schema_json``: precomputed, optional)."""
    messages = ({"role": "system", "content": system or system_message(schema)},
                {"role": "user", "content": user_message(chunk)})
    return Request(messages, schema_json or response_schema(schema), "kgbuild_relations", chunk.id)


def gleaning_request(previous: Request, answer: str) -> Request:
    """A follow-up asking for relations the answer to ``previous`` missed."""
    messages = (*previous.messages, {"role": "assistant", "content": answer},
                {"role": "user", "content": GLEANING})
    return Request(messages, previous.schema, previous.schema_name, previous.tag)
