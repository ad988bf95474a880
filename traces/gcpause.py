"""A pause of Python's cyclic garbage collector while many long-lived objects are made: a trace read
or prepared (here), the command line's imports (`bench/cli/__init__.py`).

Reading a 10,000-turn trace makes ~70,000 content objects and preparing it as many blocks, all kept:
no garbage, no reference cycles. The collector still runs every 700 allocations and walks the
young objects, and now and then every object alive; that was ~40 % of reading and preparing
(issue 13). Reference counting frees everything as usual during the pause; only cycles wait for
the end of it.

Even one collection after the pause walks every object made in it (~0.07 CPU-s after reading that
trace, ~0.05 after preparing it: cache misses on ~300,000 objects). So the objects are moved out of
the young generations without a walk (`gc.freeze`, a list splice): back into the oldest generation
(`gc.unfreeze`), where only a full collection looks at them, or, in a process that keeps objects
frozen already (the `ctxbench` command freezes its imports: `bench/cli/__init__.py`; the sweep workers it
forks inherit them), frozen with them.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block, and no walk over what it made when it ends; the
    collector's state is restored after it (a caller that had paused it keeps it paused).

    In a process with frozen objects, a full collection first frees the cyclic garbage of earlier
    work (in a sweep's worker: its previous runs), which freezing would otherwise keep for good; it
    walks only what is not frozen yet."""
    if not gc.isenabled():
        yield
        return
    frozen = gc.get_freeze_count()
    if frozen:
        gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()  # every tracked object out of the young generations, without walking them
        if not frozen:
            gc.unfreeze()  # ...into the oldest one: nothing stays out of the collector's reach
        gc.enable()
