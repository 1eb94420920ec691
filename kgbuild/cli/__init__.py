"""The command-line interface: one module per command group, one error handler (``main``)."""

from . import build, resolve, schema, traverse, validate, verify  # noqa: F401  (register the commands)
from .main import main

__all__ = ["main"]
