"""Package identity rules: ecosystems gate resolution and duplicates; versions are not names."""

import pytest

from kgbuild.resolve.aliases import AliasRegistry
from kgbuild.resolve.ecosystem import compose_project, ecosystem, may_be_same, npm_scope, split_version
from kgbuild.resolve.resolver import Resolver
from kgbuild.schema.loader import load_schema

SCHEMA = load_schema()
PACKAGES = [  # defined entities as the manifest extractors name them
    ("pkg:npm/%40babel/core", "Component", "@babel/core"),
    ("pkg:npm/vite", "Component", "vite"),
    ("pkg:npm/debug", "Component", "debug"),
    ("pkg:npm/%40vitejs/devtools", "Component", "@vitejs/devtools"),
    ("pkg:pypi/httpx", "Component", "httpx"),
    ("pkg:pypi/pymysql", "Component", "PyMySQL"),
    ("pkg:pypi/devtools", "Component", "devtools"),
    ("pkg:pypi/requests", "Component", "requests"),
    ("apps/web/package.json#web-utils", "Component", "web-utils"),
    ("tools/lint#python", "Component", "lint-tools"),
]


def make(entities=PACKAGES, registry=None) -> Resolver:
    r = Resolver(SCHEMA, registry)
    for args in entities:
        r.add_entity(*args)
    return r


@pytest.mark.parametrize("eid, eco", [
    ("pkg:pypi/requests", "pypi"), ("pkg:NPM/%40types/debug", "npm"), ("pkg:golang/x.io/y", "golang"),
    ("pkg:maven/org.apache/commons", "maven"), ("src/app#python", "pypi"),
    ("web/package.json#site", "npm"), ("svc/go.mod#svc", "golang"),
    ("component:default/payments", None), ("README.md#c1", None)])
def test_ecosystem_of_an_id(eid, eco):
    assert ecosystem(eid) == eco


def test_scopes_and_types_stubs():
    assert npm_scope("pkg:npm/%40types/debug", "") == "@types"
    assert npm_scope("pkg:npm/debug", "debug") == ""
    assert npm_scope("a/package.json#x", "@acme/x") == "@acme"
    assert npm_scope("pkg:pypi/debug", "debug") is None
    assert not may_be_same("pkg:npm/%40types/debug", "@types/debug", "a/package.json#debug", "debug")
    assert may_be_same("pkg:npm/debug", "debug", "a/package.json#debug", "debug")


@pytest.mark.parametrize("name, split", [
    ("requests-2.32.3", ("requests", "2.32.3")), ("debug@4.3.7", ("debug", "4.3.7")),
    ("charset_normalizer-3.3.2rc1", ("charset_normalizer", "3.3.2rc1")),
    ("flask 3.0", ("flask", "3.0")), ("foo-1.0.dev3", ("foo", "1.0.dev3")),
    ("payments 2", None), ("python-3", None), ("log4j", None), ("v1.2", None)])
def test_version_suffixes(name, split):
    assert split_version(name) == split


@pytest.mark.parametrize("mention, own", [
    ("cors", "pkg:npm/cors"),  # was queued as @babel/core
    ("vine", "pkg:pypi/vine"),  # was queued as npm vite: another ecosystem
    ("httpx2", "pkg:pypi/httpx2"),  # another registry package, however alike
    ("pymssql", "pkg:pypi/pymssql"),
    ("@types/debug", "pkg:npm/%40types/debug"),  # types debug, is not debug
    ("devtools", "pkg:npm/devtools"),  # pypi devtools and @vitejs/devtools: neither
])
def test_registry_packages_are_never_candidates_for_one_another(mention, own):
    res = make().resolve(mention, "Component", own_id=own)
    assert res.status == "new" and not res.candidates, res.explain()


def test_without_an_own_id_the_gate_is_open():
    assert make().resolve("PyMySQL", "Component").id == "pkg:pypi/pymysql"


def test_a_package_may_match_an_unpublished_project_of_its_ecosystem():
    r = make()
    res = r.resolve("web-utils", "Component", own_id="pkg:npm/web-utils")
    assert (res.status, res.id) == ("resolved", "apps/web/package.json#web-utils")
    assert r.resolve("web-utils", "Component", own_id="pkg:pypi/web-utils").status == "new"


def test_a_curated_alias_links_two_registry_packages():
    reg = AliasRegistry.from_dict({"aliases": {"Component": {"pkg:pypi/pymysql": ["pymssql"]}}})
    res = make(registry=reg).resolve("pymssql", "Component", own_id="pkg:pypi/pymssql")
    assert (res.status, res.id, res.stage) == ("resolved", "pkg:pypi/pymysql", "alias")
    reg = AliasRegistry.from_dict({"aliases": {"Component": {"pkg:npm/vite": ["vine"]}}})
    assert make(registry=reg).resolve("vine", "Component", own_id="pkg:pypi/vine").status == "new"


def test_a_version_suffixed_name_is_the_package():
    r = make()
    res = r.resolve("requests-2.32.3", "Component", own_id="vendor/requests-2.32.3#python")
    assert (res.status, res.id, res.stage) == ("resolved", "pkg:pypi/requests", "normalized")
    assert "at version 2.32.3" in res.reason
    assert r.resolve("requests-2.32.3", "Component", own_id="pkg:npm/requests").status == "new"
    assert r.resolve("payments 2", "Component").status != "resolved"


def test_possible_duplicates_follow_the_rules():
    r = make(PACKAGES + [
        ("pkg:pypi/pymssql", "Component", "pymssql"),
        ("pkg:npm/%40types/debug", "Component", "@types/debug"),
        ("pkg:npm/devtools", "Component", "devtools"),
        ("vendor/requests-2.32.3#python", "Component", "requests-2.32.3"),
        ("site/package.json#vite", "Component", "vite"),
        ("component:default/pymysql", "Component", "pymysql")])  # a catalog's entity: no ecosystem
    pairs = {(d.a, d.b): d.reason for d in r.possible_duplicates()}
    assert pairs == {("pkg:pypi/requests", "vendor/requests-2.32.3#python"): "version",
                     ("pkg:npm/vite", "site/package.json#vite"): "normalized",
                     ("component:default/pymysql", "pkg:pypi/pymysql"): "normalized"}


def test_folder_named_projects_and_look_alikes_are_not_packages():
    r = make(PACKAGES + [("celery/examples/django#python", "Component", "django"),
                         ("vite/types/package.json#types", "Component", "types"),
                         ("a/docs#python", "Component", "docs"),
                         ("b/docs#python", "Component", "docs"),
                         ("x/package.json#demo-app", "Component", "demo-app"),  # two private
                         ("y/package.json#demo-app", "Component", "demo-app")])  # packages
    assert r.resolve("django", "Component", own_id="pkg:pypi/django").status == "new"
    res = r.resolve("type-is", "Component", own_id="pkg:npm/type-is")
    assert res.status == "new" and "exact names only" in res.reason
    assert r.resolve("typess", "Component").status != "new"  # without an own ID: fuzzy as ever
    assert r.possible_duplicates() == []


def test_long_version_chains_are_read_once():
    r = make()  # 8 kB of versions: no recursion per version, no backtracking over it
    assert r.resolve("requests" + "-1.1" * 2000, "Component", own_id="x/y#python").status == "new"
    assert split_version("requests-1.1-2.2") == ("requests-1.1", "2.2")  # one version comes off
    assert r.resolve("requests-1.1-2.2", "Component", own_id="x/y#python").status != "resolved"


def test_an_sbom_entry_is_the_package_of_its_purl_alias():
    r = Resolver(SCHEMA)
    for bom, ns, version in (("a/bom.json", "psr", "1.0.0.0"), ("a/bom.json", "symfony", "5.4.9.0"),
                             ("b/bom.json", "symfony", "6.0.0")):
        r.add_entity(f"{bom}#{ns}/event-dispatcher-{version}", "Library", "event-dispatcher",
                     [f"pkg:composer/{ns}/event-dispatcher@{version}"])
    pairs = [(d.a, d.b) for d in r.possible_duplicates()]
    assert pairs == [("a/bom.json#symfony/event-dispatcher-5.4.9.0",
                      "b/bom.json#symfony/event-dispatcher-6.0.0")]  # one package, two SBOMs
    assert r.package_of("a/bom.json#psr/event-dispatcher-1.0.0.0") == "pkg:composer/psr/event-dispatcher"
    res = r.resolve("event-dispatcher", "Library", own_id="pkg:composer/psr/event-dispatcher")
    assert res.id == "a/bom.json#psr/event-dispatcher-1.0.0.0"


def test_two_versions_of_one_purl_are_one_package():
    assert may_be_same("pkg:maven/org.x/y@1.0?type=jar", "y", "pkg:maven/org.x/y@2.0?type=jar", "y")
    assert not may_be_same("pkg:maven/org.x/y@1.0", "y", "pkg:maven/org.x/z@1.0", "y")


def test_services_of_two_compose_projects_are_not_one():
    assert compose_project("compose:shop/db") == "shop"
    assert compose_project("component:default/db") is None and compose_project("compose:x") is None
    assert not may_be_same("compose:shop/db", "db", "compose:blog/db", "db")
    assert may_be_same("compose:shop/db", "db", "compose:blog/db", "db", curated=True)
    assert may_be_same("compose:shop/db", "db", "compose:shop/db", "db")
    assert may_be_same("compose:shop/payments", "payments", "component:default/payments", "payments")


@pytest.mark.corpus
def test_real_compose_projects_propose_no_duplicates_across_projects():
    # the corpus's five Compose projects each have their own db/backend/frontend: the
    # resolver proposed 14 such pairs as possible duplicates before
    from conftest import CATALOGS

    from kgbuild.project.pipeline import build_graph
    from kgbuild.resolve.review import possible_duplicates
    kg = build_graph([CATALOGS / "compose"], validate=False, timestamp=0).graph
    services = [n for n in kg.nodes if n.startswith("compose:")]
    projects = {compose_project(n) for n in services}
    assert len(projects) >= 4 and len(services) > len({n.rsplit("/", 1)[1] for n in services})
    assert [d for d in possible_duplicates(kg) if compose_project(d.a) and compose_project(d.b)] == []
