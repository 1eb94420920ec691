"""The cyclic garbage collector paused while millions of acyclic objects are made."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused(promote: bool = False):
    """Pause the cyclic garbage collector for the block (and restore it after, unless it was
    already off). Making many objects that form no cycles (unpickling or materialising a
    graph, building the resolver's index) otherwise triggers full collections that rescan
    them all: unpickling a 100k-edge graph was 5x slower, resolving 50k entities a fifth.

    ``promote``: the objects are long-lived (an index, a batch's results): every tracked
    object goes to the oldest generation when the block ends (``gc.freeze``, then
    ``gc.unfreeze``; not when something is frozen already), instead of being scanned by a
    young and a middle collection on its way there (0.1-0.2 s for 50k resolutions)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if promote and not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        if was:
            gc.enable()
