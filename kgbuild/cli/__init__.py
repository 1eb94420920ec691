"""The command-line interface: one module per command group, one error handler (``main``).
Command modules are imported when their command runs (see ``COMMANDS`` in :mod:`.main`)."""

from .main import main

__all__ = ["main"]
