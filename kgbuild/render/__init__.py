"""Pictures of a graph: a traversal result or a neighbourhood as HTML (inline SVG) or SVG."""
