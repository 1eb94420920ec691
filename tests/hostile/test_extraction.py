"""Hostile inputs to the extractors, generated here (no large files in git): work and output
bounded by the input, only regular files read, lines counted as the formats count them,
odd encodings decoded, no traceback for any input."""

import json
import os
import socket
import subprocess
import sys

import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgbuild.project.pipeline import build as build_file
from kgbuild.project.pipeline import build_graph
from kgbuild.errors import InputError
from kgbuild.extract import assemble, records
from kgbuild.extract.discover import HEAD_BYTES, extractor_for
from kgbuild.io.text import (
    CUT,
    MAX_EVIDENCE_CHARS,
    MAX_LITERAL_CHARS,
    decode_text,
    read_text,
    split_lines,
)
from kgbuild.io.yamlfile import load_yaml

ENTITY = """\
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: {name}
spec:
  type: service
  lifecycle: production
  owner: team-a
"""
ODD_BREAKS = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\r"]


def build(root, **kw):
    kw.setdefault("validate", False)
    return build_graph([root], store=None, timestamp=0, root=root.parent, **kw)


def assertions(result):
    return list(result.graph.assertions.values())


def codes(result, file=None):
    return {p.code for p in result.problems if file is None or p.file.endswith(file)}


def check_bounded(result, source_bytes):
    """Every evidence quote and message bounded; nothing located on a line past the end."""
    for a in assertions(result):
        assert a.evidence is None or len(a.evidence) <= MAX_EVIDENCE_CHARS
    for p in result.problems:
        assert len(p.message) <= 500 and "\n" not in p.message
    # (ownership from CODEOWNERS is owners x components by its meaning: not counted here)
    total = sum(len(a.evidence or "") for a in assertions(result) if a.predicate != "ownedBy")
    assert total <= 2 * source_bytes + 10_000


# -- evidence: the entry that states the relation ----------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("n", [2500, 20_000])
def test_one_line_flow_list_gives_per_item_evidence(tmp_path, n):
    root = tmp_path / "cat"
    root.mkdir()
    refs = [f"component:dep-{i:06d}" for i in range(n)]
    text = ENTITY.format(name="big") + f"  dependsOn: [{', '.join(refs)}]\n"
    (root / "catalog-info.yaml").write_text(text)
    result = build(root)
    deps = {a.object: a for a in assertions(result) if a.predicate == "dependsOn"}
    assert len(deps) == n
    for ref in refs[:50] + refs[-50:]:
        a = deps[f"component:default/{ref.split(':')[1]}"]
        assert a.evidence == ref and a.line == 9  # the item itself, on its line
    check_bounded(result, len(text))
    out = tmp_path / "graph.ttl"
    build_file([root], out, store=None, timestamp=0, root=tmp_path, validate=False)
    assert out.stat().st_size < 64 * len(text)  # was 2,500 times the input (a line per edge)


def test_evidence_rules_for_yaml_entries(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    text = (ENTITY.format(name="svc").replace("  owner: team-a\n", "  owner: team-a  # the owners\n")
            + "  dependsOn:\n    - component:block-item\n"
            + "  consumesApis: [single]\n"
            + "  providesApis: [\"quoted-a\", 'quoted-b']\n"
            + "  system:\n    far-away\n")
    (root / "catalog-info.yaml").write_text(text)
    ev = {(a.predicate, a.object): (a.evidence, a.line) for a in assertions(build(root))}
    assert ev[("ownedBy", "group:default/team-a")] == ("owner: team-a  # the owners", 8)
    assert ev[("dependsOn", "component:default/block-item")] == ("- component:block-item", 10)
    assert ev[("consumesApi", "api:default/single")] == ("consumesApis: [single]", 11)
    assert ev[("providesApi", "api:default/quoted-a")] == ('"quoted-a"', 12)
    assert ev[("providesApi", "api:default/quoted-b")] == ("'quoted-b'", 12)
    assert ev[("partOf", "system:default/far-away")] == ("system: far-away", 13)


def test_a_whole_flow_style_entity_on_one_line(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    owners = "x" * 40
    text = ("{apiVersion: backstage.io/v1alpha1, kind: Component, metadata: {name: one}, "
            f"spec: {{type: service, lifecycle: prod, owner: {owners}, "
            "dependsOn: [component:a, component:b], system: s1}}\n")
    (root / "catalog-info.yaml").write_text(text)
    ev = {(a.predicate, a.object): a.evidence for a in assertions(build(root))}
    assert ev[("ownedBy", f"group:default/{owners}")] == f"owner: {owners}"
    assert ev[("dependsOn", "component:default/a")] == "component:a"
    assert ev[("partOf", "system:default/s1")] == "system: s1"


def test_a_long_entry_is_cut_with_a_marker(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    text = ENTITY.format(name="svc") + "  dependsOn:\n    - component:x   # " + "c" * 5000 + "\n"
    (root / "catalog-info.yaml").write_text(text)
    [a] = [a for a in assertions(build(root)) if a.predicate == "dependsOn"]
    assert a.evidence == "component:x"  # the line is too long to quote: the item itself


def structured_sources(root, n):
    """One-line (or one-entry-per-relation) manifests of every structured format with ``n``
    relations each; returns the total size written."""
    names = [f"pkg-{i:05d}" for i in range(n)]
    files = {
        "npm/package.json": json.dumps({"name": "big", "dependencies": {m: "^1" for m in names}}),
        "sbom/bom.json": json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.5",
                                     "components": [{"name": m, "bom-ref": m} for m in names],
                                     "dependencies": [{"ref": names[0], "dependsOn": names[1:]}]}),
        "py/pyproject.toml": "[project]\nname = \"big\"\ndependencies = ["
                             + ", ".join(f'"{m}>=1"' for m in names) + "]\n",
        "req/requirements.txt": "".join(f"{m}==1.0\n" for m in names),
        "go/go.mod": "module example.com/big\n\nrequire (\n"
                     + "".join(f"\texample.com/{m} v1.0.0\n" for m in names) + ")\n",
        "compose/compose.yaml": "services:\n  web:\n    image: x\n    depends_on: ["
                                + ", ".join(names) + "]\n"
                                + "".join(f"  {m}:\n    image: y\n" for m in names),
        ".github/CODEOWNERS": "* " + " ".join(f"@org/{m}" for m in names[:300]) + "\n",
    }
    size = 0
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        size += len(text)
    return size


@pytest.mark.slow
def test_every_structured_extractor_quotes_the_entry(tmp_path):
    root = tmp_path / "repo"
    size = structured_sources(root, 2000)
    result = build(root)
    by_extractor = {}
    for a in assertions(result):
        by_extractor.setdefault(a.extractor, []).append(a)
    assert {"npm", "cyclonedx", "pyproject", "requirements", "gomod", "compose"} <= set(by_extractor)
    check_bounded(result, size)
    for name, items in by_extractor.items():
        deps = [a for a in items if a.predicate == "dependsOn"]
        assert len({a.evidence for a in deps}) == len(deps), name  # one quote per entry
    py = {a.object: a.evidence for a in by_extractor["pyproject"] if a.predicate == "dependsOn"}
    assert py["pkg:pypi/pkg-00007"] == 'project.dependencies: "pkg-00007>=1"'
    web = {a.object: a.evidence for a in by_extractor["compose"] if a.predicate == "dependsOn"}
    assert web["compose:compose/pkg-00003"] == "pkg-00003"
    owners = [a for a in assertions(result) if a.predicate == "ownedBy"]
    assert owners and all(a.evidence == f"* @org/{a.object.rsplit('/', 1)[1]}" for a in owners)


def test_a_long_line_in_a_line_format_is_cut(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "requirements.txt").write_text("requests==2  # " + "z" * 10_000 + "\n")
    (root / "go.mod").write_text("module example.com/m\n\nrequire example.com/x v1.0.0 // "
                                 + "y" * 10_000 + "\n")
    result = build(root)
    quotes = sorted(a.evidence for a in assertions(result) if a.predicate == "dependsOn")
    assert len(quotes) == 2
    assert all(len(q) == MAX_EVIDENCE_CHARS and q.endswith(CUT) for q in quotes)


# -- only regular files are read ---------------------------------------------------------------
HANG_GUARD = "\n".join([
    "import sys",
    "from pathlib import Path",
    "from kgbuild.project.pipeline import build_graph",
    "root = Path(sys.argv[1])",
    "result = build_graph([root], store=None, timestamp=0, root=root.parent, validate=False)",
    "for p in result.problems:",
    "    print(p.file, p.code, p.message, sep='|')",
    "print('EDGES', len(result.graph.edges()))",
])


def run_guarded(root):
    """Build in a child process: if a read blocked, the test fails instead of hanging."""
    proc = subprocess.run([sys.executable, "-c", HANG_GUARD, str(root)], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_fifos_are_reported_never_opened(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    os.mkfifo(root / "base.txt")
    os.mkfifo(root / "target.yaml")
    os.mkfifo(root / "spec.yaml")
    (root / "requirements.txt").write_text("-r base.txt\nflask\n")
    (root / "location.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Location\nmetadata:\n  name: loc\n"
        "spec:\n  targets: [./target.yaml]\n")
    (root / "api.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: API\nmetadata:\n  name: a\nspec:\n"
        "  type: openapi\n  lifecycle: production\n  owner: team\n"
        "  definition:\n    $text: ./spec.yaml\n")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(root / "sock.yaml"))
        out = run_guarded(root)
    finally:
        sock.close()
    assert "EDGES" in out
    assert "FIFO" in out and "include 'base.txt': a FIFO, not a regular file" in out
    assert "cat/location.yaml|not-a-regular-file|Location 'loc' target ./target.yaml is a FIFO" in out
    assert "$text target ./spec.yaml is a FIFO" in out


def test_read_text_refuses_devices_and_folders(tmp_path):
    for path, kind in (("/dev/zero", "a device"), ("/dev/null", "a device"), (tmp_path, "a folder")):
        if not os.path.exists(path):
            continue
        with pytest.raises(InputError) as info:
            read_text(path, 1 << 20)
        assert info.value.code == "not-a-regular-file" and kind in info.value.message
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputError, match="a FIFO") as info:
        read_text(tmp_path / "fifo", 1 << 20)  # returns at once: never opened for reading


@pytest.mark.slow
def test_size_limit_holds_for_every_read(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    (root / "big.txt").write_text("x==1\n" * 40_000)  # 200 kB
    (root / "requirements.txt").write_text("-r big.txt\nflask\n")
    (root / "catalog-info.yaml").write_text(ENTITY.format(name="c") + "#" * 300_000 + "\n")
    result = build(root, max_file_bytes=100_000)
    [big] = [p for p in result.problems if p.file.endswith("catalog-info.yaml")]
    assert big.code == "file-too-large"
    [inc] = [p for p in result.problems if "big.txt" in p.message]
    assert "limit" in inc.message
    deps = {a.object for a in assertions(result)}
    assert deps == {"pkg:pypi/flask"}


def test_a_huge_sparse_file_is_refused_unread(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    for name in ("catalog-info.yaml", "requirements.txt", "other.json", ".gitignore"):
        with open(root / name, "wb") as fh:
            fh.truncate(8 << 30)  # 8 GiB of nothing: reading it would take minutes
    (root / "package.json").write_text('{"name": "ok"}')
    result = build(root)
    assert {p.file.rsplit("/", 1)[-1] for p in result.problems if p.code == "file-too-large"} \
        == {"catalog-info.yaml", "requirements.txt"}
    assert "pkg:npm/ok" in result.graph.nodes
    assert "bad-gitignore" in codes(result, ".gitignore")


def test_requirement_includes_that_fan_out_are_bounded(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    levels = 30  # each file includes the next one twice: 2**30 reads unbounded
    for i in range(levels):
        (root / f"r{i}.txt").write_text(f"-r r{i + 1}.txt\n-r r{i + 1}.txt\npkg{i}\n")
    (root / f"r{levels}.txt").write_text("leaf\n")
    (root / "requirements.txt").write_text("-r r0.txt\n")
    result = build(root)
    assert "pkg:pypi/leaf" in {a.object for a in assertions(result)}
    assert any("includes" in p.message for p in result.problems)


# -- caps on records, literals, IDs, problems --------------------------------------------------
@pytest.mark.slow
def test_record_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "MAX_RECORDS", 500)
    monkeypatch.setattr(assemble, "MAX_RECORDS", 500)
    root = tmp_path / "repo"
    structured_sources(root, 2000)
    (root / "cat").mkdir()
    (root / "cat" / "catalog-info.yaml").write_text(
        ENTITY.format(name="big") + "  dependsOn: [" + ", ".join(
            f"component:d{i}" for i in range(2000)) + "]\n")
    (root / "many").mkdir()
    (root / "many" / "entities.yaml").write_text("".join(
        "---\n" + ENTITY.format(name=f"e{i}") for i in range(800)))
    result = build(root)
    capped = {p.file.rsplit("/", 1)[-1] for p in result.problems if p.code == "too-many-records"}
    assert "entities.yaml" in capped
    assert {"package.json", "bom.json", "pyproject.toml", "requirements.txt", "go.mod",
            "compose.yaml", "catalog-info.yaml"} <= capped
    per_doc = {}
    for a in assertions(result):
        per_doc[a.source] = per_doc.get(a.source, 0) + 1
    assert max(per_doc.values()) <= 500


def test_long_literals_are_cut_and_long_ids_left_out(tmp_path):
    root = tmp_path / "repo"
    (root / "cat").mkdir(parents=True)
    (root / "cat" / "catalog-info.yaml").write_text(
        ENTITY.format(name="svc").replace("metadata:\n", "metadata:\n  description: "
                                          + "d" * (4 << 20) + "\n"))
    long_ref = "r" * 5000
    (root / "sbom").mkdir()
    (root / "sbom" / "bom.json").write_text(json.dumps(
        {"bomFormat": "CycloneDX", "components": [{"name": "ok", "bom-ref": "ok"},
                                                  {"name": "long", "bom-ref": long_ref}],
         "dependencies": [{"ref": "ok", "dependsOn": [long_ref]}]}))
    result = build(root, validate=True)
    [description] = result.graph.nodes["component:default/svc"].attributes["description"]
    assert len(description) == MAX_LITERAL_CHARS and description.endswith(CUT)
    assert "literal-too-long" in codes(result, "catalog-info.yaml")
    assert "id-too-long" in codes(result, "bom.json")
    assert not any(len(n) > 2048 for n in result.graph.nodes)
    assert result.validation is not None  # SHACL ran over the cut graph


def test_problem_flood_is_summarised(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "requirements.txt").write_text("not a requirement!!\n" * 5000)
    result = build(root)
    mine = [p for p in result.problems if p.file.endswith("requirements.txt")]
    assert len(mine) == 1001 and mine[-1].code == "too-many-problems"
    assert "4,000 more" in mine[-1].message


def test_aliases_of_a_long_value_in_messages_stay_short(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    big = "v" * 60_000
    (root / "compose.yaml").write_text(
        f"x: &big {{k: {big}}}\nservices:\n  web:\n    image: a\n    depends_on: ["
        + ", ".join(["*big"] * 2000) + "]\n")
    result = build(root)
    check_bounded(result, 200_000)
    assert sum(len(p.message) for p in result.problems) < 2_000_000


@pytest.mark.parametrize("text,name", [
    ("apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: " + "1" * 5000 + "\n",
     "catalog-info.yaml"),
    ('{"name": "x", "version": ' + "9" * 5000 + "}", "package.json"),
    ("[project]\nname = \"x\"\nversion = " + "9" * 5000 + "\n", "pyproject.toml"),
    ("services:\n  a:\n    image: !!int " + "9" * 5000 + "\n", "compose.yaml"),
    ("apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: c\n"
     "  description: 2024-13-45\nspec: {type: service, lifecycle: p, owner: t}\n", "catalog-info.yaml"),
])
def test_numbers_python_cannot_hold_are_no_traceback(tmp_path, text, name):
    root = tmp_path / "repo"
    root.mkdir()
    (root / name).write_text(text)
    result = build(root)  # raises nothing
    assert all(p.line is None or p.line >= 1 for p in result.problems)


def test_yaml_with_too_many_values_is_refused_before_it_is_built(tmp_path, monkeypatch):
    from kgbuild.io import yamlfile
    monkeypatch.setattr(yamlfile, "COUNT_FIRST_CHARS", 1000)
    text = "a: [" + ", ".join(["x"] * 5000) + "]\n"
    with pytest.raises(InputError, match="more than 1,000 values"):
        load_yaml(text, "t.yaml", max_nodes=1000)


# -- line numbers as the formats count them ----------------------------------------------------
@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85"])
def test_yaml_lines_ignore_unicode_breaks(tmp_path, brk):
    root = tmp_path / "cat"
    root.mkdir()
    text = ENTITY.format(name="svc").replace(
        "metadata:\n", f"metadata:\n  description: \"one{brk}two{brk}three\"\n") \
        + "  dependsOn: [component:a, component:b]\n"
    (root / "catalog-info.yaml").write_text(text)
    result = build(root)
    want = text[:text.index("dependsOn")].count("\n") + 1
    dep = [a for a in assertions(result) if a.predicate == "dependsOn"]
    assert {a.line for a in dep} == {want} and {a.evidence for a in dep} == {"component:a", "component:b"}
    [owner] = [a for a in assertions(result) if a.predicate == "ownedBy"]
    assert owner.line == want - 1 and owner.evidence == "owner: team-a"


@pytest.mark.parametrize("brk", ODD_BREAKS)
def test_line_formats_count_newlines_only(tmp_path, brk):
    root = tmp_path / "repo"
    (root / ".github").mkdir(parents=True)
    (root / "requirements.txt").write_text(f"# one{brk}two\nflask\n")
    (root / "go.mod").write_text(f"// c{brk}d\nmodule example.com/m\nrequire example.com/x v1.0.0\n")
    (root / "pyproject.toml").write_text(f"# c{brk if brk in ODD_BREAKS[:3] else ''}d\n"
                                         "[project]\nname = \"p\"\ndependencies = [\"attrs\"]\n")
    (root / ".github" / "CODEOWNERS").write_text(f"# x{brk}y\n* @org/team\n")
    lines = {a.extractor + ":" + a.predicate: a.line for a in assertions(build(root))}
    assert lines["requirements:dependsOn"] == 2
    assert lines["gomod:dependsOn"] == 3
    assert lines["pyproject:dependsOn"] == 4
    assert lines["gomod:ownedBy"] == 2  # the CODEOWNERS rule's line


def test_json_lines_ignore_unicode_breaks(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "package.json").write_text('{"name": "p", "description": "a\u2028b\u2029c\x85d",\n'
                                       '"dependencies": {\n"left-pad": "1"}}', encoding="utf-8")
    [a] = [a for a in assertions(build(root)) if a.predicate == "dependsOn"]
    assert a.line == 3


def test_split_lines_breaks_at_newline_only():
    text = "a\u2028b\x0cc\r\nd\re\n"
    assert split_lines(text) == ["a\u2028b\x0cc", "d\re"]
    assert len(split_lines(text)) == text.count("\n")


def test_a_yaml_character_error_is_located():
    with pytest.raises(InputError) as info:
        load_yaml("a: 1\nb: \x0c\n", "t.yaml")
    assert info.value.line == 2 and "U+000C" in info.value.message


# -- encodings and the catalog marker ----------------------------------------------------------
@pytest.mark.parametrize("codec,bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                                       ("utf-32-le", b"\xff\xfe\x00\x00"), ("utf-8", b"\xef\xbb\xbf"),
                                       ("utf-16-le", b""), ("utf-16-be", b""), ("utf-32-be", b"")])
@pytest.mark.parametrize("name", ["catalog-info.yaml", "component.yaml"])
def test_catalogs_in_other_unicode_encodings_are_read(tmp_path, codec, bom, name):
    root = tmp_path / "cat"
    root.mkdir()
    text = ENTITY.format(name="wide") + "  dependsOn: [component:x, component:y]\n"
    (root / name).write_bytes(bom + text.encode(codec))
    result = build(root)
    assert "component:default/wide" in result.graph.nodes, result.problems
    lines = {a.object: a.line for a in assertions(result)}
    assert lines["component:default/y"] == 9


def test_utf16_manifests_of_other_formats(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "package.json").write_bytes(b"\xff\xfe" + json.dumps(
        {"name": "p", "dependencies": {"left-pad": "1"}}).encode("utf-16-le"))
    (root / "bom.cdx.json").write_bytes(json.dumps(
        {"bomFormat": "CycloneDX", "components": [{"name": "c", "bom-ref": "c"}]}).encode("utf-32"))
    result = build(root)
    assert ("pkg:npm/p", "dependsOn", "pkg:npm/left-pad") in result.graph.edges()
    assert any(n.endswith("#c") for n in result.graph.nodes)


def test_bad_utf16_is_reported_with_its_line():
    data = b"\xff\xfe" + "a: 1\nb: ".encode("utf-16-le") + b"\x00\xd8" + "x\n".encode("utf-16-le")
    with pytest.raises(InputError, match="not valid UTF-16") as info:
        decode_text(data, "t.yaml")
    assert info.value.line == 2


def test_marker_after_the_head_is_still_recognised(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    comment = "".join(f"# a long licence header, line {i}\n" for i in range(HEAD_BYTES // 30 + 10))
    assert len(comment) > HEAD_BYTES
    for name in ("catalog-info.yaml", "service.yaml"):
        (root / name).write_text(comment + ENTITY.format(name=name.split(".")[0]))
    assert extractor_for(root / "service.yaml").name == "backstage"
    nodes = build(root).graph.nodes
    assert {"component:default/catalog-info", "component:default/service"} <= set(nodes)


def test_catalog_info_is_claimed_by_name_and_rejected_loudly(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    (root / "catalog-info.yaml").write_text("just: some yaml\n")
    result = build(root)
    assert "rejected-entity" in codes(result, "catalog-info.yaml")  # never silently skipped


# -- no input makes an extractor raise ---------------------------------------------------------
FORMATS = ["catalog-info.yaml", "package.json", "bom.json", "pyproject.toml", "requirements.txt",
           "go.mod", "compose.yaml", "openapi.yaml", "CODEOWNERS"]
pieces = st.sampled_from(["{", "}", "[", "]", ":", ",", "- ", "\n", "  ", '"', "'", "\\", "#",
                          "-r ", "&a ", "*a", "<<: ", "!!int ", "1" * 5000, "\u2028", "\x0c",
                          "\ud800", "\x00", "\xff", "backstage.io/v1alpha1", "kind: ", "spec",
                          "dependsOn", "component:x", "require ", "module ", "=", "@team"])
contents = st.one_of(st.lists(pieces, max_size=40).map("".join),
                     st.binary(max_size=300).map(lambda b: b.decode("latin-1")))


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FORMATS), text=contents)
def test_no_input_raises(tmp_path_factory, name, text):
    root = tmp_path_factory.mktemp("fuzz") / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    result = build(root)
    check_bounded(result, len(text) + 1)
