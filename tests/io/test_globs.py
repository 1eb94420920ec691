"""io/globs: gitignore patterns on RE2, for access rules (union) and CODEOWNERS (last wins)."""

from __future__ import annotations

import pytest

from kgbuild.errors import InputError
from kgbuild.io.globs import MAX_PATTERN, Pattern, PatternList


@pytest.mark.parametrize("pattern, path, matches", [
    ("*.yaml", "a.yaml", True), ("*.yaml", "deep/er/a.yaml", True),  # no '/': any depth
    ("hr/*.yaml", "hr/a.yaml", True), ("hr/*.yaml", "x/hr/a.yaml", False),  # '/': anchored
    ("hr/*.yaml", "hr/deep/a.yaml", False),
    ("finance", "finance/x/y.yaml", True), ("finance", "teams/finance/y.yaml", True),
    ("finance", "finance.yaml", False),
    ("finance/", "finance/y.yaml", True), ("finance/", "finance", False),
    ("/top.yaml", "top.yaml", True), ("/top.yaml", "x/top.yaml", False),
    ("a/**/b", "a/b", True), ("a/**/b", "a/x/y/b", True), ("**/b", "x/b/c", True),
    ("team-[ab]/*", "team-a/x", True), ("team-[ab]/*", "team-c/x", False),
    ("?.md", "a.md", True), ("?.md", "ab.md", False),
])
def test_gitignore_semantics(pattern, path, matches):
    assert Pattern(pattern).matches(path) is matches


def test_codeowners_star_matches_direct_children_only():
    assert Pattern("docs/*").matches("docs/a/b.md")  # gitignore: docs/a is matched, so all below
    gh = Pattern("docs/*", codeowners=True)
    assert gh.matches("docs/a.md") and not gh.matches("docs/a/b.md")
    assert Pattern("docs/**/*", codeowners=True).matches("docs/a/b.md")
    assert Pattern("*.md", codeowners=True).matches("docs/a/b.md")


def test_pattern_list_union_and_last():
    pl = PatternList(["*", "/docs/", "*.md", "/docs/internal/"], codeowners=True)
    assert pl.matching("docs/internal/a.md") == [0, 1, 2, 3]
    assert pl.last("docs/internal/a.md") == 3 and pl.last("docs/a.txt") == 1
    assert pl.last("src/a.py") == 0 and len(pl) == 4
    assert PatternList([]).last("x") is None and PatternList([]).matching("x") == []
    mixed = PatternList([Pattern("a/"), "b/"])
    assert mixed.patterns == ["a/", "b/"] and mixed.matching("b/x") == [1]


def test_hostile_pattern_is_decided_in_linear_time():
    hostile = "*a*a*a*a*a*a*a*a*a*a*b"
    pl = PatternList([hostile, "x/" + hostile])
    folder = "a" * 46
    assert pl.matching(folder) == [] and pl.matching(f"{folder}/{folder}/{folder}") == []
    assert pl.matching(folder + "b") == [0] and pl.matching(f"x/{folder}b") == [0, 1]
    long_path = "/".join(["a" * 200] * 200)
    assert pl.matching(long_path) == [] and pl.matching(long_path + "b") == [0]


def test_bad_patterns_are_refused_at_their_line():
    with pytest.raises(InputError, match="longer than") as info:
        PatternList(["ok", "x" * (MAX_PATTERN + 1)], "access.yaml", [3, 7])
    assert (info.value.file, info.value.line) == ("access.yaml", 7)
