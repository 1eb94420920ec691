"""Source extractors; importing this package registers every one of them.

Registration order is claim order: extractors that sniff content come after those that
claim files by name.
"""

from . import (  # noqa: F401
    backstage,  # noqa: F401
    codeowners,
    compose,
    cyclonedx,
    gomod,
    npm,
    openapi,  # noqa: F401  (sniffs any JSON/YAML: keep last)
    python,
)
