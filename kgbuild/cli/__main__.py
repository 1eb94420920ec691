"""``python -m kgbuild.cli``."""

from . import main

main()
