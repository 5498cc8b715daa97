"""Allocator settings for a long streamed replay: memory that is freed goes back to the OS.

A streamed day replay allocates and frees large NumPy arrays all day, such as a day-block of
contention paths, a job's draws and a flush's columns. It also builds Parquet row groups. Two
allocators keep freed memory resident by default:

- glibc's ``malloc`` raises its mmap threshold (dynamically, up to 32 MiB on 64-bit) after
  a large block is freed. Later arrays of that size then come from the heap, and the holes
  they leave are seldom returned. :func:`lean_allocators` pins the threshold at 128 KiB,
  glibc's own initial value (``mallopt(M_MMAP_THRESHOLD)``), so every array of that size or
  more is mapped and unmapped on its own.
- Arrow's default pool (mimalloc in the PyPI wheels) keeps the segments it has used.
  ``ARROW_DEFAULT_MEMORY_POOL=system`` makes Arrow use ``malloc``. Arrow reads that variable
  once, when ``pyarrow`` is first imported, so it is set only when pyarrow is not imported yet.

Measured on the FB-2009 day (600 x 2 slots, LATE, streamed; 2026-11-24, three runs each,
interleaved; ``bench/bench_sim.py`` part 2 prints the same pair): peak RSS 339-340 MB
without the settings and 314-315 MB with them; CPU 24.1-27.1 s without and 26.3-27.5 s
with them (means 25.8 and 26.9 s: at most a few per cent, inside the run-to-run spread).
Each setting alone gave about half of the saving (a session's runs with environment
variables: 334-344 MB for glibc's, 328 MB for Arrow's). The results do not depend on them:
only where freed memory goes changes (``tests/test_lean_memory.py`` compares the Parquet
files of a run with and without them).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["MMAP_THRESHOLD", "lean_allocators"]

#: glibc's ``M_MMAP_THRESHOLD`` parameter number for ``mallopt`` (``malloc.h``).
_M_MMAP_THRESHOLD = -3
#: Allocations of this many bytes or more are mapped on their own (glibc's initial value).
MMAP_THRESHOLD = 128 * 1024


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``mallopt`` and ``gnu_get_libc_version``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None  # musl and others: no mallopt to call
    return libc


def lean_allocators() -> dict[str, bool]:
    """Make this process return freed memory to the OS, for one long streamed replay.

    Call it before the replay, and before ``pyarrow`` is imported, so that Arrow's pool is
    set too. ``straggler simulate --stream`` calls it. It changes allocators only, never a
    result. It affects the whole process, so a library that embeds the simulator decides
    for itself whether to call it.

    Returns
    -------
    dict
        ``{"malloc_mmap_threshold": bool, "arrow_system_pool": bool}``: whether each
        setting is in force. glibc's is not set on other C libraries. Arrow's is not set
        when pyarrow was already imported (unless ``ARROW_DEFAULT_MEMORY_POOL`` already
        said ``system``). A value the user gave ``ARROW_DEFAULT_MEMORY_POOL`` is kept.

    Examples
    --------
    >>> import sim_bridge
    >>> done = sim_bridge.lean_allocators()
    >>> sorted(done)
    ['arrow_system_pool', 'malloc_mmap_threshold']
    """
    libc = _glibc()
    malloc_set = bool(libc is not None and libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1)
    if "pyarrow" not in sys.modules:
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    arrow_set = os.environ.get("ARROW_DEFAULT_MEMORY_POOL") == "system" and (
        "pyarrow" not in sys.modules or _arrow_pool_is_system()
    )
    return {"malloc_mmap_threshold": malloc_set, "arrow_system_pool": bool(arrow_set)}


def _arrow_pool_is_system() -> bool:
    """Whether the imported pyarrow's default pool is the system allocator."""
    import pyarrow as pa

    return bool(pa.default_memory_pool().backend_name == "system")
