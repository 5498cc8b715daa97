"""FlowBench (real Pegasus/HTCondor workflow runs with injected throttling) as a trace.

``collect_flowbench(data_dir, out)`` reads ``parsed/<anomaly folder>/<workflow>-runNNNN.csv``
(gzip-compressed or plain), builds one row per executor job in the trace schema of
``sim_bridge.trace`` with causal counters at launch, and writes ``tasks.parquet``, ``jobs.parquet``
and ``summary.json`` as a simulated ``straggler collect`` does, so ``train``, ``evaluate``
and ``compare --model`` read it unchanged.

Mapping, and why
----------------
* **job** = one workflow run (``<anomaly folder>/<workflow>-runNNNN``): the unit whose
  completion a scheduler cares about, and the scope of FlowBench's straggler definition.
* **task** = a DAG node (the unnamed first column, ``node_id``); ``attempt`` = 0 (Pegasus
  retries are not in the parsed files).
* **node** = ``kickstart_hostname``, the HTCondor executor container (62 of them plus the
  submit host); the physical worker (``poseidon-worker-K`` / ``workerK``, the name before
  ``-container-``) is kept as ``worker`` for the concurrency counters.
* **phase** = the transformation (task type): the straggler stage (job, phase) then compares
  a job with the median of the same transformation in the same run, as FlowBench does.
* **workload** = ``<workflow>/<transformation>``. The grouped MTL shares weights within a
  node and within a workload; the counters-to-slowdown relation differs by task type (a
  CPU-bound ``individuals`` against an I/O-bound ``unzip``), so task type, not the 3
  workflows, is the workload; the (executor x task type) grid is then the (node x workload)
  grid the model and Wrangler's per-pair SVMs need. Transformation names are prefixed with the
  workflow so equal names in two workflows stay apart.
* **launch/end** = ``execute_start``/``execute_end``; ``duration`` = their difference
  (``runtime`` upstream); ``submit_time`` = ``submit`` (HTCondor submission).
* **outcome** = ``failed`` when ``kickstart_status`` or ``kickstart_executables_exitcode`` is
  non-zero, else ``finished`` (the labeller then treats a failed job's run time as a lower
  bound). In the shared copy only 3 rows fail, all auxiliary.
* **auxiliary jobs**: rows with Pegasus ``type`` ``auxiliary`` (create-dir, cleanup,
  registration), ``transfer`` (stage-in/out), ``subwf`` (DAGMan) and the ``compute`` wrappers
  of sub-workflows (``kickstart_site`` ``local``) all ran on the submit host, never on an
  executor: they are not tasks, and they enter the counters only as ``c_running_local``
  (staging load on the submit host). Counts are in ``summary.json`` (``row_categories``).
* ``anomaly_folder`` and ``anomaly_type`` (``None`` on unaffected executors), ``workflow``,
  ``transformation`` and ``worker`` are extra columns; none starts with ``c_``, so training
  never reads them.

Counters at launch are built causally (:mod:`pipelines.flowbench._features`): from the jobs
that had finished on the same executor before the launch, and from what was running then.

Examples
--------
>>> from pipelines.flowbench import COUNTER_NAMES, FlowBenchFormatError
>>> len(COUNTER_NAMES), issubclass(FlowBenchFormatError, ValueError)
(19, True)
"""

from __future__ import annotations

from pipelines.flowbench._features import (
    COUNTER_NAMES,
    DEFAULT_HALFLIFE,
    DEFAULT_REF_WINDOW,
    causal_counters,
    executor_mask,
    reference_runtime,
    worker_of,
)
from pipelines.flowbench._read import (
    ANOMALY_FOLDERS,
    RAW_COLUMNS,
    FlowBenchFormatError,
    list_run_files,
    read_flowbench,
    read_run,
    resolve_parsed_dir,
)
from pipelines.flowbench._trace import (
    EXTRA_COLUMNS,
    build_trace,
    collect_flowbench,
    row_categories,
)

__all__ = [
    "ANOMALY_FOLDERS",
    "COUNTER_NAMES",
    "DEFAULT_HALFLIFE",
    "DEFAULT_REF_WINDOW",
    "EXTRA_COLUMNS",
    "RAW_COLUMNS",
    "FlowBenchFormatError",
    "build_trace",
    "causal_counters",
    "collect_flowbench",
    "executor_mask",
    "list_run_files",
    "read_flowbench",
    "read_run",
    "reference_runtime",
    "resolve_parsed_dir",
    "row_categories",
    "worker_of",
]
