"""The embedded store: one named graph per source document, incremental updates, export."""
