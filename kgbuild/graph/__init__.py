"""The graph model: nodes, assertions, source documents, their one RDF layout, IDs, access labels."""
