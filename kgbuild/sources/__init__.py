"""Source extractors; importing this package registers every one of them."""

from . import backstage  # noqa: F401
