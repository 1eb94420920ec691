"""CODEOWNERS: GitHub's pattern semantics, owner refs, and fallback ownership only."""


import pytest
import yaml
from conftest import REPO

from kgbuild.extract.manifests.codeowners import (
    codeowners_edges,
    find_codeowners,
    governing_codeowners,
    parse_codeowners,
    read_codeowners,
    repo_root_of,
)

CATALOGS = REPO.parent / "shared" / "corpora" / "catalogs"
FILES = sorted((CATALOGS / "codeowners").glob("*/.github/CODEOWNERS"))
UPSTREAM = CATALOGS / "codeowners" / "backstage-upstream-2020-11" / ".github" / "CODEOWNERS"
EXAMPLES = CATALOGS / "backstage" / "backstage-upstream-2020-11"


@pytest.mark.parametrize("pattern, path, matches", [
    ("*", "a.txt", True), ("*", "a/b/c.txt", True),
    ("*.js", "app.js", True), ("*.js", "src/app.js", True), ("*.js", "app.jsx", False),
    ("/build/logs/", "build/logs/x.log", True), ("/build/logs/", "build/logs/a/b.log", True),
    ("/build/logs/", "src/build/logs/x.log", False), ("/build/logs/", "build/logs", False),
    ("docs/*", "docs/getting-started.md", True), ("docs/*", "docs/build-app/troubleshooting.md", False),
    ("docs/*", "x/docs/a.md", False),
    ("apps/", "apps/a.js", True), ("apps/", "x/y/apps/a.js", True), ("apps/", "apps", False),
    ("apps/", "myapps/a.js", False),
    ("/docs/", "docs/a/b.md", True), ("/docs/", "src/docs/a.md", False),
    ("**/logs", "logs/a", True), ("**/logs", "a/b/logs/c", True), ("**/logs", "a/blogs/c", False),
    ("/apps/github", "apps/github/x.rb", True), ("/apps/github", "apps/github", True),
    ("/apps/github", "apps/githubber/x.rb", False), ("/apps/github", "x/apps/github/y", False),
    ("/plugins/search", "plugins/search/catalog-info.yaml", True),
    ("/plugins/search", "plugins/search-backend/package.json", False),
    ("/.changeset/cost-insights-*", ".changeset/cost-insights-foo.md", True),
    ("/.changeset/cost-insights-*", ".changeset/other.md", False),
    ("foo/**/bar", "foo/bar", True), ("foo/**/bar", "foo/a/b/bar", True),
    ("foo/**/bar", "foo/a/b/baz", False), ("foo/**", "foo/a/b", True), ("foo/**", "foo", False),
    ("a?c", "abc", True), ("a?c", "a/c", False), ("a**b", "axxb", True), ("a**b", "a/b", False),
    ("README.md", "README.md", True), ("README.md", "docs/README.md", True),
    ("README.md", "readme.md", False),
    ("src/*.py", "src/a.py", True), ("src/*.py", "src/x/a.py", False),
    ("path\\ with\\ spaces/", "path with spaces/x", True), ("a.b", "axb", False),
    # gitignore: '**/*' spans every depth, so GitHub's 'dir/*' exception does not narrow it
    ("docs/**/*", "docs/a/b/c.md", True), ("/docs/*", "docs/a.md", True),
    ("/docs/*", "docs/a/b.md", False), ("/*", "a/b.md", True),
    ("*.md", "./docs/a.md", True), ("/docs/", "/docs/a.md", True),
])
def test_github_pattern_semantics(pattern, path, matches):
    [rule] = parse_codeowners(f"{pattern} @owner\n", "CODEOWNERS").rules
    assert rule.matches(path) is matches
    assert (parse_codeowners(f"{pattern} @owner\n", "C").rule_for(path) is not None) is matches


def test_hostile_pattern_against_a_long_folder_name_is_decided():
    # backtracking regex engines take exponential time here; RE2 is linear in the path
    hostile = "*a*a*a*a*a*a*a*a*a*a*b"
    co = parse_codeowners(f"* @acme/all\n{hostile} @acme/evil\n", "CODEOWNERS")
    folder = "a" * 46
    assert co.rule_for(f"{folder}/package.json").line == 1  # no 'b': the hostile rule fails
    assert co.rule_for(f"{folder}/{folder}").line == 1
    assert co.rule_for(f"{folder}b/package.json").line == 2  # and it still matches where it should
    assert [o.ref for o in co.rule_for(f"{folder}b").owners] == ["group:default/evil"]


def test_patterns_that_cannot_compile_are_reported_and_skipped():
    co = parse_codeowners("* @a\n" + "x" * 5000 + " @b\n/docs/ @c\n", "CODEOWNERS")
    assert [r.line for r in co.rules] == [1, 3]
    assert [(p.line, p.severity, p.code) for p in co.problems] == [(2, "warning", "codeowners")]
    assert "longer than" in co.problems[0].message


def test_last_match_wins_and_empty_owners_unown():
    co = parse_codeowners("*  @acme/all\n/apps/ @octocat  # inline comment @ignored\n"
                          "/apps/github\n", "CODEOWNERS")
    assert [r.line for r in co.rules] == [1, 2, 3]
    assert [o.ref for o in co.rule_for("apps/main.go").owners] == ["user:default/octocat"]
    assert co.rule_for("apps/github/x.rb").owners == ()
    assert [o.ref for o in co.rule_for("README.md").owners] == ["group:default/all"]
    assert parse_codeowners("/only/ @x\n", "C").rule_for("other/file") is None


def test_owner_refs():
    [rule] = parse_codeowners("* @Acme/Web-Team @OctoCat jane.doe@example.com bob @ @a/b/c\n",
                              "CODEOWNERS").rules
    assert [(o.ref, o.type, o.written, o.confidence) for o in rule.owners] == [
        ("group:default/web-team", "Group", "@Acme/Web-Team", 1.0),
        ("user:default/octocat", "User", "@OctoCat", 1.0),
        ("user:default/jane.doe", "User", "jane.doe@example.com", 1.0),
        ("user:default/bob", "User", "bob", 0.8)]


def test_unsupported_syntax_is_reported_with_its_line():
    co = parse_codeowners("* @a\n!/docs/ @b\n/src/[ab]/ @c\n/api/ @d not/an-owner\n", "CODEOWNERS")
    assert [r.pattern for r in co.rules] == ["*", "/api/"]
    assert [(p.line, p.file, p.severity) for p in co.problems] == [
        (2, "CODEOWNERS", "warning"), (3, "CODEOWNERS", "warning"), (4, "CODEOWNERS", "warning")]


@pytest.mark.corpus
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parents[1].name)
def test_corpus_files_parse(path):
    lines = path.read_text().splitlines()
    rule_lines = [n for n, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    co = read_codeowners(path, 1 << 20, "CODEOWNERS")
    assert [r.line for r in co.rules] == rule_lines
    assert all(r.text == lines[r.line - 1].strip() for r in co.rules)
    assert all(r.owners for r in co.rules)


@pytest.mark.corpus
def test_corpus_owner_ids():
    owners = {p.parents[1].name: [(o.ref, o.confidence) for o in
                                  read_codeowners(p, 1 << 20).rules[0].owners] for p in FILES}
    assert owners == {
        "backstage-demo": [("group:default/operations-maintainers", 1.0),
                           ("user:default/mihaitabara", 1.0)],
        "backstage-upstream-2020-11": [("group:default/maintainers", 1.0)],
        "docker-awesome-compose": [("user:default/aiordache", 0.8), ("user:default/glours", 0.8)],
        "janus-idp-backstage-showcase": [("group:default/maintainers-showcase", 1.0)],
    }
    compose = read_codeowners(CATALOGS / "codeowners/docker-awesome-compose/.github/CODEOWNERS",
                              1 << 20, "CODEOWNERS")
    assert [(p.line, p.code) for p in compose.problems] == [(1, "codeowners"), (1, "codeowners")]


def example_components() -> list[tuple[str, str, bool]]:
    """(component ID, manifest path in the repository, has an explicit owner) for every
    Component in Backstage's 2020-11 example catalog, read with plain PyYAML."""
    out = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "Component":
                out.append((f"component:default/{doc['metadata']['name']}",
                            path.relative_to(EXAMPLES).as_posix(), bool(doc["spec"].get("owner"))))
    return out


@pytest.mark.corpus
def test_codeowners_only_where_no_explicit_owner():
    components = example_components()
    assert len(components) > 5 and all(owned for _, _, owned in components)
    co = read_codeowners(UPSTREAM, 1 << 20, "CODEOWNERS")
    pairs = [(c, p) for c, p, _ in components]
    assert codeowners_edges(co, pairs, {c for c, _, owned in components if owned}) == []
    edges = codeowners_edges(co, pairs, set())
    assert [(e.subject, e.object, e.line) for e in edges] == [
        (c, "group:default/maintainers", 7) for c, _ in pairs]
    assert all(e.predicate == "ownedBy" and e.object_type == "Group" for e in edges)
    assert edges[0].evidence == "*                                           @backstage/maintainers"


@pytest.mark.corpus
def test_codeowners_edges_follow_the_deciding_rule():
    co = read_codeowners(UPSTREAM, 1 << 20, "CODEOWNERS")
    components = [("component:default/search", "plugins/search/catalog-info.yaml"),
                  ("component:default/cost", "plugins/cost-insights/package.json"),
                  ("component:default/cloudbuild", "plugins/cloudbuild/catalog-info.yaml"),
                  ("component:default/techdocs", "docs/features/techdocs/catalog-info.yaml"),
                  ("component:default/backend", "packages/backend/package.json"),
                  ("component:default/owned", "plugins/search/other.yaml")]
    edges = codeowners_edges(co, components, {"component:default/owned"})
    assert [(e.subject.split("/")[1], e.object, e.line) for e in edges] == [
        ("search", "group:default/techdocs-core", 12),
        ("cost", "group:default/silver-lining", 9),
        ("cloudbuild", "group:default/ebarrios", 10),
        ("techdocs", "group:default/techdocs-core", 8),
        ("backend", "group:default/maintainers", 7)]


def test_locations(tmp_path):
    assert find_codeowners(tmp_path) is None
    for rel in ("docs/CODEOWNERS", "CODEOWNERS", ".github/CODEOWNERS"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("* @x\n")
        assert find_codeowners(tmp_path) == tmp_path / rel  # the later one has precedence
    assert all(repo_root_of(tmp_path / rel) == tmp_path
               for rel in ("docs/CODEOWNERS", "CODEOWNERS", ".github/CODEOWNERS"))


def test_governing_codeowners_is_the_nearest_one(tmp_path):
    outer, inner = tmp_path / "mono", tmp_path / "mono" / "vendor" / "lib"
    for folder, rel in ((outer, ".github/CODEOWNERS"), (inner, "docs/CODEOWNERS")):
        (folder / rel).parent.mkdir(parents=True)
        (folder / rel).write_text("* @x\n")
    (inner / "docs" / "guide").mkdir()
    assert governing_codeowners(inner / "docs" / "guide" / "package.json", tmp_path) == \
        inner / "docs/CODEOWNERS"
    assert governing_codeowners(outer / "svc" / "go.mod", tmp_path) == outer / ".github/CODEOWNERS"
    assert governing_codeowners(tmp_path / "other" / "go.mod", tmp_path) is None
    assert governing_codeowners(outer / "svc" / "go.mod", outer / "svc") is None


def test_unreadable_file(tmp_path):
    path = tmp_path / "CODEOWNERS"
    path.write_bytes(b"* @x\n\x00\x01")
    co = read_codeowners(path, 1 << 20, "repo/CODEOWNERS")
    assert co.rules == [] and [(p.severity, p.file, p.line) for p in co.problems] == [
        ("error", "repo/CODEOWNERS", 2)]
