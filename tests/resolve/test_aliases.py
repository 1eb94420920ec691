"""The alias registry file: loading, checking, atomic saving, accept/reject decisions."""


import pytest
from conftest import REPO

from kgbuild.errors import InputError, SchemaError
from kgbuild.resolve.aliases import AliasRegistry, accept, reject
from kgbuild.schema.loader import load_schema

FIXTURE = REPO / "fixtures" / "aliases" / "aliases.yaml"


def test_load_fixture():
    reg = AliasRegistry.load(FIXTURE)
    assert reg.aliases["Library"]["pkg:pypi/opencv-python"] == ["cv2"]
    assert reg.is_distinct("api:default/payouts", "api:default/payments")
    assert not reg.is_distinct("api:default/payments", "group:default/payments")
    assert [(d.mention, d.decision) for d in reg.decisions] == [("Paymnts", "accepted"),
                                                                  ("Payouts", "rejected")]
    assert reg.rejected() == {("payouts", "api:default/payments")}


def test_save_load_roundtrip_is_atomic_and_stable(tmp_path):
    reg = AliasRegistry.load(FIXTURE)
    path = tmp_path / "aliases.yaml"
    reg.save(path)
    first = path.read_text()
    again = AliasRegistry.load(path)
    assert again.to_dict() == reg.to_dict()
    again.save(path)
    assert path.read_text() == first
    assert [p.name for p in tmp_path.iterdir()] == ["aliases.yaml"]  # no temp file left


def test_aliases_deduplicate_case_insensitively():
    reg = AliasRegistry()
    reg.add_alias("Library", "pkg:pypi/pyyaml", "yaml")
    reg.add_alias("Library", "pkg:pypi/pyyaml", "YAML")
    assert reg.aliases == {"Library": {"pkg:pypi/pyyaml": ["yaml"]}}


def test_decisions_survive_reload_and_replace_each_other(tmp_path):
    path = tmp_path / "aliases.yaml"
    accept(path, "Paymnts", "API", "api:default/payments")
    accept(path, "paymnts", "API", "api:default/payouts")  # a new accepted ID replaces the old
    reject(path, "Payouts", "API", "api:default/payments")
    reg = AliasRegistry.load(path)
    assert sorted((d.mention, d.id, d.decision) for d in reg.decisions) == [
        ("Payouts", "api:default/payments", "rejected"),
        ("paymnts", "api:default/payouts", "accepted")]
    reject(path, "PAYMNTS", "API", "api:default/payouts")  # rejecting replaces the acceptance
    assert [(d.id, d.decision) for d in AliasRegistry.load(path).decisions
            if d.mention.lower() == "paymnts"] == [("api:default/payouts", "rejected")]


def test_accept_checks_type_against_schema(tmp_path):
    path = tmp_path / "aliases.yaml"
    made = accept(path, "cv", "library", "pkg:pypi/opencv-python", load_schema())
    assert made.type == "Library"
    with pytest.raises(SchemaError):
        accept(path, "cv", "Libary", "pkg:pypi/opencv-python", load_schema())


@pytest.mark.parametrize("text, message", [
    ("- just a list\n", "must be a mapping"),
    ("alias: {}\n", "unknown top-level key 'alias'"),
    ("aliases: {API: [a, b]}\n", "must map a canonical ID"),
    ("aliases: {API: {x: [1]}}\n", "list of strings"),
    ("distinct: [[a]]\n", "not a pair"),
    ("distinct: [[a, a]]\n", "two different IDs"),
    ("decisions: [{mention: m, type: API, id: x, decision: maybe}]\n", "decision must be one of"),
    ("aliases: [\n", "YAML syntax error"),
])
def test_bad_files_name_the_file(tmp_path, text, message):
    path = tmp_path / "aliases.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        AliasRegistry.load(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        AliasRegistry.load(tmp_path / "nope.yaml")
    assert AliasRegistry.load(tmp_path / "nope.yaml", missing_ok=True).to_dict() == {
        "aliases": {}, "distinct": [], "decisions": []}
