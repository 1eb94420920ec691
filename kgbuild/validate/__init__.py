"""Validation: SHACL (pyshacl) against the schema's shapes, with a grouped report."""
