"""Entity resolution: name keys, the alias registry, the staged resolver, the review queue."""
