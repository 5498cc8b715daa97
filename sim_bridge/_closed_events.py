"""Heap entries of closed attempts let go of them: a streaming run's stale events hold
nothing.

An attempt's heap entries (its finish, a deferred solve, a check where its solve goes on)
stay in the heap after it closes, until the clock reaches their time. A straggler killed
when its copy won keeps its finish event for hours, and the event holds the attempt, its task
(so the drop queue cannot let the done task go, ``sim_bridge._task_list``) and, for a check,
the solve's :class:`~sim_bridge._cluster.PastPaths`. Every such entry is a no-op when popped:
the loop skips a finish or a check of an attempt that is not running, and
``AttemptPhysics._solve_deferred`` a deferred solve. :func:`release_closed` gives those
entries a stand-in, :data:`CLOSED`, with the fields those checks read, so they are no-ops
still; the entries keep their time, sequence number and kind, so the heap pops the same
events in the same order (an attempt closes for good: nothing sets a closed attempt running
again). ``Simulator._upkeep`` runs it over the heap every :data:`RELEASE_EVERY` upkeeps.

Examples
--------
>>> from sim_bridge._jobs import Attempt
>>> from sim_bridge._states import A_KILLED, EV_CHECK, EV_FINISH, EV_WAKE
>>> att = Attempt.__new__(Attempt)
>>> att.state = A_KILLED
>>> release_closed(EV_FINISH, att) is CLOSED, release_closed(EV_CHECK, (att, None))[0] is CLOSED
(True, True)
>>> release_closed(EV_WAKE, ("policy", att))[1] is att  # not an attempt's own event
True
"""

from __future__ import annotations

import math
from typing import Any

from sim_bridge._jobs import Attempt
from sim_bridge._states import A_KILLED, A_RUNNING, EV_CHECK, EV_FINISH, EV_SOLVE
from sim_bridge.world._attempts import _LOWER

__all__ = [
    "CLOSED",
    "RELEASE_CLOSED",
    "RELEASE_EVERY",
    "SKIP_STALE_IN_C",
    "pass_over_stale",
    "release_closed",
]

#: let a streaming run's stale heap entries of closed attempts go (off: they hold the attempts
#: until popped; the same trace, ``tests/test_closed_events.py``)
RELEASE_CLOSED = True
#: upkeeps (of 1,024 events each) between two passes over the heap: a pass over 800,000
#: entries took 0.25-0.27 s (2026-11-29, two replays beside it), so every 2**18 events it is
#: ~63 passes and ~17 s over an FB-2010 day, about 0.5% of its CPU with LATE
RELEASE_EVERY = 256
#: let the compiled heap pass over the entries the engine's loop would pass over
#: (:func:`pass_over_stale`); off, it hands each to the loop (the same events in the same
#: order, ``tests/test_pop_live.py``)
SKIP_STALE_IN_C = True


class _Closed:
    """The stand-in of a closed attempt in its stale heap entries: what the loop and
    ``_solve_deferred`` read of it says "not running, nothing pending"."""

    __slots__ = ()
    state = A_KILLED
    _solve = None
    _ckpt = None
    _end = math.nan

    def __repr__(self) -> str:
        return "<closed attempt>"


#: the one stand-in (a finish or deferred solve's object; a check's pair is ``(CLOSED, None)``)
CLOSED = _Closed()
_CLOSED_CHECK = (CLOSED, None)


def release_closed(kind: int, obj: Any) -> Any:
    """The object a heap entry of ``kind`` holding ``obj`` should hold: the stand-in when
    ``obj`` is a closed attempt's (a finish or deferred solve of an attempt not running, a
    check's ``(attempt, PastPaths)`` pair of one), else ``obj`` itself."""
    if kind == EV_FINISH or kind == EV_SOLVE:
        if isinstance(obj, Attempt) and obj.state != A_RUNNING:
            return CLOSED
    elif kind == EV_CHECK:
        if (
            type(obj) is tuple
            and len(obj) == 2
            and isinstance(obj[0], Attempt)
            and obj[0].state != A_RUNNING
        ):
            return _CLOSED_CHECK
    return obj


def pass_over_stale(heap: Any, speed: list[float]) -> bool:
    """Let the compiled event ``heap`` pass over, in its ``pop_live``, the entries the
    engine's loop would pass over: stale finishes, deferred solves of closed attempts (or of
    :data:`CLOSED`) and older deferrals' solves, which it re-queues at their due time with the
    nodes' ``speed`` (``AttemptPhysics._solve_deferred``). On Alibaba 2017's nodes of 176
    slots the loop popped 64 entries an event, 40 of them re-queues, each a round trip
    through Python. Returns whether the heap took it: False for the Python heap, which hands
    every entry to the loop, and with :data:`SKIP_STALE_IN_C` off.

    Examples
    --------
    >>> from sim_bridge._event_heap import PyEventHeap
    >>> pass_over_stale(PyEventHeap(), [1.0])
    False
    """
    skip = getattr(heap, "skip_stale", None)
    if skip is None or not SKIP_STALE_IN_C:
        return False
    return bool(skip(Attempt, CLOSED, speed, _LOWER, EV_SOLVE, EV_FINISH, A_RUNNING))
