"""The command-line interface: one module per command group, one error handler (``main``)."""

from . import (  # noqa: F401
    build,
    extract,
    paths,
    push,
    query,
    resolve,
    schema,
    serve,
    show,
    traverse,
    validate,
    verify,
)
from .main import main

__all__ = ["main"]
