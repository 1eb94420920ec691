"""Source extractors; importing this package registers every one of them.

Registration order is claim order: extractors that sniff content come after those that
claim files by name.
"""

from . import backstage  # noqa: F401
from . import codeowners, compose, cyclonedx, gomod, npm, python  # noqa: F401
from . import openapi  # noqa: F401  (sniffs any JSON/YAML: keep last)
