"""Error types shared by every layer; each carries the file and line it is about."""

from __future__ import annotations

from dataclasses import dataclass


class KgbuildError(Exception):
    """Base error: a one-line message, optionally located at ``file:line``, with a short
    machine ``code`` (the CLI prints it in brackets after the message)."""

    code = "error"

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 code: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        if code:
            self.code = code

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        return f"{where}{self.message}"


class SchemaError(KgbuildError):
    """The schema file is malformed or inconsistent."""

    code = "schema"


class InputError(KgbuildError):
    """A source or graph file cannot be read or parsed."""

    code = "input"


@dataclass(frozen=True)
class Problem:
    """Something a user must know about an input: a located, one-line message."""

    severity: str  # "error" (input skipped) or "warning" (input kept)
    code: str  # short machine code, e.g. "yaml-syntax", "rejected-entity"
    message: str
    file: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.severity}: {self.message} [{self.code}]"

    def to_dict(self) -> dict:
        return {"severity": self.severity, "code": self.code, "message": self.message,
                "file": self.file, "line": self.line}
