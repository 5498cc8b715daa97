"""The trace contract: what the simulator writes, training reads and a scheduler scores.

The loop simulate -> trace -> train -> predictor -> simulate closes through this module,
and only through it. It owns

- the columns of a trace and of a job table, with their dtypes (:data:`TASK_COLUMNS`,
  :data:`REQUIRED_COLUMNS`, :data:`JOB_COLUMNS`), node naming (:func:`node_name`) and the
  counter columns (:data:`COUNTER_PREFIX`);
- the one straggler rule (:func:`straggler_thresholds`) and its default factor
  (:data:`DEFAULT_BETA`);
- the one predictor protocol (:class:`PredictorProtocol`), which ``mtl.Predictor`` meets
  structurally (neither package imports the other);
- the one table builder (:func:`tasks_table`, :func:`jobs_table`), fed by column arrays, which
  both event loops call;
- :func:`bind`, which ties a predictor to the simulator's counter order and returns a fast,
  caching :class:`Scorer` (the one place where scores and readings are cached).

It imports NumPy and pandas only: nothing else of ``sim_bridge``, nothing of ``mtl``.

Examples
--------
>>> from sim_bridge import trace
>>> trace.node_name(7), trace.counter_column("cpu_user"), trace.DEFAULT_BETA
('n0007', 'c_cpu_user', 1.3)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from operator import itemgetter
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

__all__ = [
    "COUNTER_PREFIX",
    "DEFAULT_BETA",
    "DEFAULT_MIN_TASKS",
    "JOB_COLUMNS",
    "NODE_FORMAT",
    "OUTCOMES",
    "REQUIRED_COLUMNS",
    "TASK_COLUMNS",
    "PredictorProtocol",
    "Scorer",
    "bind",
    "check_beta",
    "counter_column",
    "counter_columns",
    "excluded_counts",
    "jobs_table",
    "node_index",
    "node_name",
    "node_names",
    "stage_codes",
    "straggler_thresholds",
    "task_ids",
    "tasks_table",
]

# ---------------------------------------------------------------------------- columns

#: The columns of a trace (one row per task attempt, in this order) and their dtypes (``str``:
#: pandas' string dtype, which pandas 3 infers for Python strings). After them: ``truth_*``
#: (float64, only when recorded) and the ``c_*`` counters (float64).
TASK_COLUMNS: dict[str, str] = {
    "job_id": "str",
    "task_id": "str",
    "attempt": "int64",
    "workload": "str",
    "node": "str",
    "phase": "str",
    "submit_time": "float64",
    "launch_time": "float64",
    "end_time": "float64",
    "duration": "float64",
    "outcome": "str",
    "input_work": "float64",
}

#: The columns every trace must have to be trained on, with the kind of value they hold
#: (``str``, ``int`` or ``float``): :data:`TASK_COLUMNS` without the simulator's extras.
REQUIRED_COLUMNS: dict[str, str] = {
    name: {"str": "str", "int64": "int", "float64": "float"}[dtype]
    for name, dtype in TASK_COLUMNS.items()
    if name != "input_work"
}

#: The columns of a job table (one row per job) and their dtypes.
JOB_COLUMNS: dict[str, str] = {
    "job_id": "str",
    "workload": "str",
    "submit_time": "float64",
    "finish_time": "float64",
    "jct": "float64",
    "deadline": "float64",
    "met_deadline": "bool",
    "n_tasks": "int64",
    "n_attempts": "int64",
}

#: What became of an attempt (the ``outcome`` column).
OUTCOMES: tuple[str, ...] = ("finished", "killed", "failed")

#: Prefix of the node counter columns (``c_cpu_user``, ...): a counter ``name`` of the
#: simulator is the trace column ``COUNTER_PREFIX + name``.
COUNTER_PREFIX = "c_"

#: How a trace names simulator node ``i``.
NODE_FORMAT = "n{:04d}"

_TRUTH_PREFIX = "truth_"
_DIGITS = re.compile(r"(\d+)$")


def node_name(node: int, node_format: str = NODE_FORMAT) -> str:
    """The trace's name of simulator node ``node``.

    Examples
    --------
    >>> node_name(7), node_name(7, "node-{}")
    ('n0007', 'node-7')
    """
    return node_format.format(int(node))


def node_names(n_nodes: int, node_format: str = NODE_FORMAT) -> np.ndarray:
    """The names of nodes ``0 .. n_nodes - 1`` (an object array, to index by node).

    Examples
    --------
    >>> node_names(3).tolist()
    ['n0000', 'n0001', 'n0002']
    """
    return np.array([node_format.format(i) for i in range(int(n_nodes))], dtype=object)


def node_index(node: Hashable) -> int:
    """The simulator index of a node id (an integer, or a name ending in digits).

    Examples
    --------
    >>> node_index("n0042"), node_index(3)
    (42, 3)
    """
    if isinstance(node, (int, np.integer)):
        return int(node)
    m = _DIGITS.search(str(node))
    if m is None:
        raise ValueError(f"cannot read a node index from node id {node!r}")
    return int(m.group(1))


def counter_column(name: str) -> str:
    """The trace column of simulator counter ``name``.

    Examples
    --------
    >>> counter_column("load1")
    'c_load1'
    """
    return COUNTER_PREFIX + name


def counter_columns(frame: pd.DataFrame) -> list[str]:
    """The counter columns (``c_*``) of a table, in table order.

    Examples
    --------
    >>> counter_columns(pd.DataFrame(columns=["node", "c_cpu", "c_mem", "duration"]))
    ['c_cpu', 'c_mem']
    """
    return [c for c in frame.columns if isinstance(c, str) and c.startswith(COUNTER_PREFIX)]


# ---------------------------------------------------------------------------- the table builder


def task_ids(job_ids: Sequence[str], phases: Sequence[str], index: Sequence[int]) -> list[str]:
    """Task ids ``<job>-<first letter of the phase><index within the stage>``.

    Examples
    --------
    >>> task_ids(["j", "j"], ["map", "reduce"], [3, 0])
    ['j-m3', 'j-r0']
    """
    return [f"{j}-{p[0]}{i}" for j, p, i in zip(job_ids, phases, index, strict=True)]


def tasks_table(
    *,
    job_id: Any,
    task_id: Any,
    attempt: Any,
    workload: Any,
    node: Any,
    phase: Any,
    submit_time: Any,
    launch_time: Any,
    end_time: Any,
    outcome: Any,
    input_work: Any,
    node_names: np.ndarray | None = None,
    truth: Mapping[str, Any] | None = None,
    counters: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """A trace (:data:`TASK_COLUMNS`, then ``truth_*``, then ``c_*``) from column arrays.

    Both event loops build their trace here; ``duration`` is ``end_time - launch_time``.

    Parameters
    ----------
    job_id, task_id, workload, phase, outcome : array-like of str
    attempt : array-like of int
    node : array-like of int, or of str
        Node indices (mapped through ``node_names``, default :func:`node_names`) or names.
    submit_time, launch_time, end_time, input_work : array-like of float
    node_names : ndarray, optional
        The name of each node index (built when ``node`` holds indices and it is None).
    truth : mapping of str to array, optional
        Hidden truth columns, written as ``truth_<key>`` in the mapping's order.
    counters : mapping of str to array, optional
        Counter columns by simulator name, written as ``c_<name>`` in the mapping's order.

    Examples
    --------
    >>> t = tasks_table(job_id=["j"], task_id=["j-m0"], attempt=[0], workload=["SYN"],
    ...     node=[2], phase=["map"], submit_time=[0.0], launch_time=[1.0], end_time=[4.0],
    ...     outcome=["finished"], input_work=[3.0], counters={"load1": [0.5]})
    >>> row = t.to_dict("records")[0]
    >>> row["node"], row["duration"], row["c_load1"]
    ('n0002', 3.0, 0.5)
    >>> list(t.columns) == [*TASK_COLUMNS, "c_load1"], t["attempt"].dtype
    (True, dtype('int64'))
    """
    launch = np.asarray(launch_time, dtype=np.float64)
    end = np.asarray(end_time, dtype=np.float64)
    node_arr = np.asarray(node)
    if node_arr.dtype.kind in "iu":
        if node_names is None:
            node_names = globals()["node_names"](int(node_arr.max()) + 1 if node_arr.size else 0)
        node_col = node_names[node_arr] if node_arr.size else np.empty(0, dtype=object)
    else:
        node_col = node_arr.astype(object)
    cols: dict[str, Any] = {
        "job_id": _objects(job_id),
        "task_id": _objects(task_id),
        "attempt": np.asarray(attempt, dtype=np.int64),
        "workload": _objects(workload),
        "node": node_col,
        "phase": _objects(phase),
        "submit_time": np.asarray(submit_time, dtype=np.float64),
        "launch_time": launch,
        "end_time": end,
        "duration": end - launch,
        "outcome": _objects(outcome),
        "input_work": np.asarray(input_work, dtype=np.float64),
    }
    for key, values in (truth or {}).items():
        cols[_TRUTH_PREFIX + key] = np.asarray(values, dtype=np.float64)
    for key, values in (counters or {}).items():
        cols[counter_column(key)] = np.asarray(values, dtype=np.float64)
    return pd.DataFrame(cols)


def jobs_table(
    *,
    job_id: Any,
    workload: Any,
    submit_time: Any,
    finish_time: Any,
    deadline: Any,
    n_tasks: Any,
    n_attempts: Any,
) -> pd.DataFrame:
    """A job table (:data:`JOB_COLUMNS`) from column arrays; ``jct`` is ``finish - submit``
    and ``met_deadline`` ``finish <= deadline``.

    Examples
    --------
    >>> j = jobs_table(job_id=["a"], workload=["SYN"], submit_time=[1.0], finish_time=[5.0],
    ...     deadline=[4.0], n_tasks=[2], n_attempts=[3])
    >>> row = j.to_dict("records")[0]
    >>> row["jct"], row["met_deadline"]
    (4.0, False)
    """
    submit = np.asarray(submit_time, dtype=np.float64)
    finish = np.asarray(finish_time, dtype=np.float64)
    deadline = np.asarray(deadline, dtype=np.float64)
    return pd.DataFrame(
        {
            "job_id": _objects(job_id),
            "workload": _objects(workload),
            "submit_time": submit,
            "finish_time": finish,
            "jct": finish - submit,
            "deadline": deadline,
            "met_deadline": finish <= deadline,
            "n_tasks": np.asarray(n_tasks, dtype=np.int64),
            "n_attempts": np.asarray(n_attempts, dtype=np.int64),
        }
    )


def _objects(values: Any) -> np.ndarray:
    """``values`` as an object array (strings stay Python strings)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    out = np.empty(len(values), dtype=object)
    out[:] = list(values) if not isinstance(values, np.ndarray) else values
    return out


# ---------------------------------------------------------------------------- the straggler rule

#: Default straggler factor. Wrangler (Yadwadkar, Ananthanarayanan and Katz, SoCC 2014)
#: labels a task a straggler when it runs longer than ``beta`` times the median task of its
#: job, with ``beta = 1.3``; we compare within the stage (maps with maps, reduces with
#: reduces), as Mantri (OSDI 2010) and LATE (OSDI 2008) compare like with like.
DEFAULT_BETA = 1.3

#: Default minimum number of finished original attempts a stage needs for its median (with
#: one task the median is the task itself, with two it is their mean).
DEFAULT_MIN_TASKS = 3


def check_beta(beta: Any, *, for_training: bool = False) -> float:
    """Validate a straggler factor and return it as a float.

    The rule is defined for any ``beta > 0`` (a simulation's summary may report the share at
    any factor); labels to *train* on need a finite ``beta > 1`` (at or below 1 about half of
    every stage would be "stragglers").

    Examples
    --------
    >>> check_beta(1.3), check_beta(0.5)
    (1.3, 0.5)
    >>> check_beta(0.9, for_training=True)
    Traceback (most recent call last):
    ...
    ValueError: parameter beta must be a finite number > 1, got 0.9
    """
    ok_type = isinstance(beta, (int, float, np.integer, np.floating)) and not isinstance(
        beta, (bool, np.bool_)
    )
    if for_training:
        if not (ok_type and math.isfinite(beta) and beta > 1):
            raise ValueError(f"parameter beta must be a finite number > 1, got {beta!r}")
    elif not (ok_type and beta > 0):
        raise ValueError(f"parameter beta must be > 0, got {beta!r}")
    return float(beta)


def stage_codes(job_id: Any, stage: Any) -> np.ndarray:
    """One integer per row naming its (job, stage) group (``stage=None``: the job alone).

    Examples
    --------
    >>> stage_codes(["a", "a", "b", "a"], ["map", "reduce", "map", "map"]).tolist()
    [0, 1, 2, 0]
    >>> stage_codes(["a", "a", "b"], None).tolist()
    [0, 0, 1]
    """
    jobs, _ = pd.factorize(np.asarray(job_id, dtype=object))
    if stage is None:
        return jobs
    stages, names = pd.factorize(np.asarray(stage, dtype=object))
    if len(stages) != len(jobs):
        raise ValueError(f"stage has {len(stages)} entries, job_id has {len(jobs)}")
    codes, _ = pd.factorize(jobs.astype(np.int64) * max(len(names), 1) + stages)
    return codes


def straggler_thresholds(
    job_id: Any,
    attempt: Any,
    outcome: Any,
    duration: Any,
    beta: float = DEFAULT_BETA,
    min_tasks: int = DEFAULT_MIN_TASKS,
    *,
    stage: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: its stage's median original run time and the straggler label (the one rule).

    Attempts are compared with the other attempts of the same stage of the same job (maps
    against maps, reduces against reduces, as Mantri and LATE compare like with like): the
    group of a row is its ``(job_id, stage)`` pair, or its job when ``stage`` is None (one
    stage per job). The median of a group is taken over its *finished* original attempts (a
    killed original's run time is censored: it stopped early) and exists when there are at
    least ``min_tasks`` of them. An original attempt is a straggler when its run time exceeds
    ``beta`` x that median: a finished one is labelled 1.0 or 0.0; a killed one is labelled
    1.0 when it had already run past the threshold, and is censored (NaN) otherwise. Copies,
    and originals of stages without a median, get NaN. ``sim_bridge.label_stragglers``,
    ``sim_bridge.summarize`` and ``pipelines.label_stragglers`` all use this function.

    Parameters
    ----------
    job_id, attempt, duration : array-like, one entry per attempt
    outcome : array-like or None
        ``"finished"``/``"killed"`` per attempt (None: every attempt finished).
    beta : float
        Straggler factor, > 0 (:func:`check_beta`).
    min_tasks : int
    stage : array-like or None
        The stage of each attempt (a trace's ``phase``: ``map``/``reduce``/``task``); None:
        every job is one stage.

    Returns
    -------
    median, label : ndarray of float
        The median of the row's (job, stage) group and the label; NaN where undefined.

    Examples
    --------
    >>> med, lab = straggler_thresholds(["a"] * 5, [0, 0, 0, 0, 1], ["finished"] * 3
    ...     + ["killed", "finished"], [10.0, 10.0, 30.0, 2.0, 4.0], beta=1.3)
    >>> med.tolist(), lab.tolist()
    ([10.0, 10.0, 10.0, 10.0, 10.0], [0.0, 0.0, 1.0, nan, nan])

    Maps and reduces of one job have their own medians: the long reduces do not straggle
    against the short maps, and the job's two maps cannot define a median.

    >>> med, lab = straggler_thresholds(["a"] * 5, [0] * 5, None,
    ...     [2.0, 2.0, 40.0, 50.0, 90.0], stage=["map"] * 2 + ["reduce"] * 3)
    >>> med.tolist(), lab.tolist()
    ([nan, nan, 50.0, 50.0, 50.0], [nan, nan, 0.0, 0.0, 1.0])
    """
    beta = check_beta(beta)
    dur = np.asarray(duration, dtype=float)
    orig = np.asarray(attempt) == 0
    fin = orig if outcome is None else orig & (np.asarray(outcome) == "finished")
    codes = stage_codes(job_id, stage)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    stats = pd.Series(dur[fin]).groupby(codes[fin]).agg(["median", "size"])
    group_median = np.full(n_groups, np.nan)
    ok = stats["size"].to_numpy() >= min_tasks
    group_median[stats.index.to_numpy()[ok]] = stats["median"].to_numpy()[ok]
    median = group_median[codes] if len(codes) else np.empty(0)
    above = dur > beta * median  # False where the median is NaN
    label = np.where(orig & ~np.isnan(median) & (fin | above), above.astype(float), np.nan)
    return median, label


def excluded_counts(job_id: Any, stage: Any, median: Any) -> tuple[int, int]:
    """``(jobs, stages)`` without a median: jobs none of whose stages has one, and stages.

    Examples
    --------
    >>> excluded_counts(["a", "a", "b"], ["map", "reduce", "map"], [1.0, np.nan, np.nan])
    (1, 2)
    """
    missing = pd.DataFrame(
        {"job": stage_codes(job_id, None), "stage": stage_codes(job_id, stage)}
    ).assign(missing=np.isnan(np.asarray(median, dtype=float)))
    by_stage = missing.groupby("stage")["missing"].all()
    by_job = missing.groupby("job")["missing"].all()
    return int(by_job.sum()), int(by_stage.sum())


# ---------------------------------------------------------------------------- the predictor


@runtime_checkable
class PredictorProtocol(Protocol):
    """What a scheduler needs from a straggler predictor (``mtl.Predictor`` has it).

    Node ids are the trace's (:func:`node_name`), counters go under the trace's column names
    (:func:`counter_column`), so a model trained on a collected trace scores the same
    features at decision time. Two optional methods are used when present (they are not
    part of the structural check):

    - ``straggler_probability_values(node, workload, values) -> float``: the counters as
      values in ``feature_names`` order (the fast path of a hot loop; it must equal
      ``straggler_probability`` on the same values);
    - ``bind_view(view)``: called once per run with the simulator's read-only view (an
      oracle that reads the clock or the running attempts).

    ``feature_names`` may be None: every counter of the simulator, in its order.
    ``threshold`` and ``feature_names`` are read-only members: a plain attribute of any
    subtype (``list[str]``) or a property satisfies them (as in ``mtl.PredictorProtocol``).

    Examples
    --------
    >>> class Half:
    ...     threshold, feature_names = 0.5, ["c_load1"]
    ...     def straggler_probability(self, node, workload, counters): return 0.5
    ...     def predict_proba(self, frame): return np.full(len(frame), 0.5)
    >>> isinstance(Half(), PredictorProtocol)
    True
    """

    @property
    def threshold(self) -> float:
        """Act on a prediction when the probability exceeds it."""
        ...

    @property
    def feature_names(self) -> Sequence[str]:
        """The counters the predictor reads (trace column names), in its order."""
        ...

    def straggler_probability(
        self, node: Hashable, workload: Hashable, counters: Mapping[str, float]
    ) -> float:
        """Probability that a task launched now on ``node`` for ``workload`` straggles."""
        ...

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        """Straggler probability per row of a frame with node, workload and counters."""
        ...


#: Counters a scheduler knows exactly at decision time (never a stale sample).
EXACT_COUNTERS = ("running_tasks", "free_slots")


def bind(predictor: Any, counter_order: Sequence[str], **options: Any) -> Scorer:
    """Tie ``predictor`` to a simulator whose node readings list ``counter_order``.

    Returns a :class:`Scorer` (``options`` are its keywords: ``prefix``, ``slots``,
    ``node_format``, ``batch_min``): the predictor's features picked from a reading by
    position (no mapping built on the fast path), the exactly known counters
    (:data:`EXACT_COUNTERS`) set, and scores cached per sample.

    Examples
    --------
    >>> class Load:
    ...     threshold, feature_names = 0.5, ["c_load1"]
    ...     def straggler_probability(self, node, workload, counters):
    ...         return min(1.0, counters["c_load1"] / 4)
    >>> s = bind(Load(), ["cpu_user", "load1"])
    >>> s.feature_names, s(0, "SYN", [0.3, 2.0])
    (['c_load1'], 0.5)
    """
    return Scorer(predictor, counter_order, **options)


def _identity(values):
    return values


class Scorer:
    """A predictor bound to a counter order (made by :func:`bind`).

    Parameters
    ----------
    predictor : PredictorProtocol
        ``straggler_probability`` is required; ``feature_names`` (None: every counter),
        ``predict_proba`` (batches) and ``straggler_probability_values`` (fast path) are used
        when present.
    counter_order : sequence of str
        The simulator's counter names (without ``prefix``), in reading order.
    prefix : str
        The trace's counter column prefix: a feature ``c_<name>`` reads counter ``<name>``
        (a feature named as a counter reads it too).
    slots : int
        Slots per node (``free_slots = slots - running``).
    node_format : str
        How node ids are named for the predictor (:func:`node_name`).
    batch_min : int
        Score this many uncached nodes or more in one ``predict_proba`` call.

    Call it as ``scorer(node, workload, reading, running=0)`` for one uncached probability
    (``node`` an index, ``reading`` the node's counter values in ``counter_order``); the
    placement's cached path is :meth:`score` / :meth:`scores`, fed by a ``read(node)``
    function and a sample key (:meth:`roll`): a node's reading is taken once per sample and a
    probability computed once per (sample, node, running, workload).

    Attributes
    ----------
    feature_names : list of str
        The predictor's features (trace column names), in its order.
    stats : dict of str to int
        ``scored``, ``calls``, ``batches`` (predictor work) and ``reads`` (readings taken);
        may be replaced by a caller's dict to count into it.
    owner : str
        Prefix of error messages (e.g. the placement policy's name).
    """

    def __init__(
        self,
        predictor: Any,
        counter_order: Sequence[str],
        *,
        prefix: str = COUNTER_PREFIX,
        slots: int = 1,
        node_format: str = NODE_FORMAT,
        batch_min: int = 8,
    ):
        if not callable(getattr(predictor, "straggler_probability", None)):
            raise ValueError(
                "parameter predictor needs a straggler_probability(node, workload, counters) "
                f"method, got {type(predictor).__name__}"
            )
        names = list(counter_order)
        have = set(names)
        declared = getattr(predictor, "feature_names", None)
        features = [prefix + n for n in names] if declared is None else list(declared)
        keys = []
        for f in features:
            if f in have:
                keys.append(names.index(f))
            elif f.startswith(prefix) and f[len(prefix) :] in have:
                keys.append(names.index(f[len(prefix) :]))
            else:
                raise ValueError(
                    f"the predictor's feature {f!r} is not a node counter of the simulator "
                    f"(counters are {prefix}<name> for <name> in {names[:6]}...)"
                )
        self.predictor = predictor
        self.feature_names = features
        self.slots = int(slots)
        self.batch_min = int(batch_min)
        self.node_ids = _NodeIds(node_format)
        # a reading (counter_order) -> the features' values (feature order), C-level
        if keys == list(range(len(names))):
            self._pick: Callable = _identity
        elif len(keys) == 1:
            k0 = keys[0]
            self._pick = lambda raw: (raw[k0],)
        elif keys:
            self._pick = itemgetter(*keys)
        else:
            self._pick = lambda raw: ()
        #: (position, True for running_tasks / False for free_slots) of the exact features
        self._exact = [
            (i, names[k] == "running_tasks")
            for i, k in enumerate(keys)
            if names[k] in EXACT_COUNTERS
        ]
        #: nothing to read: every feature is exactly known
        self.reads_nothing = len(self._exact) == len(keys)
        fast = getattr(predictor, "straggler_probability_values", None)
        self._fast = fast if callable(fast) and declared is not None and features else None
        batch = getattr(predictor, "predict_proba", None)
        self._batch = batch if callable(batch) else None
        self._slow = predictor.straggler_probability
        self.stats = dict.fromkeys(("scored", "calls", "batches", "reads"), 0)
        #: who asks (prefixes error messages, e.g. the placement policy's name)
        self.owner = ""
        self._sample: Any = None
        self._rows: dict[Any, tuple] = {}
        self._probs: dict[tuple, float] = {}
        self._read: Callable[[int], Sequence[float]] | None = None
        self._by_running = False

    # ---------------------------------------------------------------- uncached
    def values(self, reading: Sequence[float], running: int = 0) -> list[float]:
        """The feature values (feature order) of a node ``reading`` with ``running``
        attempts running on it (the exact counters set)."""
        values = list(self._pick(reading))
        for i, is_running in self._exact:
            values[i] = float(running) if is_running else float(self.slots - running)
        return values

    def __call__(
        self, node: int, workload: Hashable, reading: Sequence[float], running: int = 0
    ) -> float:
        """The probability of ``workload`` on node index ``node`` (one predictor call)."""
        return self._one(node, workload, self.values(reading, running))

    def _one(self, node: int, workload: Hashable, values: Sequence[float]) -> float:
        self.stats["calls"] += 1
        node_id = self.node_ids[node]
        if self._fast is not None:
            v = float(self._fast(node_id, workload, values))
        else:
            row = dict(zip(self.feature_names, values, strict=True))
            v = float(self._slow(node_id, workload, row))
        if not (0.0 <= v <= 1.0):
            self._checked(v, node_id, workload)
        return v

    def batch(
        self, nodes: Sequence[int], workload: Hashable, rows: Sequence[Sequence[float]]
    ) -> np.ndarray:
        """Probabilities of ``workload`` on ``nodes`` from their feature values, in one
        ``predict_proba`` call."""
        # one float64 array, one column per feature (cheaper than a frame of row lists
        # and two inserts; the same frame, DataFrame.equals)
        values = np.array(rows, dtype=np.float64).reshape(len(rows), len(self.feature_names))
        columns: dict[str, Any] = {
            "node": [self.node_ids[n] for n in nodes],
            "workload": [workload] * len(rows),
        }
        columns.update(zip(self.feature_names, values.T, strict=True))
        frame = pd.DataFrame(columns)
        self.stats["calls"] += 1
        self.stats["batches"] += 1
        if self._batch is None:
            raise TypeError(f"{type(self.predictor).__name__} has no predict_proba method")
        out = np.asarray(self._batch(frame), dtype=np.float64).reshape(-1)
        for n, v in zip(nodes, out.tolist(), strict=True):
            self._checked(v, self.node_ids[n], workload)
        return out

    def _checked(self, v: float, node_id: str, workload: Hashable) -> float:
        if not (0.0 <= v <= 1.0):
            who = f"{self.owner}: " if self.owner else ""
            raise ValueError(
                f"{who}predictor returned {v!r} (not a probability) for node {node_id}, "
                f"workload {workload!r}"
            )
        return v

    # ---------------------------------------------------------------- cached, per sample
    def attach(self, read: Callable[[int], Sequence[float]], *, by_running: bool) -> None:
        """Read nodes with ``read(node)``; ``by_running``: a reading depends on the node's
        running count (readings taken at the very instant), else one per node and sample."""
        self._read = read
        self._by_running = bool(by_running)
        self._sample = None
        self._rows.clear()
        self._probs.clear()

    def roll(self, sample: Any) -> None:
        """Forget the readings and scores of an earlier sample."""
        if sample != self._sample:
            self._sample = sample
            self._rows.clear()
            self._probs.clear()

    def _reading(self, node: int, running: int) -> tuple:
        key = (node, running) if self._by_running else node
        values = self._rows.get(key)
        if values is None:
            if self.reads_nothing:  # placeholders, each set by _values_now
                values = (0.0,) * len(self.feature_names)
            else:
                if self._read is None:
                    raise RuntimeError("Scorer.attach(read, ...) must come before score()")
                values = self._pick(self._read(node))
                self.stats["reads"] += 1
            self._rows[key] = values
        return values

    def _values_now(self, node: int, running: int) -> Sequence[float]:
        reading = self._reading(node, running)
        if not self._exact:
            return reading
        values = list(reading)
        for i, is_running in self._exact:
            values[i] = float(running) if is_running else float(self.slots - running)
        return values

    def score(self, node: int, running: int, workload: Hashable) -> float:
        """The cached probability of ``workload`` on ``node`` with ``running`` attempts."""
        key = (node, running, workload)
        p = self._probs.get(key)
        if p is None:
            if self._batch is not None and self.batch_min <= 1:
                return self.scores([node], [running], workload)[0]
            self.stats["scored"] += 1
            p = self._probs[key] = self._one(node, workload, self._values_now(node, running))
        return p

    def scores(
        self, nodes: Sequence[int], running: Sequence[int], workload: Hashable
    ) -> list[float]:
        """Cached probabilities of ``workload`` on ``nodes``; the uncached ones in one
        ``predict_proba`` batch when there are ``batch_min`` or more, else one call each."""
        probs = self._probs
        keys = [(n, r, workload) for n, r in zip(nodes, running, strict=True)]
        todo = [k for k in keys if k not in probs]
        if todo:
            self.stats["scored"] += len(todo)
            rows = [self._values_now(n, r) for n, r, _w in todo]
            if self._batch is not None and len(todo) >= self.batch_min:
                values = self.batch([n for n, _r, _w in todo], workload, rows).tolist()
            else:
                values = [self._one(k[0], workload, row) for k, row in zip(todo, rows, strict=True)]
            for k, v in zip(todo, values, strict=True):
                probs[k] = v
        return [probs[k] for k in keys]


class _NodeIds(dict):
    """Node index -> trace name, built on first use."""

    def __init__(self, node_format: str):
        super().__init__()
        self.node_format = node_format

    def __missing__(self, node: int) -> str:
        name = self[node] = node_name(node, self.node_format)
        return name
