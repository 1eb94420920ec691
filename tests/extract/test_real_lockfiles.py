"""pnpm, yarn (v1 and Berry), Poetry and uv lock files of real projects (fixtures/sources,
origins in fixtures/sources/SOURCES.md): the direct/transitive split a reader of the file
and its manifest would make, resolved versions, the chain, file and line."""

import json
import re
import tomllib
from pathlib import Path

from test_lockfiles import SOURCES, run  # (one way to run an extractor on a fixture)

from kgbuild.extract.manifests.lockfiles import (
    PnpmLockExtractor,
    PoetryLockExtractor,
    UvLockExtractor,
    YarnLockExtractor,
    yarn_name,
)


def split(result):
    """The project's edges, and the package-to-package ones."""
    me = result.nodes[0].id
    return ([e for e in result.edges if e.subject == me],
            [e for e in result.edges if e.subject != me])


def npm(name: str) -> str:
    return "pkg:npm/" + name.replace("@", "%40")


def lines_of(path: Path) -> list[str]:
    return path.read_text().split("\n")


def test_pnpm_v6_lock_of_antfu_ni():
    folder = SOURCES / "pnpm-lock" / "antfu-ni"
    path = folder / "pnpm-lock.yaml"
    result = run(PnpmLockExtractor(), path)
    assert result.problems == []
    assert result.nodes[0].id == npm("@antfu/ni")
    mine, chain = split(result)
    text = lines_of(path)
    # every "  /name@version:" key of `packages:` is one installed package, one edge
    assert len(mine) == sum(1 for line in text if line.startswith("  /")) == 556
    manifest = json.loads((folder / "package.json").read_text())["devDependencies"]
    direct = [e for e in mine if "direct" in e.qualifiers]
    # kleur is locked at 3.0.3 (for prompts) and 4.1.5: direct at the one the project asks
    assert sorted(e.object for e in direct) == sorted(npm(n) for n in manifest)
    kleur = {e.qualifiers for e in mine if e.object == npm("kleur")}
    assert kleur == {("transitive", "dev", "resolved:3.0.3"), ("direct", "dev", "resolved:4.1.5")}
    execa = next(e for e in mine if e.object == npm("execa"))
    assert execa.qualifiers == ("direct", "dev", "resolved:8.0.1")
    assert text[execa.line - 1] == "  /execa@8.0.1:"
    versions = {n.id: n.attributes.get("resolvedVersion") for n in result.nodes[1:]}
    assert versions[npm("fast-glob")] == ["3.3.2"]
    # the chain: each edge at the line of the dependency in its package's entry
    assert chain and all(text[e.line - 1].strip().strip("'").startswith(e.object_label)
                         for e in chain)


def test_yarn_v1_lock_of_prop_types():
    folder = SOURCES / "yarn-lock" / "prop-types"
    path = folder / "yarn.lock"
    result = run(YarnLockExtractor(), path)
    assert result.problems == []
    assert result.nodes[0].id == npm("prop-types")
    mine, chain = split(result)
    text = lines_of(path)
    headers = [n for n, line in enumerate(text, 1) if line and not line[0].isspace()
               and not line.startswith("#")]
    # one edge per entry but prop-types' own (a dev tool installs a published copy of it)
    assert len(headers) == 545 and len(mine) == 544
    assert {e.line for e in mine} == set(headers) - {2979}
    assert text[2978] == "prop-types@^15.5.10:"
    manifest = json.loads((folder / "package.json").read_text())
    direct = {e.object: e.qualifiers for e in mine if "direct" in e.qualifiers}
    assert set(direct) == {npm(n) for n in (*manifest["dependencies"],
                                            *manifest["devDependencies"])}
    assert direct[npm("react-is")] == ("direct", "resolved:16.13.1")
    assert direct[npm("jest")] == ("direct", "dev", "resolved:19.0.2")
    loose = next(e for e in mine if e.object == npm("loose-envify"))
    assert text[loose.line - 1].startswith("loose-envify@^1.0.0, ") and loose.line == 2492
    # the published prop-types' needs are not the project's: no chain edge from it
    assert not [e for e in result.edges if e.line in (2984, 2985, 2986)]
    assert chain and all(text[e.line - 1].strip().split(" ")[0].strip('"') == e.object_label
                         for e in chain)


def test_yarn_berry_lock_of_redux_thunk():
    folder = SOURCES / "yarn-berry" / "redux-thunk"
    path = folder / "yarn.lock"
    result = run(YarnLockExtractor(), path)
    assert result.problems == []  # patch: entries name their package (were bad names)
    mine, chain = split(result)
    text = lines_of(path)
    entries = [line for line in text if line.startswith('"') and line.endswith(":")]
    patches = [line for line in entries if "@patch:" in line]
    workspace = [line for line in entries if "@workspace:" in line]
    assert (len(entries), len(patches), len(workspace)) == (432, 2, 1)
    # the project's own workspace entry is the project; a patched copy is not a second package
    assert len(mine) == 432 - 2 - 1
    typescript = [e for e in mine if e.object == npm("typescript")]
    assert [(e.line, e.qualifiers) for e in typescript] == [
        (3858, ("direct", "dev", "resolved:5.8.2"))]
    manifest = json.loads((folder / "package.json").read_text())
    direct = {e.object for e in mine if "direct" in e.qualifiers}
    assert direct == {npm(n) for n in (*manifest["devDependencies"],
                                       *manifest["peerDependencies"])}
    redux = next(e for e in mine if e.object == npm("redux"))
    assert text[redux.line - 1] == '"redux@npm:^5":' and "resolved:5.0.1" in redux.qualifiers
    assert chain and all(text[e.line - 1].strip().startswith((e.object_label,
                                                              f'"{e.object_label}'))
                         for e in chain)


def test_yarn_names_of_berry_descriptors():
    assert yarn_name("fsevents@patch:fsevents@npm%3A~2.3.2#optional!builtin<compat/fsevents>") \
        == "fsevents"
    assert yarn_name('"@babel/core@npm:7.26.0"') == "@babel/core"
    assert yarn_name("string-width-cjs@npm:string-width@^4.2.0") == "string-width"


def test_poetry_lock_of_cleo():
    folder = SOURCES / "poetry-lock" / "cleo"
    path = folder / "poetry.lock"
    result = run(PoetryLockExtractor(), path)
    assert result.problems == []
    assert result.nodes[0].id == "pkg:pypi/cleo"
    mine, chain = split(result)
    text = lines_of(path)
    assert len(mine) == sum(1 for line in text if line == "[[package]]") == 53
    pyproject = tomllib.loads((folder / "pyproject.toml").read_text())["tool"]["poetry"]["group"]
    named = {n.lower() for g in pyproject.values() for n in g["dependencies"]}
    direct = {e.object_label: e.qualifiers for e in mine if "direct" in e.qualifiers}
    assert set(direct) == named
    assert direct["pytest"] == ("direct", "group:dev", "dev", "resolved:8.4.2")
    assert direct["sphinx"] == ("direct", "group:doc", "dev", "resolved:7.4.7")
    pluggy = next(e for e in mine if e.object == "pkg:pypi/pluggy")
    assert pluggy.qualifiers == ("transitive", "dev", "resolved:1.6.0")
    assert text[pluggy.line - 1] == 'name = "pluggy"'
    # pytest's needs, each at its own line of [package.dependencies]
    needs = {e.object_label: e.line for e in chain if e.subject == "pkg:pypi/pytest"}
    assert set(needs) == {"colorama", "exceptiongroup", "iniconfig", "packaging", "pluggy",
                          "pygments", "tomli"}
    assert all(text[line - 1].startswith(f"{name} = ") for name, line in needs.items())


def test_uv_lock_of_annotated_doc():
    folder = SOURCES / "uv-lock" / "annotated-doc"
    path = folder / "uv.lock"
    result = run(UvLockExtractor(), path)
    assert result.problems == []
    assert result.nodes[0].id == "pkg:pypi/annotated-doc"
    mine, chain = split(result)
    text = lines_of(path)
    # every [[package]] but the project's own (source = { editable = "." })
    assert len(mine) == sum(1 for line in text if line == "[[package]]") - 1 == 36
    groups = tomllib.loads((folder / "pyproject.toml").read_text())["dependency-groups"]
    named = {re.split(r"[<>=!~ \[;]", n, maxsplit=1)[0].lower() for g in groups.values()
             for n in g if isinstance(n, str)}
    assert {e.object_label for e in mine if "direct" in e.qualifiers} == named
    # two Python-version forks: pytest is locked twice, both direct
    pytest_edges = sorted(e.qualifiers for e in mine if e.object == "pkg:pypi/pytest")
    assert pytest_edges == [("direct", "group:tests", "resolved:8.4.2"),
                            ("direct", "group:tests", "resolved:9.0.3")]
    node = next(n for n in result.nodes if n.id == "pkg:pypi/iniconfig")
    assert node.attributes["resolvedVersion"] == ["2.1.0"]  # one node per record: its version
    assert {e.qualifiers for e in mine if e.object == "pkg:pypi/iniconfig"} == {
        ("transitive", "resolved:2.1.0"), ("transitive", "resolved:2.3.0")}
    assert chain and all(text[e.line - 1].strip().startswith(f'{{ name = "{e.object_label}"')
                         for e in chain)
