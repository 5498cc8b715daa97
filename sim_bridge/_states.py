"""The states of tasks and attempts and the kinds of events (small ints, shared by the
engine's loop, its view and the attempt physics).

Examples
--------
>>> from sim_bridge._states import A_FINISHED, A_RUNNING, DONE, EV_CHECK
>>> (A_RUNNING, A_FINISHED, DONE, EV_CHECK)
(0, 1, 3, 4)
"""

from __future__ import annotations

__all__ = [
    "A_FINISHED",
    "A_KILLED",
    "A_RUNNING",
    "BLOCKED",
    "DONE",
    "EV_ARRIVAL",
    "EV_CHECK",
    "EV_FINISH",
    "EV_SOLVE",
    "EV_TICK",
    "EV_WAKE",
    "RUNNING",
    "WAITING",
]

# task states
BLOCKED, WAITING, RUNNING, DONE = 0, 1, 2, 3
# attempt states
A_RUNNING, A_FINISHED, A_KILLED = 0, 1, 2
# event kinds (also the tie order at equal times after seq: seq decides)
EV_ARRIVAL, EV_FINISH, EV_TICK, EV_WAKE = 0, 1, 2, 3
# a streaming run's checkpoint: an attempt whose work is not done by the end of the cluster's
# contention paths goes on with its solve when the clock reaches them (not an event of the
# model; the heap entry's object is the pair (attempt, Cluster.PastPaths))
EV_CHECK = 4
# a deferred end solve under co-located demand: due no later than the end
EV_SOLVE = 5
