"""Gitignore-style path patterns, matched in time linear in the path.

The one pattern translator of kgbuild: access rules, CODEOWNERS rules, project excludes and
``.gitignore`` files all compile through :mod:`pathspec` on its RE2 backend. RE2 never
backtracks, so a hostile pattern such as ``*a*a*a*a*a*a*a*b`` costs what a plain one does.
Paths are POSIX and relative (no leading ``/``); a trailing ``/`` marks a folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from ..errors import InputError

if TYPE_CHECKING:  # (imported when a pattern is compiled: most runs compile none)
    import pathspec

BACKEND = "re2"
MAX_PATTERN = 4096  # characters; longer patterns are refused before compiling


def _spec(lines: Iterable[str], source: str, line: int | None = None) -> pathspec.GitIgnoreSpec:
    lines = list(lines)
    for i, text in enumerate(lines):
        if len(text) > MAX_PATTERN:
            raise InputError(f"pattern longer than {MAX_PATTERN} characters", source,
                             line if line is not None else i + 1)
    try:
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines(lines, backend=BACKEND)
    except (ValueError, TypeError) as exc:  # GitWildMatchPatternError is a ValueError
        raise InputError(f"invalid pattern: {exc}", source, line) from None


class IgnoreSpec:
    """A whole gitignore-style file or list (``!`` negates, the last matching line decides)."""

    def __init__(self, lines: Iterable[str], source: str = "<patterns>"):
        self._spec = _spec(lines, source)

    def matches(self, path: str) -> bool:
        return self._spec.match_file(path)

    def decide(self, path: str) -> bool | None:
        """True (ignored) or False (re-included by ``!``) by the last matching line; None
        when no line matches, so that an enclosing file's verdict stands."""
        return self._spec.check_file(path).include


class Pattern:
    """One gitignore pattern, compiled alone; raises :class:`InputError` (at ``source:line``)
    when it is too long or invalid.

    ``codeowners`` applies GitHub's one exception to gitignore matching: a pattern ending in
    ``/*`` (``docs/*``, not ``docs/**/*``) matches the files directly in the folders it names,
    not the files in their subfolders.
    """

    def __init__(self, pattern: str, source: str = "<patterns>", line: int | None = None, *,
                 codeowners: bool = False):
        self.pattern = pattern
        lines = [pattern]
        body = pattern.removeprefix("/")
        if codeowners and body.endswith("/*") and not body.endswith("**/*"):
            lines.append(f"!{pattern}/**")  # un-match what lies below a folder it matches
        self._spec = _spec(lines, source, line)

    def matches(self, path: str) -> bool:
        return self._spec.match_file(path)

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"


class PatternList:
    """Independent patterns, each compiled alone, for rules that need to know *which*
    patterns match (CODEOWNERS: the last one wins; access rules: the union of all).

    ``patterns`` are strings (compiled here; the first invalid one raises at its ``lines``
    entry) or :class:`Pattern` objects compiled by the caller (who may skip invalid ones).
    """

    def __init__(self, patterns: Sequence[str | Pattern], source: str = "<patterns>",
                 lines: Sequence[int | None] | None = None, *, codeowners: bool = False):
        lines = lines or [None] * len(patterns)
        self._compiled = [p if isinstance(p, Pattern) else Pattern(p, source, line, codeowners=codeowners)
                          for p, line in zip(patterns, lines)]
        self.patterns = [p.pattern for p in self._compiled]

    def __len__(self) -> int:
        return len(self._compiled)

    def matching(self, path: str) -> list[int]:
        """Indices of the patterns that match ``path``, in order."""
        return [i for i, p in enumerate(self._compiled) if p.matches(path)]

    def last(self, path: str) -> int | None:
        """Index of the last pattern matching ``path``, or None."""
        for i in range(len(self._compiled) - 1, -1, -1):
            if self._compiled[i].matches(path):
                return i
        return None
