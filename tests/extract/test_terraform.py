"""Terraform: resources, data sources and module calls with depends_on and references at
their own lines; real modules (fixtures/sources/SOURCES.md) and hostile files."""

from pathlib import Path

import pytest
from conftest import REPO

from kgbuild.extract.manifests.terraform import TerraformExtractor
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

SOURCES = REPO / "fixtures" / "sources"
TF = SOURCES / "terraform"
EX = TerraformExtractor()
SCHEMA = load_schema()


def run(path: Path, root: Path = SOURCES):
    assert EX.claims(path, b"")
    return EX.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(SCHEMA, [root]))


def edges(result) -> set[tuple[str, str, str, tuple]]:
    return {(e.subject.rsplit("/", 1)[1], e.predicate, e.object.rsplit("/", 1)[-1], e.qualifiers)
            for e in result.edges}


def test_microservices_demo_module():
    main = run(TF / "microservices-demo" / "main.tf")
    assert main.problems == []
    mod = "terraform:terraform/microservices-demo"
    assert {n.id for n in main.nodes} == {f"{mod}/{a}" for a in (
        "module.enable_google_apis", "google_container_cluster.my_cluster", "module.gcloud",
        "null_resource.apply_deployment", "null_resource.wait_conditions")}
    assert {("google_container_cluster.my_cluster", "dependsOn", "module.enable_google_apis",
             ("depends_on",)),
            ("null_resource.apply_deployment", "dependsOn", "module.gcloud", ("depends_on",)),
            # the resource.<type>.<name> form
            ("null_resource.wait_conditions", "dependsOn", "null_resource.apply_deployment",
             ("depends_on",))} <= edges(main)
    source = [e for e in main.edges if "source" in e.qualifiers]
    assert {(e.object, e.qualifiers[1]) for e in source} == {
        ("terraform-module:terraform-google-modules/project-factory/google//modules/"
         "project_services", "version:~> 18.0"),
        ("terraform-module:terraform-google-modules/gcloud/google", "version:~> 4.0")}
    assert all(e.object == mod for e in main.edges if e.predicate == "partOf")
    redis = run(TF / "microservices-demo" / "memorystore.tf")
    [ref] = [e for e in redis.edges if "reference" in e.qualifiers]
    assert (ref.object, ref.line) == (f"{mod}/google_redis_instance.redis-cart", 37)
    assert "${google_redis_instance.redis-cart[0].host}" in ref.evidence


def test_terraform_aws_vpc_complete_example():
    path = TF / "terraform-aws-vpc-complete" / "main.tf"
    result = run(path)
    assert result.problems == []
    found = edges(result)
    assert ("module.vpc", "dependsOn", "data.aws_availability_zones.available",
            ("reference",)) not in found  # referenced in locals, not in the module call
    assert ("module.vpc_endpoints", "dependsOn", "module.vpc", ("reference",)) in found
    assert ("module.vpc_endpoints", "dependsOn", "aws_security_group.rds", ("reference",)) in found
    assert ("module.vpc_endpoints", "dependsOn",
            "data.aws_iam_policy_document.dynamodb_endpoint_policy", ("reference",)) in found
    local = {e.object for e in result.edges if "source" in e.qualifiers}
    # "../../" and "../../modules/vpc-endpoints", resolved against the module's folder
    assert local == {"terraform:.", "terraform:modules/vpc-endpoints"}
    lines = path.read_text().split("\n")
    for e in result.edges:  # each reference at its own line
        if e.predicate == "dependsOn" and "reference" in e.qualifiers:
            name = e.object.rsplit("/", 1)[1].split(".")[-1]
            assert name in lines[e.line - 1]


@pytest.mark.parametrize("text, line", [
    ('resource "a_b" "c" {\n  x = \n}\nresource "a_b" "d" {\n  y = a_b.c.id\n}\n', 3),
    ('resource "a_b" "c" {\n}\n}}\nresource "a_b" "d" {\n  y = a_b.c.id\n}\n', 3),
    ('resource "a_b" "c" {\n  x = [\n', 1),
    ('resource "a_b" {\n}\n', 1),
])
def test_broken_blocks_are_reported_and_the_rest_read(tmp_path, text, line):
    path = tmp_path / "main.tf"
    path.write_text(text)
    result = run(path, tmp_path)
    assert line in {p.line for p in result.problems}
    assert all(p.code == "bad-terraform" for p in result.problems)
    if "}}" in text:  # a stray token after a block: the block before it is still read
        assert [n.label for n in result.nodes] == ["a_b.c"]


@pytest.mark.slow
def test_hostile_terraform(tmp_path):
    deep = tmp_path / "deep.tf"
    deep.write_text('resource "a_b" "c" {\n  x = ' + "[" * 20_000 + "a_b.d.id" + "]" * 20_000
                    + "\n}\n")
    result = run(deep, tmp_path)
    assert ("a_b.c", "dependsOn", "a_b.d", ("reference",)) in edges(result)
    binary = tmp_path / "bin.tf"
    binary.write_bytes(b'resource "a" "b" {}\n\x00')
    assert [(p.code, p.line) for p in run(binary, tmp_path).problems] == [("bad-input", 2)]
    many = tmp_path / "many.tf"
    many.write_text("".join(f'resource "a_b" "r{i}" {{\n  x = a_b.r{i + 1}.id\n}}\n'
                            for i in range(20_000)))
    result = run(many, tmp_path)
    assert len(result.nodes) + len(result.edges) == 50_000
    assert "too-many-records" in {p.code for p in result.problems}
