"""An embedded slot-based discrete-event cluster simulator, its policies and the bridge that
plugs a trained straggler predictor in as a placement policy.

Examples
--------
>>> import sim_bridge
>>> r = sim_bridge.simulate("SYN", "late", nodes=20, hours=0.25, seed=1)
>>> sorted(k for k in ("jobs", "p99_jct", "pocd", "events") if k in r.summary)
['events', 'jobs', 'p99_jct', 'pocd']
"""

from sim_bridge import policies, trace, world
from sim_bridge._cluster import COUNTER_NAMES, RESOURCES, Cluster
from sim_bridge._engine import Attempt, Job, SimulationStopped, SimView, Task
from sim_bridge._errors import DataFormatError, PolicyError
from sim_bridge._headroom import headroom_captured
from sim_bridge._lean_memory import lean_allocators
from sim_bridge._metrics import (
    SummaryAccumulator,
    label_stragglers,
    straggler_share,
    straggler_thresholds,
    summarize,
)
from sim_bridge._simulate import DEFAULT_PLACEMENT, SimulationResult, simulate
from sim_bridge._stationary import stationary_workload
from sim_bridge._trace_sink import TraceSink, trace_status
from sim_bridge._workloads import (
    WORKLOAD_NAMES,
    JobSpec,
    Workload,
    load_workload,
    resolve_data_dir,
)
from sim_bridge.policies import (
    ConstantPredictor,
    Kill,
    Launch,
    PlacementPolicy,
    PredictorPlacement,
    SlowdownOracle,
    SpeculationPolicy,
    Wake,
    get_policy,
    list_policies,
    register_policy,
)
from sim_bridge.trace import DEFAULT_BETA, PredictorProtocol, bind, node_name

__all__ = [
    "COUNTER_NAMES",
    "DEFAULT_BETA",
    "DEFAULT_PLACEMENT",
    "RESOURCES",
    "WORKLOAD_NAMES",
    "Attempt",
    "Cluster",
    "ConstantPredictor",
    "DataFormatError",
    "Job",
    "JobSpec",
    "Kill",
    "Launch",
    "PlacementPolicy",
    "PolicyError",
    "PredictorPlacement",
    "PredictorProtocol",
    "SimView",
    "SimulationResult",
    "SimulationStopped",
    "SlowdownOracle",
    "SpeculationPolicy",
    "SummaryAccumulator",
    "Task",
    "TraceSink",
    "Wake",
    "Workload",
    "bind",
    "get_policy",
    "headroom_captured",
    "label_stragglers",
    "lean_allocators",
    "list_policies",
    "load_workload",
    "node_name",
    "policies",
    "register_policy",
    "resolve_data_dir",
    "simulate",
    "stationary_workload",
    "straggler_share",
    "straggler_thresholds",
    "summarize",
    "trace",
    "trace_status",
    "world",
]
