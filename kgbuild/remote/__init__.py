"""Servers: push/pull to SPARQL 1.1 servers, Cypher export and property-graph push."""
