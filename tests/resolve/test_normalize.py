"""Key normalisation: folding, word splitting, suffixes, plurals, abbreviations, references."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgbuild.graph.ids import slug, split_words
from kgbuild.resolve.normalize import (
    Normalizer,
    acronym,
    canonical_ref,
    fold,
    singular,
)
from kgbuild.schema.loader import load_schema


@pytest.fixture(scope="module")
def norm():
    return Normalizer.for_schema(load_schema())


def test_fold_is_nfkc_casefold_and_collapses_space():
    assert fold("  ＰａｙｍｅｎｔＳ \t API ") == "payments api"
    assert fold("Straße") == "strasse"


@pytest.mark.parametrize("text, words", [
    ("PaymentsAPI", ["payments", "api"]),
    ("getHTTPResponse", ["get", "http", "response"]),
    ("payments_api", ["payments", "api"]),
    ("payments.api/v1", ["payments", "api", "v1"]),
    ("Adams70", ["adams", "70"]),
    ("33AtlasSvc", ["33", "atlas", "svc"]),
    ("ServiceV2", ["service", "v2"]),
    ("APIsClient", ["apis", "client"]),
    ("OAUTH2", ["oauth", "2"]),
    ("k8s-operator", ["k8s", "operator"]),
    ("log4j", ["log4j"]),
    ("C++ & C#", ["c++", "and", "c#"]),
    ("Café Crème", ["cafe", "creme"]),
    ("ＰａｙｍｅｎｔｓＡＰＩ", ["payments", "api"]),
])
def test_split_words(text, words):
    assert split_words(text) == words


def test_separators_case_and_camel_give_one_key(norm):
    forms = ["payments-gateway", "payments_gateway", "Payments Gateway", "paymentsGateway",
             "PaymentsGateway", "PAYMENTS_GATEWAY", "payments.gateway", "payment gateways"]
    assert {norm.key(f, "Service") for f in forms} == {"payment gateway"}


def test_suffix_stripped_only_for_own_type(norm):
    assert norm.key("Payments API", "API") == "payment"
    assert norm.key("Payments API", "Group") == "payment api"
    assert norm.key("Payments Team", "Group") == "payment"
    assert norm.key("Payments Team", "API") == "payment team"
    assert norm.key("payments-svc", "Service") == "payment"
    assert norm.key("payments-svc", "Library") == "payment service"
    assert norm.key("API", "API") == "api"  # never strip the whole name


def test_suffixes_are_derived_from_schema_type_names(norm):
    assert ("api",) in norm.suffixes["API"]
    assert ("service",) in norm.suffixes["Service"]
    assert ("team",) in norm.suffixes["Group"] and ("group",) in norm.suffixes["Group"]
    custom = Normalizer.for_schema(load_schema(), extra={"Group": ["tribe"]})
    assert custom.key("Payments Tribe", "Group") == "payment"
    assert custom.key("Payments Team", "Group") == "payment team"


def test_misspelt_suffix_only_on_request(norm):
    words = norm.words("audit servcie")
    assert norm.strip_suffix(words, "Service") == ["audit", "servcie"]
    assert norm.strip_suffix(words, "Service", misspelt=True) == ["audit"]


def test_compact_variants_strip_a_glued_suffix(norm):
    assert norm.compact_variants("paymentsapi", "API") == ["paymentsapi", "payments"]
    assert norm.compact_variants("apiapi", "API") == ["apiapi", "api"]
    assert norm.compact_variants("xapi", "API") == ["xapi"]  # 3+ letters must remain
    assert norm.compact_variants("payment api", "API") == ["paymentapi"]


@pytest.mark.parametrize("word, expected", [
    ("policies", "policy"), ("payments", "payment"), ("classes", "class"), ("status", "status"),
    ("redis", "redis"), ("gas", "gas"), ("k8s", "k8s"), ("apis", "apis"),
])
def test_singular(word, expected):
    assert singular(word) == expected


def test_plural_and_abbreviation_maps(norm):
    assert norm.words("APIs") == ["api"]
    assert norm.words("user mgmt svcs") == ["user", "management", "service"]
    plain = Normalizer(abbreviations={}, plurals={}, singularize=False)
    assert plain.words("user mgmt svcs") == ["user", "mgmt", "svcs"]


def test_canonical_ref():
    assert canonical_ref("pkg:PyPI/Foo_Bar@1.0?x=y") == "pkg:pypi/foo-bar"
    assert canonical_ref("pkg:npm/%40scope/name@2") == "pkg:npm/%40scope/name"
    assert canonical_ref("API:payments") == "api:default/payments"
    assert canonical_ref("component:team-a/Pay") == "component:team-a/pay"
    assert canonical_ref("default/payments") == "*:default/payments"
    assert canonical_ref("payments") is None
    assert canonical_ref("Payments / Billing") is None
    assert canonical_ref("a:") is None


def test_acronym_and_slug():
    assert acronym(["customer", "identity", "service"]) == "cis"
    assert acronym(["payments"]) == ""
    assert slug("Payments API (v2)") == "payments-api-v2"
    assert slug("PaymentsGateway") == "payments-gateway"


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


@settings(deadline=None)
@given(st.lists(WORD, min_size=1, max_size=4), st.sampled_from(["-", "_", " ", ".", "/", " - "]))
def test_key_ignores_separators_and_case(words, sep):
    norm = Normalizer.for_schema(load_schema())
    base = norm.key(" ".join(words), "API")
    joined = sep.join(words)
    assert norm.key(joined, "API") == base
    assert norm.key(joined.upper(), "API") == norm.key(joined.lower(), "API")


@settings(deadline=None)
@given(st.text(max_size=30))
def test_key_is_total_and_space_normalised(text):
    key = Normalizer.for_schema(load_schema()).key(text, "Service")
    assert key == " ".join(key.split())
