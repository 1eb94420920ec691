"""Go ``go.mod``: the module as a Component, each ``require`` as a Library dependency.

IDs are ``pkg:golang/<module path>`` (case kept). Every requirement, in a ``require (...)``
block or on a single line, is one ``dependsOn`` edge at its line, evidence the trimmed
line, so ``// indirect`` stays visible. ``replace``/``exclude``/``retract`` and the other
directives change no dependency edge and are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import InputError, InvalidValue, Problem
from ...io.text import brief, clip, read_text, split_lines
from ..records import Context, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import depends_on, input_problem, scoped_id
from .purl import golang_purl

DIRECTIVES = {"module", "go", "toolchain", "godebug", "require", "replace", "exclude", "retract",
              "tool", "ignore"}
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`|\S+')


class GoModExtractor:
    name = "gomod"
    version = 2  # 2: lines counted at \n only; CODEOWNERS evidence of one owner per rule
    emits = frozenset({"Component", "dependsOn", "ownedBy"})
    ownable = True  # the module is the repository's own; go.mod names no owner

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "go.mod"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        out = Extraction()
        module: tuple[int, list[str]] | None = None
        requires: list[tuple[int, list[str], str]] = []
        for line, verb, args, raw in _directives(text, src.doc_id, out.problems):
            if verb == "module" and module is None:
                module = (line, args)
            elif verb == "require":
                requires.append((line, args, raw))
        out.nodes.append(_module_node(module, src, out.problems))
        me = out.nodes[0].id
        for line, args, raw in requires:
            if out.full(src.doc_id, line):
                break
            try:
                if len(args) != 2:
                    raise InvalidValue(f"expected 'path version', got {len(args)} fields", code="bad-require")
                out.edges.append(depends_on(me, golang_purl(args[0]), args[0], clip(raw), line=line,
                                            qualifiers=("indirect",) if "// indirect" in raw else ()))
            except ValueError as exc:
                out.problems.append(Problem("warning", "bad-require", f"require: {exc}; skipped",
                                            src.doc_id, line))
        return out


def _module_node(module: tuple[int, list[str]] | None, src: SourceFile,
                 problems: list[Problem]) -> NodeRecord:
    line, args = module or (None, [])
    path = args[0] if len(args) == 1 else ""
    try:
        purl = golang_purl(path)
    except ValueError as exc:
        problems.append(Problem("warning", "bad-module", f"{exc if module else 'no module directive'}"
                                f"; using a document-scoped ID", src.doc_id, line or 1))
        return NodeRecord(scoped_id(src.doc_id, "module"), "Component", path or src.path.parent.name,
                          line=line)
    return NodeRecord(purl, "Component", path, line=line, attributes={"purl": purl})


def _directives(text: str, doc_id: str, problems: list[Problem]):
    """``(line, verb, args, trimmed line)`` for every directive, block entries included."""
    block: tuple[str, int] | None = None
    for n, raw in enumerate(split_lines(text), 1):
        code = raw.split("//", 1)[0].strip()
        if not code:
            continue
        words = [w[1:-1] if w[0] in "\"`" else w for w in _TOKENS.findall(code)]
        if block:
            if words == [")"]:
                block = None
            else:
                yield n, block[0], words, raw.strip()
            continue
        if words[0] not in DIRECTIVES:
            problems.append(Problem("warning", "unknown-directive",
                                    f"unknown go.mod directive {brief(words[0])}; skipped", doc_id, n))
        elif words[1:] == ["("]:
            block = (words[0], n)
        else:
            yield n, words[0], words[1:], raw.strip()
    if block:
        problems.append(Problem("warning", "unterminated-block",
                                f"{block[0]} block opened here is never closed", doc_id, block[1]))


register(GoModExtractor())
