"""``python -m kgbuild``: the CLI (as the ``kgbuild`` script)."""

from .cli import main

main()
