"""The cyclic garbage collector paused for the length of a run (the one place it is done)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector inside the block, and restore its state after.

    A run allocates a few objects per job and task (specs, tables, the Python loop's
    job <-> task <-> attempt cycles): generational passes over them would cost time
    proportional to the heap again and again without freeing anything. An in-memory run
    keeps them all to its end; a streaming run breaks a finished job's cycles once its rows
    are read (:meth:`sim_bridge._jobs.Job.release`), so reference counting frees it
    without the collector.
    Nested use is safe: only the outermost block that found the collector enabled enables
    it again. Also a decorator (``@gc_paused()``).

    Examples
    --------
    >>> with gc_paused():
    ...     paused = not gc.isenabled()
    >>> paused, gc.isenabled()
    (True, True)
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
