"""The process's resident memory and its high-water mark, read from ``/proc`` (Linux), for
the benchmarks that measure a transient or a peak within one process."""

from __future__ import annotations

import os
import re

__all__ = ["hwm_mb", "reset_hwm", "rss_mb"]

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    """The resident set now (MiB)."""
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * _PAGE / 2**20


def hwm_mb() -> float:
    """The resident set's high-water mark (``VmHWM``, MiB) since the start or the last
    :func:`reset_hwm`."""
    with open("/proc/self/status", "rb") as f:
        m = re.search(rb"VmHWM:\s+(\d+)", f.read())
    assert m is not None
    return int(m.group(1)) / 1024


def reset_hwm() -> None:
    """Reset the high-water mark to the resident set now (``/proc/self/clear_refs``)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
