"""The command-line interface: one module per command group, one error handler (``main``)."""

from . import build, extract, push, resolve, schema, serve, show, traverse, validate, verify  # noqa: F401
from .main import main

__all__ = ["main"]
