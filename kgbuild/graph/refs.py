"""Backstage entity references: ``[kind:][namespace/]name``.

Same grammar and defaults as Backstage's ``parseEntityRef``: when a ``/`` comes before the
first ``:``, that colon is part of the name, not a kind separator; an empty kind, namespace
or name is an error; a missing namespace takes the *referencing entity's* namespace; a
missing kind takes the field's default kind, and is an error where the field has none.
Stable refs are lowercased: ``component:default/artist-web``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import RefError

DEFAULT_NAMESPACE = "default"

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[a-zA-Z][a-z0-9A-Z]*$")


@dataclass(frozen=True)
class EntityRef:
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        """The stable, lowercased form ``kind:namespace/name``."""
        return f"{self.kind}:{self.namespace}/{self.name}".lower()


def split_ref(ref: str) -> tuple[str | None, str | None, str]:
    """Split a ref string into (kind, namespace, name), any of the first two possibly None."""
    if not isinstance(ref, str):
        raise RefError(f"entity reference must be a string, got {type(ref).__name__}")
    colon = ref.find(":")
    slash = ref.find("/")
    if slash != -1 and slash < colon:
        colon = -1
    kind = ref[:colon] if colon != -1 else None
    namespace = ref[colon + 1:slash] if slash != -1 else None
    name = ref[max(colon + 1, slash + 1):]
    if kind == "" or namespace == "" or not name:
        raise RefError(f"entity reference {ref!r} is not of the form [<kind>:][<namespace>/]<name>")
    return kind, namespace, name


def parse_ref(ref: str | dict, default_kind: str | None = None,
              default_namespace: str = DEFAULT_NAMESPACE) -> EntityRef:
    """Parse a ref string (or a ``{kind, namespace, name}`` mapping) with Backstage's defaults."""
    if isinstance(ref, dict):
        kind, namespace, name = ref.get("kind"), ref.get("namespace"), ref.get("name")
        if not isinstance(name, str) or not name:
            raise RefError(f"entity reference {ref!r} has no name")
    else:
        kind, namespace, name = split_ref(ref)
    kind = kind or default_kind
    if not kind:
        raise RefError(f"entity reference {ref!r} has no kind and the field has no default kind "
                       f"(write it as e.g. 'component:{name}')")
    return EntityRef(str(kind), str(namespace or default_namespace), str(name))


def is_valid_name(name: object) -> bool:
    """Backstage entity name: 1-63 chars of [A-Za-z0-9] separated by [-_.]."""
    return isinstance(name, str) and 1 <= len(name) <= 63 and bool(_NAME.match(name))


def is_valid_namespace(namespace: object) -> bool:
    """Backstage namespace: a DNS label (lowercase alphanumerics and '-', 1-63 chars)."""
    return isinstance(namespace, str) and 1 <= len(namespace) <= 63 and bool(_NAMESPACE.match(namespace))


def is_valid_kind(kind: object) -> bool:
    """Backstage kind: a letter followed by alphanumerics, 1-63 chars."""
    return isinstance(kind, str) and 1 <= len(kind) <= 63 and bool(_KIND.match(kind))
