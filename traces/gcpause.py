"""A pause of Python's cyclic garbage collector while many long-lived objects are made: a trace read
or prepared (here), the command line's imports (`sim/cli.py`).

Reading a 10,000-turn trace makes ~70,000 content objects and preparing it as many blocks, all kept:
no garbage, no reference cycles. The collector still runs every 700 allocations and walks the
young objects, and now and then every object alive; that was ~40 % of reading and preparing
(issue 13). Reference counting frees everything as usual during the pause; only cycles wait for
the end of it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block; the collector's state is restored after it (a caller
    that had paused it keeps it paused)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
