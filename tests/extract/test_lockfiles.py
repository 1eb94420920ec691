"""Lock files and Cargo: resolved versions, direct versus transitive, the chain between
packages; real files from public projects (fixtures/sources/SOURCES.md) and hostile ones."""

import json
from pathlib import Path

import pytest
from conftest import REPO

from kgbuild.extract.manifests.cargo import CargoLockExtractor, CargoTomlExtractor
from kgbuild.extract.manifests.lockfiles import (
    NpmLockExtractor,
    PnpmLockExtractor,
    PoetryLockExtractor,
    UvLockExtractor,
    YarnLockExtractor,
    pnpm_key,
    yarn_name,
)
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

SOURCES = REPO / "fixtures" / "sources"
SCHEMA = load_schema()


def run(ex, path: Path, root: Path = SOURCES):
    assert ex.claims(path, path.read_bytes()[:65536]), path
    return ex.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(SCHEMA, [root]))


def project_edges(result) -> dict[str, tuple[str, ...]]:
    me = result.nodes[0].id
    return {e.object: e.qualifiers for e in result.edges if e.subject == me}


def test_npm_lock_v3_of_a_real_service():
    folder = SOURCES / "npm-lock" / "currencyservice"
    result = run(NpmLockExtractor(), folder / "package-lock.json")
    assert result.problems == []
    assert result.nodes[0].id == "pkg:npm/grpc-currency-service"  # as package.json names it
    edges = project_edges(result)
    manifest = json.loads((folder / "package.json").read_text())["dependencies"]
    me = result.nodes[0].id
    direct = {e.object for e in result.edges if e.subject == me and "direct" in e.qualifiers}
    assert direct == {"pkg:npm/" + n.replace("@", "%40") for n in manifest}
    lock = json.loads((folder / "package-lock.json").read_text())["packages"]
    installed = {k.rsplit("node_modules/", 1)[1] for k in lock if k}
    assert len(edges) == len({"pkg:npm/" + n.replace("@", "%40") for n in installed})
    # a package installed twice (hoisted and nested): two edges, two resolved versions
    assert len([e for e in result.edges if e.subject == me]) == len([k for k in lock if k]) == 300
    assert edges["pkg:npm/%40grpc/grpc-js"] == ("direct", "resolved:1.14.4")
    assert all(q[0] in ("direct", "transitive") and q[-1].startswith("resolved:")
               for q in edges.values())
    versions = {n.id: n.attributes["resolvedVersion"] for n in result.nodes[1:]}
    assert versions["pkg:npm/%40grpc/grpc-js"] == ["1.14.4"]
    lines = (folder / "package-lock.json").read_text().split("\n")
    chain = [e for e in result.edges if e.subject != result.nodes[0].id]
    assert chain and all(e.pointer.split("/")[-1].replace("~1", "/") in lines[e.line - 1]
                         for e in chain)


def test_cargo_toml_and_lock_of_ripgrep():
    folder = SOURCES / "cargo" / "ripgrep"
    toml = run(CargoTomlExtractor(), folder / "Cargo.toml")
    assert toml.problems == [] and toml.nodes[0].id == "pkg:cargo/ripgrep"
    deps = {e.object: (e.line, e.qualifiers) for e in toml.edges if e.predicate == "dependsOn"}
    assert deps["pkg:cargo/grep-index"][1] == ("optional",)
    assert deps["pkg:cargo/tikv-jemallocator"][1][0].startswith("target:cfg(all(")
    assert ("dev",) in {q for _, q in deps.values()}
    member = [e for e in toml.edges if e.predicate == "partOf"]
    assert [(e.subject, e.object) for e in member] == [("pkg:cargo/globset", "pkg:cargo/ripgrep")]
    globset = run(CargoTomlExtractor(), folder / "crates" / "globset" / "Cargo.toml")
    assert {e.object: e.line for e in globset.edges}["pkg:cargo/regex-syntax"] == 30
    lock = run(CargoLockExtractor(), folder / "Cargo.lock")
    assert lock.problems == [] and lock.nodes[0].id == "pkg:cargo/ripgrep"
    edges = project_edges(lock)
    assert "direct" in edges["pkg:cargo/anyhow"] and "transitive" in edges["pkg:cargo/cfg-if"]
    own = {n.id for n in lock.nodes if n.type == "Component"}
    assert {"pkg:cargo/ripgrep", "pkg:cargo/globset", "pkg:cargo/grep-cli"} <= own
    # the workspace's crates are not third-party packages: no Library, no resolved version
    assert not own & {n.id for n in lock.nodes if n.type == "Library"}
    assert edges["pkg:cargo/grep"] == ("direct",)
    # each dependency edge sits on its own item's line, not on `dependencies = [`
    lines = (folder / "Cargo.lock").read_text().split("\n")
    deps = [e for e in lock.edges if e.predicate == "dependsOn"]
    assert deps and all(f'"{e.object_label}' in lines[e.line - 1] for e in deps)


def write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_pnpm_lock_v9_and_v6(tmp_path):
    write(tmp_path, {"package.json": '{"name": "app", "dependencies": {"express": "^4"}}',
                     "pnpm-lock.yaml": (
                         "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n"
                         "      express:\n        specifier: ^4\n        version: 4.21.2\n"
                         "packages:\n  express@4.21.2:\n    resolution: {integrity: x}\n"
                         "  ms@2.0.0:\n    resolution: {integrity: y}\n"
                         "snapshots:\n  express@4.21.2:\n    dependencies:\n      ms: 2.0.0\n"
                         "  ms@2.0.0: {}\n")})
    result = run(PnpmLockExtractor(), tmp_path / "pnpm-lock.yaml", tmp_path)
    assert project_edges(result) == {"pkg:npm/express": ("direct", "resolved:4.21.2"),
                                     "pkg:npm/ms": ("transitive", "resolved:2.0.0")}
    assert [(e.subject, e.object, e.line) for e in result.edges if e.subject_type == "Library"] \
        == [("pkg:npm/express", "pkg:npm/ms", 16)]
    assert pnpm_key("/@babel/core@7.1.0(supports-color@5)") == ("@babel/core", "7.1.0")
    assert pnpm_key("/@babel/core/7.1.0_supports-color@5") == ("@babel/core", "7.1.0")


def test_yarn_lock_v1_and_berry(tmp_path):
    write(tmp_path, {"package.json": '{"name": "app", "devDependencies": {"@babel/core": "^7"}}',
                     "yarn.lock": (
                         "# yarn lockfile v1\n\n\n\"@babel/core@^7\", \"@babel/core@^7.1.0\":\n"
                         "  version \"7.26.0\"\n  resolved \"https://x\"\n  dependencies:\n"
                         "    debug \"^4.1.0\"\n\ndebug@^4.1.0:\n  version \"4.4.0\"\n")})
    result = run(YarnLockExtractor(), tmp_path / "yarn.lock", tmp_path)
    assert project_edges(result) == {"pkg:npm/%40babel/core": ("direct", "dev", "resolved:7.26.0"),
                                     "pkg:npm/debug": ("transitive", "resolved:4.4.0")}
    [chain] = [e for e in result.edges if e.subject_type == "Library"]
    assert (chain.object, chain.line, chain.evidence) == ("pkg:npm/debug", 8, 'debug "^4.1.0"')
    assert yarn_name('"alias@npm:real-pkg@^1"') == "real-pkg"
    berry = tmp_path / "b"
    berry.mkdir()
    write(berry, {"yarn.lock": ('__metadata:\n  version: 8\n\n"lodash@npm:^4.17.21":\n'
                                '  version: 4.17.21\n\n"app@workspace:.":\n  version: 0.0.0\n')})
    assert project_edges(run(YarnLockExtractor(), berry / "yarn.lock", tmp_path)) == {
        "pkg:npm/lodash": ("transitive", "resolved:4.17.21")}


def test_poetry_and_uv_locks_take_direct_dependencies_from_pyproject(tmp_path):
    write(tmp_path, {"pyproject.toml": ('[project]\nname = "svc"\ndependencies = ["Requests>=2"]\n'
                                        '[dependency-groups]\ndev = ["pytest"]\n'),
                     "poetry.lock": ('[[package]]\nname = "requests"\nversion = "2.32.3"\n'
                                     'optional = false\n\n[package.dependencies]\n'
                                     'urllib3 = ">=1.21.1,<3"\n\n[[package]]\nname = "urllib3"\n'
                                     'version = "2.2.3"\n\n[[package]]\nname = "pytest"\n'
                                     'version = "8.3.4"\ngroups = ["dev"]\n\n[metadata]\n'
                                     'lock-version = "2.1"\n')})
    poetry = run(PoetryLockExtractor(), tmp_path / "poetry.lock", tmp_path)
    assert poetry.nodes[0].id == "pkg:pypi/svc"
    assert project_edges(poetry) == {
        "pkg:pypi/requests": ("direct", "resolved:2.32.3"),
        "pkg:pypi/urllib3": ("transitive", "resolved:2.2.3"),
        "pkg:pypi/pytest": ("direct", "group:dev", "dev", "resolved:8.3.4")}
    assert [(e.object, e.line) for e in poetry.edges if e.subject_type == "Library"] == [
        ("pkg:pypi/urllib3", 7)]  # the dependency's own line, not its table's header
    (tmp_path / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "svc"\nversion = "0.1.0"\n'
        'source = { editable = "." }\ndependencies = [\n    { name = "requests" },\n]\n\n'
        '[package.dev-dependencies]\ndev = [\n    { name = "pytest" },\n]\n\n'
        '[[package]]\nname = "requests"\nversion = "2.32.3"\nsource = { registry = "x" }\n'
        'dependencies = [\n    { name = "urllib3" },\n]\n\n[[package]]\nname = "urllib3"\n'
        'version = "2.2.3"\nsource = { registry = "x" }\n')
    uv = run(UvLockExtractor(), tmp_path / "uv.lock", tmp_path)
    assert project_edges(uv) == {"pkg:pypi/requests": ("direct", "resolved:2.32.3"),
                                 "pkg:pypi/urllib3": ("transitive", "resolved:2.2.3")}
    assert [n.line for n in uv.nodes[1:]] == [17, 25]  # their name = lines


@pytest.mark.parametrize("name, text, code", [
    ("package-lock.json", '{"packages": {"node_modules/a": 5, "node_modules/B B": {}}}', "bad-lockfile"),
    ("package-lock.json", '{"packages": {' * 100_000, "bad-input"),
    ("package-lock.json", "[1, 2]", "bad-lockfile"),
    ("pnpm-lock.yaml", "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi")), "bad-input"),
    ("yarn.lock", "not a header\n  version \"1\"\n", "bad-lockfile"),
    ("poetry.lock", '[[package]]\nname = "a"\nversion = \n', "bad-input"),
    ("uv.lock", "[[package]]\nversion = 1\n", "bad-lockfile"),
    ("Cargo.lock", "x = " + "[" * 5000, "bad-input"),
    ("Cargo.toml", '[package]\nname = "c"\n[dependencies]\nd = 5\n"e f" = "1"\n', "bad-dependency"),
])
def test_hostile_lock_files_are_reported_with_a_line(tmp_path, name, text, code):
    path = tmp_path / name
    path.write_text(text)
    ex = {"package-lock.json": NpmLockExtractor(), "pnpm-lock.yaml": PnpmLockExtractor(),
          "yarn.lock": YarnLockExtractor(), "poetry.lock": PoetryLockExtractor(),
          "uv.lock": UvLockExtractor(), "Cargo.lock": CargoLockExtractor(),
          "Cargo.toml": CargoTomlExtractor()}[name]
    result = run(ex, path, tmp_path)
    assert code in {p.code for p in result.problems}, result.problems
    assert all(p.line is not None for p in result.problems if p.code == code)


def test_binary_lock_file(tmp_path):
    path = tmp_path / "Cargo.lock"
    path.write_bytes(b"[[package]]\nname = \"a\"\n\x00\x00")
    assert [(p.code, p.line) for p in run(CargoLockExtractor(), path, tmp_path).problems] == [
        ("bad-input", 3)]


@pytest.mark.slow
def test_a_huge_lock_is_bounded(tmp_path):
    packages = {f"node_modules/p{i}": {"version": "1.0.0", "dependencies": {f"p{i + 1}": "1"}}
                for i in range(40_000)}
    path = tmp_path / "package-lock.json"
    path.write_text(json.dumps({"name": "x", "lockfileVersion": 3, "packages": packages}))
    result = run(NpmLockExtractor(), path, tmp_path)
    assert len(result.nodes) + len(result.edges) == 50_000
    assert "too-many-records" in {p.code for p in result.problems}
