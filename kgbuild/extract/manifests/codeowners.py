"""GitHub CODEOWNERS: rules with their lines, GitHub's matcher, and fallback ownership.

GitHub reads the first of ``.github/CODEOWNERS``, ``CODEOWNERS``, ``docs/CODEOWNERS``
(:func:`find_codeowners`). Patterns are gitignore patterns (:mod:`kgbuild.io.globs`, matched
in time linear in the path however hostile the pattern) with GitHub's exceptions: no ``!``
negation and no ``[...]`` ranges (such rules, and patterns that do not compile, are
reported and skipped), ``dir/*`` matches direct children only; the last matching rule
wins, and a rule without owners un-owns.

Which manifests CODEOWNERS may own is declared by each extractor (``ownable``): the
components such a manifest defines get the owners of the rule deciding its path, unless the
manifest names an owner itself (:func:`add_fallback_owners`).

Owner IDs are Backstage refs, lowercased as Backstage stores them, and resolved as
Backstage's CODEOWNERS processor does: ``@org/team`` -> ``group:default/team``,
``@user`` -> ``user:default/user``, ``jane.doe@example.com`` -> ``user:default/jane.doe``;
a bare ``name`` (GitHub rejects it) is read as ``user:default/name`` with a warning and
confidence 0.8.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from ...errors import InputError, Problem
from ...io.globs import Pattern, PatternList
from ...io.text import MAX_EVIDENCE_CHARS, brief, clip, read_text, split_lines
from ..records import Context, EdgeRecord, Extraction, Extractor, SourceFile
from ..registry import register

LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
MAX_OWNER_CHARS = 320  # an email address is at most 254 characters, a team name far less
_TOKEN = re.compile(r"(?:\\.|[^\s\\])+")
_TEAM = re.compile(r"^@([A-Za-z0-9][\w.-]*)/([\w.-]+)$")
_USER = re.compile(r"^@?([A-Za-z0-9][\w.-]*)$")
_EMAIL = re.compile(r"^([^@\s]+)@[^@\s]+\.[^@\s]+$")


@dataclass(frozen=True)
class Owner:
    ref: str  # Backstage ref, e.g. group:default/maintainers
    type: str  # Group or User
    written: str
    confidence: float = 1.0


def _relative(path: str) -> str:
    return path.lstrip("/").removeprefix("./")


@dataclass(frozen=True)
class Rule:
    pattern: str
    owners: tuple[Owner, ...]
    line: int
    text: str
    glob: Pattern = field(repr=False, compare=False)

    def matches(self, path: str) -> bool:
        """Whether this rule covers ``path`` (a file path relative to the repository root)."""
        return self.glob.matches(_relative(path))

    def evidence(self, owner: Owner) -> str:
        """The quote that states ``owner``'s ownership: the rule's line when it names that
        owner alone, else the pattern and that owner (never other owners, never a long line)."""
        if len(self.owners) == 1 and len(self.text) <= MAX_EVIDENCE_CHARS:
            return self.text
        return clip(f"{clip(self.pattern, 200)} {owner.written}")


@dataclass
class CodeOwners:
    file: str
    rules: list[Rule] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    _list: PatternList | None = field(default=None, repr=False, compare=False)

    def rule_for(self, path: str) -> Rule | None:
        """The rule deciding ``path``'s owners: the last one that matches."""
        if self._list is None or len(self._list) != len(self.rules):
            self._list = PatternList([r.glob for r in self.rules])
        i = self._list.last(_relative(path))
        return None if i is None else self.rules[i]


def find_codeowners(repo_root: Path) -> Path | None:
    """The CODEOWNERS file GitHub uses for ``repo_root``, if any."""
    return next((repo_root / p for p in LOCATIONS if (repo_root / p).is_file()), None)


def governing_codeowners(file: Path, stop: Path) -> Path | None:
    """The CODEOWNERS of the nearest directory above ``file`` (up to ``stop``) that has one:
    scanned folders do not say where repositories start. A CODEOWNERS that is a symlink
    leading outside ``stop`` is not read."""
    inside = stop.resolve()
    for folder in file.parents:
        if folder != stop and stop not in folder.parents:
            return None
        found = find_codeowners(folder)
        if found and not found.resolve().is_relative_to(inside):
            found = None
        if found and not (found.parent == folder and folder.name in (".github", "docs")):
            return found  # (a CODEOWNERS directly in .github/ or docs/ is its parent's)
        if folder == stop:
            return None
    return None


def repo_root_of(codeowners_path: Path) -> Path:
    """The repository root a CODEOWNERS file at one of :data:`LOCATIONS` applies to."""
    parent = codeowners_path.parent
    return parent.parent if parent.name in (".github", "docs") else parent


def read_codeowners(path: Path, max_bytes: int, name: str | None = None) -> CodeOwners:
    """Read and parse a CODEOWNERS file; an unreadable file yields one error and no rules.

    Every manifest below a CODEOWNERS reads it; the parse (and the compiled patterns) of
    one content is kept for the next manifest, the file is read again each time."""
    name = name or str(path)
    try:
        parsed = _parse_cached(read_text(path, max_bytes, name), name)
    except InputError as exc:
        return CodeOwners(name, problems=[Problem("error", "unreadable", exc.message, name, exc.line)])
    return CodeOwners(parsed.file, list(parsed.rules), list(parsed.problems))


@lru_cache(maxsize=32)
def _parse_cached(text: str, file: str) -> CodeOwners:
    return parse_codeowners(text, file)


def parse_codeowners(text: str, file: str) -> CodeOwners:
    """Rules in file order; bad patterns and owners are reported with their line."""
    out = CodeOwners(file)
    for n, raw in enumerate(split_lines(text), 1):
        tokens = _TOKEN.findall(raw)
        if not tokens or tokens[0].startswith("#"):
            continue
        comment = next((i for i, t in enumerate(tokens) if t.startswith("#")), len(tokens))
        pattern, written = tokens[0], tokens[1:comment]

        def warn(msg: str) -> None:
            out.problems.append(Problem("warning", "codeowners", msg, file, n))

        if pattern.startswith("!") or re.search(r"(?<!\\)\[", pattern):
            warn(f"pattern {brief(pattern)}: GitHub supports neither '!' nor '[...]'; rule skipped")
            continue
        try:
            glob = Pattern(pattern, file, n, codeowners=True)
        except InputError as exc:
            warn(f"pattern {brief(pattern[:80])}: {exc.message}; rule skipped")
            continue
        owners = []
        for w in written:
            owner = _owner(w)
            if owner is None:
                warn(f"{brief(w)} is not a user, team or email; ignored")
                continue
            if owner.confidence < 1:
                warn(f"owner {brief(w)} lacks '@' (GitHub ignores it); read as {owner.ref}")
            owners.append(owner)
        out.rules.append(Rule(pattern, tuple(owners), n, raw.strip(), glob))
    return out


def _owner(written: str) -> Owner | None:
    if len(written) > MAX_OWNER_CHARS:  # no login, team or address is this long
        return None
    if m := _TEAM.match(written):
        return Owner(f"group:default/{m.group(2).lower()}", "Group", written)
    if m := _EMAIL.match(written):
        return Owner(f"user:default/{m.group(1).lower()}", "User", written)
    if m := _USER.match(written):
        return Owner(f"user:default/{m.group(1).lower()}", "User", written,
                     1.0 if written.startswith("@") else 0.8)
    return None


def codeowners_edges(codeowners: CodeOwners, components: Iterable[tuple[str, str]],
                     explicitly_owned: set[str]) -> list[EdgeRecord]:
    """``ownedBy`` edges for components without an explicit owner, at the deciding rule.

    ``components`` are ``(component ID, manifest path relative to the repository root)``.
    """
    edges = []
    for component, manifest in components:
        if component in explicitly_owned:
            continue
        rule = codeowners.rule_for(manifest)
        for owner in rule.owners if rule else ():
            edges.append(EdgeRecord(component, "ownedBy", owner.ref, line=rule.line,
                                    evidence=rule.evidence(owner), confidence=owner.confidence,
                                    object_type=owner.type, object_label=owner.written))
    return edges


def candidate_paths(file: Path, stop: Path) -> list[Path]:
    """Every place a CODEOWNERS governing ``file`` could appear, up to ``stop``."""
    out = []
    for folder in file.parents:
        if folder != stop and stop not in folder.parents:
            break
        out.extend(folder / loc for loc in LOCATIONS)
        if folder == stop:
            break
    return out


def add_fallback_owners(src: SourceFile, extraction: Extraction, ex: Extractor,
                        ctx: Context) -> None:
    """Give the components a manifest defines the owners CODEOWNERS names for its path,
    unless the manifest names an owner itself; only for extractors that declare
    ``ownable``. The edges cite the
    CODEOWNERS line; every place a CODEOWNERS could appear becomes a dependency of the
    manifest's document."""
    if not ex.ownable or not extraction.nodes:
        return
    extraction.depends.extend(candidate_paths(src.path, src.root))
    co_path = governing_codeowners(src.path, src.root)
    if co_path is None:
        return
    doc_id = src.doc_id_of(co_path)
    rules = read_codeowners(co_path, ctx.max_file_bytes, doc_id)
    owned = {e.subject if e.predicate == "ownedBy" else e.object
             for e in extraction.edges if e.predicate in ("ownedBy", "ownerOf")}
    manifest = src.path.relative_to(repo_root_of(co_path)).as_posix()
    components = sorted({(n.id, manifest) for n in extraction.nodes})
    for edge in codeowners_edges(rules, components, owned):
        if extraction.full(src.doc_id, edge.line):
            break
        edge.source = doc_id
        extraction.edges.append(edge)


class CodeownersExtractor:
    """Makes each CODEOWNERS file a source document and reports its bad lines; the
    ownership it implies is added to manifests by :func:`add_fallback_owners`."""

    name = "codeowners"
    version = 2  # 2: lines counted at \n only
    emits: frozenset[str] = frozenset()  # problems only; the ownedBy edges belong to the manifests
    ownable = False

    def claims(self, path: Path, head: bytes) -> bool:
        return path.name == "CODEOWNERS"

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        return Extraction(problems=read_codeowners(src.path, ctx.max_file_bytes, src.doc_id).problems,
                          exhaustive=False)


register(CodeownersExtractor())
