"""Scheduling policies as plug-ins: the interface, the registry and the built-in baselines.

Register a new policy with :func:`register_policy` (a class decorator); it then appears in
``straggler policies``, can be named in :func:`sim_bridge.simulate` and is covered by the
conformance test suite. See ``sim_bridge/POLICY_API.md``.
"""

import importlib as _importlib
import pkgutil as _pkgutil

from sim_bridge._task_list import task_works
from sim_bridge.policies._placement import FairPlacement, FIFOPlacement, iter_free_slots
from sim_bridge.policies._predictor import ConstantPredictor, PredictorPlacement, SlowdownOracle
from sim_bridge.policies._random_refusal import RandomRefusalPlacement
from sim_bridge.policies._registry import get_policy, list_policies, register_policy, registry
from sim_bridge.policies._speculation import (
    LATE,
    BackupTasks,
    HadoopSpeculator,
    Mantri,
    NoSpeculation,
    Spark4Speculation,
    SparkSpeculation,
)
from sim_bridge.policies.base import (
    Action,
    Kill,
    Launch,
    PlacementPolicy,
    Policy,
    PolicyError,
    SpeculationPolicy,
    Wake,
    check_fraction,
    check_positive,
)


def _import_plugins() -> None:
    """Import every other module of this package (sorted), so that a policy module dropped
    into ``sim_bridge/policies/`` registers itself without editing this file."""
    for info in sorted(_pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in {"base", "_registry", "_placement", "_speculation"}:
            continue
        _importlib.import_module(f"{__name__}.{info.name}")


_import_plugins()

__all__ = [
    "LATE",
    "Action",
    "BackupTasks",
    "ConstantPredictor",
    "FIFOPlacement",
    "FairPlacement",
    "HadoopSpeculator",
    "Kill",
    "Launch",
    "Mantri",
    "NoSpeculation",
    "PlacementPolicy",
    "PredictorPlacement",
    "Policy",
    "PolicyError",
    "RandomRefusalPlacement",
    "SlowdownOracle",
    "SparkSpeculation",
    "Spark4Speculation",
    "SpeculationPolicy",
    "Wake",
    "check_fraction",
    "check_positive",
    "task_works",
    "get_policy",
    "iter_free_slots",
    "list_policies",
    "register_policy",
    "registry",
]
