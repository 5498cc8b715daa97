"""The engine's event heap: ``(time, seq, kind, obj)`` events, the earliest first.

:func:`new_event_heap` returns the compiled :class:`sim_bridge._heap_core.EventHeap` when
the extension was built, else :class:`PyEventHeap` (``heapq`` on tuples), its reference.
Both pop the events in the order of the tuples, so a run gives the same events with either.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable
from typing import Any, Protocol

try:  # built by setup.py; optional (no C compiler: heapq on a list)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._heap_core import EventHeap as _CEventHeap
except ImportError:  # pragma: no cover - an install without a C compiler
    _CEventHeap = None

__all__ = ["HEAP_IN_C", "EventQueue", "PyEventHeap", "new_event_heap"]

#: whether :func:`new_event_heap` returns the compiled heap (tests may turn it off)
HEAP_IN_C = _CEventHeap is not None


class EventQueue(Protocol):
    """What the engine calls on its event heap (both implementations)."""

    def push(self, t: float, seq: int, kind: int, obj: Any) -> None: ...

    def pop_next(self) -> tuple[float, int, int, Any]: ...

    def next_time(self) -> float: ...

    def pop_live(self, before: float, limited: bool) -> tuple[float, int, int, Any] | None: ...

    def replace_objects(self, fn: Callable[[int, Any], Any]) -> int: ...

    def __len__(self) -> int: ...


class PyEventHeap(list):
    """``heapq`` on a list of ``(time, seq, kind, obj)`` tuples, with the compiled heap's
    methods (the reference of :class:`sim_bridge._heap_core.EventHeap`).

    Examples
    --------
    >>> h = PyEventHeap()
    >>> h.push(2.0, 1, 3, "b"); h.push(1.0, 2, 3, "a")
    >>> len(h), h.next_time(), h.pop_next(), len(h)
    (2, 1.0, (1.0, 2, 3, 'a'), 1)
    """

    __slots__ = ()

    def push(self, t: float, seq: int, kind: int, obj: Any) -> None:
        """Add the event ``(t, seq, kind, obj)`` (``t`` stored as a float)."""
        heapq.heappush(self, (float(t), seq, kind, obj))

    def pop_next(self) -> tuple[float, int, int, Any]:
        """Remove and return the first event (IndexError if empty)."""
        return heapq.heappop(self)

    def next_time(self) -> float:
        """The first event's time (IndexError if empty)."""
        return self[0][0]

    def pop_live(self, before: float, limited: bool) -> tuple[float, int, int, Any] | None:
        """The first event, removed, or None when the heap is empty or (``limited``) an
        arrival at ``before`` goes first (``before <= next_time()``). The compiled heap's
        also passes over the entries the engine's loop would (``EventHeap.skip_stale``);
        this one hands every entry to the loop.

        Examples
        --------
        >>> h = PyEventHeap()
        >>> h.push(2.0, 1, 3, "b")
        >>> h.pop_live(2.0, True), h.pop_live(2.5, True), h.pop_live(0.0, False)
        (None, (2.0, 1, 3, 'b'), None)
        """
        if not self or (limited and before <= self[0][0]):
            return None
        return heapq.heappop(self)

    def replace_objects(self, fn: Callable[[int, Any], Any]) -> int:
        """Give each entry the object ``fn(kind, obj)`` returns for it (its order is its
        time, sequence number and kind, so the heap stays as it is); returns how many
        objects changed.

        Examples
        --------
        >>> h = PyEventHeap()
        >>> h.push(2.0, 1, 3, "b"); h.push(1.0, 2, 4, "a")
        >>> h.replace_objects(lambda kind, obj: obj.upper() if kind == 3 else obj)
        1
        >>> h.pop_next(), h.pop_next()
        ((1.0, 2, 4, 'a'), (2.0, 1, 3, 'B'))
        """
        changed = 0
        for i, (t, seq, kind, obj) in enumerate(self):
            new = fn(kind, obj)
            if new is not obj:
                self[i] = (t, seq, kind, new)
                changed += 1
        return changed


def new_event_heap() -> EventQueue:
    """An empty event heap: the compiled one when built (and :data:`HEAP_IN_C`), else a
    :class:`PyEventHeap`.

    Examples
    --------
    >>> h = new_event_heap()
    >>> h.push(5.0, 1, 6, None)
    >>> h.next_time(), len(h)
    (5.0, 1)
    """
    if HEAP_IN_C and _CEventHeap is not None:
        return _CEventHeap()
    return PyEventHeap()
