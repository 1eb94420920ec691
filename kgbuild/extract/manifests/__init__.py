"""Source extractors; importing this package registers every one of them.

Registration order is claim order: extractors that sniff content come after those that
claim files by name.
"""

from ..registry import register
from . import (  # noqa: F401
    backstage,  # noqa: F401
    cargo,
    codeowners,
    compose,
    cyclonedx,
    cyclonedx_xml,
    gomod,
    gradle,
    helm,
    kubernetes,
    lockfiles,
    maven,
    npm,
    openapi,
    python,
    spdx,
    terraform,
)

register(openapi.ApiSpecExtractor())  # sniffs any JSON/YAML: tried last
