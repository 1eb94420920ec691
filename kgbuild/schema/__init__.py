"""The schema part: the typed model, its YAML loader, and what derives from it."""
