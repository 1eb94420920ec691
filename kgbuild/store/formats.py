"""The formats ``kgbuild export`` writes (a module of its own: the CLI's options name them
without loading the store)."""

EXPORT_FORMATS = ("turtle", "nt", "jsonld", "trig", "nquads")
