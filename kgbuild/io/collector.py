"""The cyclic garbage collector paused while millions of acyclic objects are made."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for the block (and restore it after, unless it was
    already off). Making many objects that form no cycles (unpickling or materialising a
    graph, building the resolver's index) otherwise triggers full collections that rescan
    them all: unpickling a 100k-edge graph was 5x slower, resolving 50k entities a fifth."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
