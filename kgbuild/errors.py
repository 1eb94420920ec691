"""Error types shared by every layer; each carries the file and line it is about."""

from __future__ import annotations


class KgbuildError(Exception):
    """Base error: a one-line message, optionally located at ``file:line``."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        return f"{where}{self.message}"


class SchemaError(KgbuildError):
    """The schema file is malformed or inconsistent."""


class InputError(KgbuildError):
    """A source or graph file cannot be read or parsed."""
