"""Self-inflicted contention: the tasks sharing a node load its resources.

Each running attempt adds its workload's demand to the node's resource levels, so its
co-tenants meet ``level + demand`` through the convex response
(:func:`~sim_bridge.world.contention_response`): placement can create interference (two
disk-bound tasks on one node) or avoid it. A task's demand follows its sensitivity profile
``a`` (the resources it needs are the ones it is sensitive to): ``load * a / max(a) / slots``
per resource, so a node whose every slot runs the same workload carries ``load`` on that
workload's dominant resource. An attempt does not slow itself: its nominal work already is
its run time alone on an idle node. When a node's tenants change, the engine re-solves the
end time of every attempt on it from the work each has done so far
(:meth:`sim_bridge.Cluster.end_with`).

``TENANT_LOAD = 0.5`` is an assumption, not a fit: MapReduce tasks of the FB era were mostly
I/O-bound with moderate use of their dominant resource (Zaharia et al., delay scheduling,
EuroSys'10, report disk and network as the bottlenecks of the FB cluster); no trace in
``../shared/data`` ties per-task demand to machine utilisation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TENANT_LOAD", "tenant_demand"]

#: the load a node full of one workload's tasks puts on that workload's dominant resource
TENANT_LOAD = 0.5


def tenant_demand(profile, slots: int, load: float = TENANT_LOAD) -> tuple[float, ...]:
    """The demand ``(cpu, mem, disk, net)`` one running attempt puts on its node.

    Examples
    --------
    >>> [round(v, 4) for v in tenant_demand((0.3, 0.1, 1.2, 0.2), slots=2)]
    [0.0625, 0.0208, 0.25, 0.0417]
    >>> tenant_demand((0, 0, 0, 0), slots=2)
    (0.0, 0.0, 0.0, 0.0)
    """
    a = np.asarray(profile, dtype=float)
    top = float(a.max()) if a.size else 0.0
    if top <= 0.0 or load == 0.0:
        return (0.0,) * len(a)
    return tuple(float(v) for v in load * a / top / slots)
