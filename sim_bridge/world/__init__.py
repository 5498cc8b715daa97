"""The world model: the named causes of stragglers, each with its parameters and evidence.

The simulator's physics lives here, apart from the event loop (slots: :mod:`sim_bridge._cluster`):

- :func:`contention_response`: the convex, queueing-like response of a task's speed to a
  resource's load, and :func:`contention_load`: a task's load from the four responses, summed
  in a fixed order (``_response``);
- :class:`BadNodes`: persistently degraded nodes whose capacity drifts (``_bad_nodes``);
- :func:`input_skew`: lognormal data skew within a stage (``_skew``);
- :func:`residual_noise`: a small body and a rare heavy tail (``_noise``);
- :func:`tenant_demand`: self-inflicted contention, the load co-located tasks put on their
  node (``_interference``);
- :class:`PersistentLevels`: background contention whose persistence and between-machine
  variance are fitted on the Alibaba 2018 series (:func:`fit_persistence`,
  ``_persistence``).

- :func:`decay_loads`, :func:`noise_alpha`, :func:`sum_demand` and the engine's
  :class:`AttemptPhysics`: how long a launched attempt runs and the node load averages it
  moves (``_attempts``); :func:`share_demands`: co-tenants' demands of equal bits held as
  one tuple (``_shared_demands``).

Each module's docstring names the evidence behind its defaults; a cause switched off (share
or sigma 0) gives the old special case.
"""

from sim_bridge.world._attempts import (
    LOAD_TAUS,
    AttemptPhysics,
    decay_loads,
    noise_alpha,
    others_demand,
    others_demand_py,
    sum_demand,
)
from sim_bridge.world._bad_nodes import BAD_NODE_SHARE, BadNodes, degrade_levels
from sim_bridge.world._capacity_marks import CapacityParts
from sim_bridge.world._interference import TENANT_LOAD, tenant_demand
from sim_bridge.world._noise import (
    NOISE_BODY,
    NOISE_CAP,
    NOISE_TAIL_ALPHA,
    NOISE_TAIL_SHARE,
    noise_sf,
    residual_noise,
    residual_noise_one,
)
from sim_bridge.world._persistence import (
    DEFAULT_PERSISTENCE,
    PersistenceParams,
    PersistentLevels,
    autocorrelation,
    between_machine_share,
    fit_persistence,
)
from sim_bridge.world._response import RESPONSE_EPS, contention_load, contention_response
from sim_bridge.world._shared_demands import share_demands, share_demands_py
from sim_bridge.world._skew import SKEW_SIGMA, input_skew

__all__ = [
    "LOAD_TAUS",
    "AttemptPhysics",
    "decay_loads",
    "noise_alpha",
    "others_demand",
    "others_demand_py",
    "share_demands",
    "share_demands_py",
    "sum_demand",
    "BAD_NODE_SHARE",
    "CapacityParts",
    "DEFAULT_PERSISTENCE",
    "TENANT_LOAD",
    "PersistenceParams",
    "PersistentLevels",
    "autocorrelation",
    "between_machine_share",
    "fit_persistence",
    "tenant_demand",
    "NOISE_BODY",
    "NOISE_CAP",
    "NOISE_TAIL_ALPHA",
    "NOISE_TAIL_SHARE",
    "RESPONSE_EPS",
    "SKEW_SIGMA",
    "BadNodes",
    "contention_load",
    "contention_response",
    "degrade_levels",
    "input_skew",
    "noise_sf",
    "residual_noise",
    "residual_noise_one",
]
