"""Text output for people: problems grouped by code, counted words, lines within 100 columns.

Every command that prints problems (build, extract, ingest, verify, the reading commands'
warnings) prints them through :func:`problem_lines`, with the shared ``--quiet`` and
``--verbose`` options; ``--format json`` keeps the full list.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

import click

WIDTH = 100  # columns of a text line
PER_CODE = 5  # problems listed per code without --verbose
_RANK = {"error": 0, "warning": 1}

QUIET = click.option("--quiet", is_flag=True,
                     help="Print errors only: no warnings, no notes (JSON keeps every problem).")
VERBOSE = click.option("--verbose", "--all", "verbose", is_flag=True,
                       help=f"List every problem (default: the first {PER_CODE} of each "
                            f"code, 10 of each validation group).")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1: ``1 edge``, ``2 edges``."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def problem_lines(problems: Iterable, *, quiet: bool = False, verbose: bool = False) -> list[str]:
    """Problems (:class:`~kgbuild.errors.Problem` or their ``to_dict()``) as text: a header
    with the counts by severity, then one block per code (errors first, then the largest),
    its count and its first :data:`PER_CODE` problems (all with ``verbose``), each the usual
    ``file:line: severity: message [code]`` line (so grep finds them); ``quiet`` keeps
    errors only."""
    items = [p if isinstance(p, Mapping) else p.to_dict() for p in problems]
    if quiet:
        items = [p for p in items if p["severity"] == "error"]
    if not items:
        return []
    groups: dict[str, list[Mapping]] = {}
    for p in items:
        groups.setdefault(p["code"], []).append(p)
    ranked = sorted(groups.items(), key=lambda kv: (min(_RANK.get(p["severity"], 2) for p in kv[1]),
                                                    -len(kv[1]), kv[0]))
    lines = [f"problems ({len(items):,}): " + _by_severity(items)]
    for code, ps in ranked:
        lines.append(f"  [{code}] {_by_severity(ps)}")
        shown = ps if verbose else ps[:PER_CODE]
        lines += [f"    {_where(p)}: {p['severity']}: {p['message']} [{code}]" for p in shown]
        if len(ps) > len(shown):
            lines.append(f"    ... and {len(ps) - len(shown):,} more (--verbose lists them)")
    return lines


def _by_severity(items: list[Mapping]) -> str:
    counts: dict[str, int] = {}
    for p in items:
        counts[p["severity"]] = counts.get(p["severity"], 0) + 1
    return ", ".join(plural(n, sev) for sev, n in sorted(counts.items(),
                                                         key=lambda kv: _RANK.get(kv[0], 2)))


def _where(p: Mapping) -> str:
    return f"{p['file']}:{p['line']}" if p.get("line") else str(p["file"])


_INDENT = re.compile(r" *(?:[-*] |\.\.\. )?")
_ITEM = 24  # a list item at most this long is not broken
_ROOM = 20  # a word too long for any line is cut where it is when this much room is left


def fit(text: str, width: int = WIDTH) -> str:
    """``text`` with every line at most ``width`` columns. A table (consecutive rows of three
    or more cells apart by runs of spaces, or two under a rule of dashes) keeps one line a
    row and its columns aligned: its
    widest column is narrowed, cells cut in the middle with an ellipsis. Any other longer line
    is wrapped at spaces, its continuation indented past its own indent (and list mark); a
    word too long for a line (a path, an IRI) loses its middle to an ellipsis, keeping its
    start and its end (the file name and line)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        cells = _cells(lines[i])
        j = i + 1
        while cells and j < len(lines) and (c := _cells(lines[j])) and len(c) == len(cells) \
                and c[0] == cells[0]:
            j += 1
        block = lines[i:j]
        if all(len(line) <= width for line in block):
            out += block
        elif cells and (len(cells) > 3 or any(set("".join(_cells(b)[1:])) == {"-"}
                                                for b in block)):
            out += _table(block, width)
        else:
            for line in block:
                out += [line] if len(line) <= width else _wrap(line, width)
        i = j
    return "\n".join(out)


_GAP = re.compile(r" {2,}")


def _cells(line: str) -> list[str] | None:
    """[indent, cell, cell, ...] of what may be a table row (two cells or more), else None."""
    body = line.lstrip(" ")
    cells = _GAP.split(body.rstrip(" "))
    return [line[:len(line) - len(body)], *cells] if len(cells) >= 2 else None


def _table(rows: list[str], width: int) -> list[str]:
    """Rows of one table in ``width`` columns, aligned; the widest column narrowed first."""
    table = [_cells(r) for r in rows]
    indent = table[0][0]
    cols = len(table[0]) - 1
    widths = [max(len(t[k + 1]) for t in table) for k in range(cols)]
    while True:  # the widest column down to the next widest, and so on (8 at least)
        excess = len(indent) + sum(widths) + 2 * (cols - 1) - width
        k = max(range(cols), key=lambda n: widths[n])
        if excess <= 0 or widths[k] <= 8:
            break
        second = max((w for n, w in enumerate(widths) if n != k), default=0)
        widths[k] = max(widths[k] - min(excess, max(widths[k] - second, 1)), 8)
    out = []
    for t in table:
        cut = ["-" * widths[k] if set(c) == {"-"} else _cut(c, widths[k])  # a rule stays one
               for k, c in enumerate(t[1:])]
        row = indent + "  ".join(c.ljust(widths[k]) for k, c in enumerate(cut[:-1]))
        out.append(_cut(f"{row}  {cut[-1]}", width))
    return out


def _wrap(line: str, width: int) -> list[str]:
    out: list[str] = []
    lead = _INDENT.match(line).group(0)
    more = " " * min(len(lead) + 2, width // 2)
    current, fresh = lead, True  # fresh: nothing but the indent (and mark) on it yet
    for word in _units(line[len(lead):]):
        if not word and fresh:
            continue
        gap = "" if fresh else " "
        if len(current) + len(gap) + len(word) <= width:
            current += gap + word
            fresh = False
            continue
        room = width - len(current) - len(gap)
        if fresh or (len(more) + len(word) > width and room >= _ROOM):
            current += gap + _cut(word, room)  # too long anywhere: cut where it is
            fresh = False
            continue
        out.append(current.rstrip())
        current = more + _cut(word, width - len(more))
        fresh = not word
    out.append(current.rstrip())
    return out


def _units(body: str) -> list[str]:
    """What a line breaks between: its words, except that a short item of a comma-separated
    list (``Service 34,``) stays whole."""
    out: list[str] = []
    for item in body.split(", "):
        if out:
            out[-1] += ","
        out += [item] if len(item) <= _ITEM else item.split(" ")
    return out


def _cut(word: str, room: int) -> str:
    """``word`` in at most ``room`` characters: its middle an ellipsis."""
    if len(word) <= room:
        return word
    head = (room - 1) * 2 // 5
    return word[:head] + "…" + word[len(word) - (room - 1 - head):]
