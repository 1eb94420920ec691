"""Did-you-mean: the names closest to a mistyped one, for error messages."""

from __future__ import annotations

from typing import Iterable

CUTOFF = 75  # least similarity (0-100) of a suggestion


def closest(word: str, choices: Iterable[str], limit: int = 3) -> list[str]:
    """The ``limit`` choices most like ``word`` (case and separators aside), best first."""
    from rapidfuzz import fuzz, process  # (only when a name is wrong)

    names = sorted(set(choices))
    if not names:
        return []

    def norm(s: str, **_) -> str:
        return "".join(c for c in s.lower() if c.isalnum())

    key = norm(word)
    same = [n for n in names if norm(n) == key]
    if same:
        return same[:limit]
    found = process.extract(word, names, scorer=fuzz.ratio, processor=norm, limit=limit,
                            score_cutoff=CUTOFF)
    best = [name for name, _, _ in sorted(found, key=lambda f: (-f[1], f[0]))]
    if len(key) >= 2:  # a name begun: Lib for Library
        best += [n for n in names if norm(n).startswith(key) and n not in best]
    return best[:limit]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean X?)``, `` (did you mean X or Y?)``, or "" when nothing is close."""
    names = closest(word, choices)
    if not names:
        return ""
    shown = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f" (did you mean {shown}?)"
