"""Package name normalisation and version-less purls, per ecosystem."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from kgbuild.extract.manifests.purl import (
    go_module,
    golang_purl,
    is_purl,
    npm_name,
    npm_purl,
    pypi_name,
    pypi_purl,
)


@pytest.mark.parametrize("name, normal", [
    ("Flask_SQLAlchemy", "flask-sqlalchemy"),
    ("zope.interface", "zope-interface"),
    ("ruamel.yaml.clib", "ruamel-yaml-clib"),
    ("A__B--C..D", "a-b-c-d"),
    ("a-_.b", "a-b"),
    ("Django", "django"),
    ("  requests ", "requests"),
    ("x", "x"),
    ("1", "1"),
    ("python-dotenv", "python-dotenv"),
])
def test_pypi_pep503(name, normal):
    assert pypi_name(name) == normal
    assert pypi_purl(name) == f"pkg:pypi/{normal}"


@pytest.mark.parametrize("bad", ["", " ", "-foo", "foo-", "_x", "foo bar", "foo/bar", "föo",
                                 "foo[bar]", "foo>=1"])
def test_pypi_rejects(bad):
    with pytest.raises(ValueError):
        pypi_name(bad)


@given(st.from_regex(r"\A[A-Za-z0-9](?:[A-Za-z0-9._-]{0,20}[A-Za-z0-9])?\Z"))
def test_pypi_matches_packaging_and_is_idempotent(name):
    assert pypi_name(name) == canonicalize_name(name)
    assert pypi_name(pypi_name(name)) == pypi_name(name)


@pytest.mark.parametrize("name, normal, purl", [
    ("@backstage/core-plugin-api", "@backstage/core-plugin-api",
     "pkg:npm/%40backstage/core-plugin-api"),
    ("@Backstage/Core-Plugin-API", "@backstage/core-plugin-api",
     "pkg:npm/%40backstage/core-plugin-api"),
    ("JSONStream", "jsonstream", "pkg:npm/jsonstream"),
    ("lodash.merge", "lodash.merge", "pkg:npm/lodash.merge"),
    ("@types/node", "@types/node", "pkg:npm/%40types/node"),
    ("socket.io", "socket.io", "pkg:npm/socket.io"),
    ("@jest/environment-jsdom-abstract", "@jest/environment-jsdom-abstract",
     "pkg:npm/%40jest/environment-jsdom-abstract"),
    ("left_pad", "left_pad", "pkg:npm/left_pad"),
    ("Excl!", "excl!", "pkg:npm/excl%21"),
])
def test_npm(name, normal, purl):
    assert npm_name(name) == normal
    assert npm_purl(name) == purl


@pytest.mark.parametrize("bad", ["", "a/b", "@scope", "@/x", "@a/", "@a/b/c", "/x", ".hidden",
                                 "_under", "a b", "a@b", "x" * 215])
def test_npm_rejects(bad):
    with pytest.raises(ValueError):
        npm_name(bad)


@pytest.mark.parametrize("path, purl", [
    ("github.com/spf13/cobra", "pkg:golang/github.com/spf13/cobra"),
    ("github.com/Azure/azure-sdk-for-go", "pkg:golang/github.com/Azure/azure-sdk-for-go"),
    ("github.com/cpuguy83/go-md2man/v2", "pkg:golang/github.com/cpuguy83/go-md2man/v2"),
    ("go.yaml.in/yaml/v3", "pkg:golang/go.yaml.in/yaml/v3"),
    ("gopkg.in/yaml.v3", "pkg:golang/gopkg.in/yaml.v3"),
    ("golang.org/x/text", "pkg:golang/golang.org/x/text"),
])
def test_go_keeps_case(path, purl):
    assert go_module(path) == path
    assert golang_purl(path) == purl


@pytest.mark.parametrize("bad", ["", "github.com//x", "/abs", "github.com/x/", "a b",
                                 "github.com/x/../y", "github.com/x/./y", "example.com/ä"])
def test_go_rejects(bad):
    with pytest.raises(ValueError):
        go_module(bad)


@pytest.mark.parametrize("value, expected", [
    ("pkg:maven/io.dropwizard/dropwizard-core@1.3.15?type=jar", True),
    ("pkg:npm/%40backstage/cli", True),
    ("pkg:composer/asm89/stack-cors@1.3.0", True),
    ("pkg:pypi/flask", True),
    ("asm89/stack-cors-1.3.0.0", False),
    ("acme-application", False),
    ("pkg:", False),
    ("pkg:/x", False),
    ("pkg:npm/", False),
    ("urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79", False),
])
def test_is_purl(value, expected):
    assert is_purl(value) is expected
