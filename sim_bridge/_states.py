"""The states of tasks and attempts (small ints, shared by the engine and the view).

Examples
--------
>>> from sim_bridge._states import A_FINISHED, A_RUNNING, DONE
>>> (A_RUNNING, A_FINISHED, DONE)
(0, 1, 3)
"""

from __future__ import annotations

__all__ = ["A_FINISHED", "A_KILLED", "A_RUNNING", "BLOCKED", "DONE", "RUNNING", "WAITING"]

# task states
BLOCKED, WAITING, RUNNING, DONE = 0, 1, 2, 3
# attempt states
A_RUNNING, A_FINISHED, A_KILLED = 0, 1, 2
