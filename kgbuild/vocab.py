"""Every vocabulary IRI kgbuild's code names, as plain strings: the W3C and DCMI namespaces it
uses, kgbuild's own bases and graphs, and the few terms code compares or writes as text.

The bottom layer (beside :mod:`kgbuild.errors`): it imports nothing, so any part reads an IRI
here without loading rdflib; :mod:`kgbuild.schema.namespaces` makes its rdflib namespaces and
the prefix table from these strings.
"""

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
PROV = "http://www.w3.org/ns/prov#"
SH = "http://www.w3.org/ns/shacl#"
DCTERMS = "http://purl.org/dc/terms/"
SKOS = "http://www.w3.org/2004/02/skos/core#"

BASE = "https://kgbuild.dev/"  # everything kgbuild names lives under it
KG = BASE + "ns#"  # kgbuild's own classes and properties
ID_BASE = BASE + "id/"  # nodes, by ID
ASSERTION_BASE = BASE + "assertion/"
SOURCE_BASE = BASE + "source/"  # a source document, and its named graph in the store
PASSAGE_BASE = BASE + "passage/"
SCHEMA_BASE = BASE + "schema/"  # the namespace of an imported schema that names none
NODES_GRAPH = BASE + "graph/nodes"  # the store's resolved node types and labels
MANIFEST_GRAPH = BASE + "graph/manifest"  # the store's own bookkeeping

RDF_SUBJECT = RDF + "subject"
RDF_OBJECT = RDF + "object"
XSD_STRING = XSD + "string"
PROV_DERIVED_FROM = PROV + "wasDerivedFrom"
CATCH_ALL = RDFS + "Resource"  # a node type with this IRI types every otherwise untyped IRI
