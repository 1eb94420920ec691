"""File I/O every part shares: atomic writes, bounded text reading, safe YAML with line numbers."""
