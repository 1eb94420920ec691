"""Did-you-mean: the names closest to a mistyped one, for error messages."""

from __future__ import annotations

from typing import Iterable

CUTOFF = 75  # least similarity (0-100) of a suggestion
PREFIX_NAMES = 10_000  # up to this many names, one the word begins counts too
FOLDED_NAMES = 50_000  # up to this many, case and separators are ignored


def closest(word: str, choices: Iterable[str], limit: int = 3) -> list[str]:
    """The ``limit`` choices most like ``word`` (case and separators aside, up to
    :data:`FOLDED_NAMES` choices), best first; in a short list, a choice ``word`` begins
    (``Lib`` for ``Library``) after them."""
    from rapidfuzz import fuzz, process, utils  # (only when a name is wrong)

    names = sorted(set(choices))
    folded = len(names) <= FOLDED_NAMES  # (a graph's IDs: compared as they are, at once)
    found = process.extract(word, names, scorer=fuzz.ratio, limit=limit, score_cutoff=CUTOFF,
                            processor=utils.default_process if folded else None)
    best = [names[i] for _, _, i in sorted(found, key=lambda f: (-f[1], f[2]))]
    key = utils.default_process(word).replace(" ", "")
    if len(key) >= 2 and len(best) < limit and len(names) <= PREFIX_NAMES:
        best += [n for n in names if n not in best
                 and utils.default_process(n).replace(" ", "").startswith(key)]
    return best[:limit]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean X?)``, `` (did you mean X, Y or Z?)``, or "" when nothing is close."""
    names = closest(word, choices)
    if not names:
        return ""
    shown = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f" (did you mean {shown}?)"
