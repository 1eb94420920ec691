"""Entity expansion in XML-based RDF files is bounded (kgbuild.io.xmlguard): the namespace
abbreviations ontology editors write still read; bombs, external and parameter entities are
refused with one located line, before any parser runs, by every command that reads a file."""

from __future__ import annotations

import resource

import pytest
from click.testing import CliRunner

from kgbuild.cli import main
from kgbuild.errors import InputError
from kgbuild.io import xmlguard
from kgbuild.io.rdffile import load_graph, read_quads
from kgbuild.schema.importer import import_ontology

RDF_OPEN = ('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#" '
            'xmlns:owl="http://www.w3.org/2002/07/owl#">\n')

# The header Protégé writes: entities as namespace abbreviations, used in attributes.
OWL_WITH_ENTITIES = """<?xml version="1.0"?>
<!-- written by an ontology editor -->
<!DOCTYPE rdf:RDF [
    <!ENTITY owl "http://www.w3.org/2002/07/owl#" >
    <!ENTITY rdfs "http://www.w3.org/2000/01/rdf-schema#" >
    <!ENTITY ex "http://example.org/shop#" >
]>
""" + RDF_OPEN + """
  <owl:Class rdf:about="&ex;Product"><rdfs:label>Product &amp; service</rdfs:label></owl:Class>
  <owl:Class rdf:about="&ex;Book"><rdfs:subClassOf rdf:resource="&ex;Product"/></owl:Class>
  <owl:ObjectProperty rdf:about="&ex;soldBy">
    <rdfs:domain rdf:resource="&ex;Product"/><rdfs:range rdf:resource="&owl;Thing"/>
  </owl:ObjectProperty>
</rdf:RDF>
"""


def laughs(levels: int = 10, fan: int = 10) -> str:
    """The classic bomb: each entity ten of the one before, the last used once (677 bytes
    make 10 GB)."""
    ents = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol%d;" % (i - 1)) * fan}">' for i in range(1, levels)]
    return ('<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n' + "\n".join(ents) + "\n]>\n" + RDF_OPEN
            + f'<rdf:Description rdf:about="http://x/a"><rdfs:comment>&lol{levels - 1};'
              "</rdfs:comment></rdf:Description>\n</rdf:RDF>\n")


def write(tmp_path, text: str, name: str = "g.rdf", encoding: str = "utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def refused(path) -> InputError:
    with pytest.raises(InputError) as info:
        load_graph(path)
    assert info.value.code == "xml-entities", info.value
    assert str(path) in str(info.value)
    return info.value


def test_entity_abbreviations_of_an_ontology_editor_read_as_their_iris(tmp_path):
    g = load_graph(write(tmp_path, OWL_WITH_ENTITIES, "shop.owl"))
    subjects = {str(s) for s in g.subjects()}
    assert subjects == {"http://example.org/shop#Product", "http://example.org/shop#Book",
                        "http://example.org/shop#soldBy"}
    assert "http://www.w3.org/2002/07/owl#Thing" in {str(o) for o in g.objects()}


def test_schema_import_reads_an_ontology_with_entities(tmp_path):
    draft = import_ontology(write(tmp_path, OWL_WITH_ENTITIES, "shop.owl"))
    assert {"Product", "Book"} <= set(draft.data["node_types"])


def test_billion_laughs_refused_quickly_without_expanding(tmp_path):
    path = write(tmp_path, laughs())
    assert path.stat().st_size < 2000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err = refused(path)
    assert "entity expansion would add" in err.message
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


def test_one_large_entity_used_many_times_is_refused_over_the_budget(tmp_path):
    big = "x" * 100_000
    body = "".join(f'<rdf:Description rdf:about="http://x/{i}"><rdfs:comment>&big;'
                   "</rdfs:comment></rdf:Description>\n" for i in range(200))
    text = (f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [ <!ENTITY big "{big}"> ]>\n' + RDF_OPEN
            + body + "</rdf:RDF>\n")
    refused(write(tmp_path, text))  # 20 MB of expansion from a 110 kB file


def test_many_uses_of_small_entities_within_the_budget_read(tmp_path):
    body = "".join(f'<rdf:Description rdf:about="&ex;n{i}"><rdfs:seeAlso rdf:resource="&ex;m{i}"/>'
                   "</rdf:Description>\n" for i in range(20_000))
    text = ('<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [ <!ENTITY ex "http://example.org/a/'
            'rather/long/namespace/for/testing#"> ]>\n' + RDF_OPEN + body + "</rdf:RDF>\n")
    assert len(load_graph(write(tmp_path, text))) == 20_000


def test_the_budget_is_the_larger_of_16_mib_and_the_file():
    assert xmlguard.budget(100) == 16 << 20
    assert xmlguard.budget(100 << 20) == 100 << 20


@pytest.mark.parametrize("doctype, what", [
    ('<!ENTITY % pe "x"> ', "parameter entity declaration"),
    ('<!ENTITY a "x"> %a; ', "parameter entity reference"),
    ('<!ENTITY ext SYSTEM "file:///etc/passwd"> ', "external entity"),
    ('<!ENTITY ext PUBLIC "-//x//y" "http://127.0.0.1:9/dtd"> ', "external entity"),
    ('<!ENTITY a "&b;"> <!ENTITY b "&a;"> ', "refers to itself"),
    ('<!ENTITY a "x&a;x"> ', "refers to itself"),
    ('<!ENTITY a "xx"> <!ATTLIST rdf:Description rdfs:x CDATA "&a;"> ', "attribute default"),
])
def test_entities_that_are_never_allowed(tmp_path, doctype, what):
    text = (f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [ {doctype}]>\n' + RDF_OPEN
            + '<rdf:Description rdf:about="http://x/a"/>\n</rdf:RDF>\n')
    err = refused(write(tmp_path, text))
    assert what in err.message and err.line == 2


def test_nesting_hidden_behind_character_references_is_counted(tmp_path):
    # '&#38;' is '&': the value is parsed again when used, so these entities still nest
    ents = ['<!ENTITY l0 "lol">'] + [f'<!ENTITY l{i} "{("&#38;l%d;" % (i - 1)) * 10}">'
                                     for i in range(1, 10)]
    text = ('<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [' + " ".join(ents) + "]>\n" + RDF_OPEN
            + '<rdf:Description rdf:about="http://x/a"><rdfs:comment>&l9;</rdfs:comment>'
              "</rdf:Description>\n</rdf:RDF>\n")
    refused(write(tmp_path, text))


def test_an_entity_declaration_outside_the_doctype_is_refused_with_its_line(tmp_path):
    text = ('<?xml version="1.0"?>\n' + RDF_OPEN + "<!-- x -->\n"
            '<!DOCTYPE x [ <!ENTITY a "b"> ]>\n</rdf:RDF>\n')
    err = refused(write(tmp_path, text))
    assert err.line == 4


def test_a_utf16_bomb_is_refused_too(tmp_path):
    refused(write(tmp_path, laughs().replace('version="1.0"', 'version="1.0" encoding="UTF-16"'),
                  encoding="utf-16"))


def test_references_split_across_read_chunks_are_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(xmlguard, "CHUNK", 4096)
    monkeypatch.setattr(xmlguard, "MIN_BUDGET", 50_000)
    body = "".join(f'<rdf:Description rdf:about="http://x/{i}"><rdfs:comment>&big;'
                   "</rdfs:comment></rdf:Description>\n" for i in range(60))
    text = (f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [ <!ENTITY big "{"y" * 1000}"> ]>\n'
            + RDF_OPEN + body + "</rdf:RDF>\n")
    refused(write(tmp_path, text))  # 60 kB of expansion over a 50 kB budget
    monkeypatch.setattr(xmlguard, "MIN_BUDGET", 70_000)
    assert len(load_graph(write(tmp_path, text))) == 60


def test_turtle_and_other_formats_are_not_checked_as_xml(tmp_path):
    path = write(tmp_path, '<http://x/a> <http://x/p> "<!ENTITY a \\"b\\">" .\n', "g.nt")
    assert read_quads(path, list) == {}


@pytest.mark.parametrize("command", [
    ["validate", "{f}"],
    ["ls", "--graph", "{f}"],
    ["stats", "--graph", "{f}"],
    ["traverse", "--graph", "{f}", "--seed", "x"],
    ["schema", "import", "{f}"],
    ["schema", "infer", "{f}"],
])
def test_every_command_refuses_the_bomb_in_one_line(tmp_path, command):
    path = write(tmp_path, laughs())
    r = CliRunner().invoke(main, [a.format(f=path) for a in command])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("[xml-entities]"), r.output
    assert str(path) in lines[0]
