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

The columns, node and counter names and table builders live in
:mod:`sim_bridge._trace_schema`, the straggler rule in :mod:`sim_bridge._straggler_rule`,
the protocol in :mod:`sim_bridge._trace_protocol`; this module re-exports them and holds
:func:`bind` and :class:`Scorer`. Together they import NumPy and pandas only: nothing else
of ``sim_bridge``, nothing of ``mtl``.

Examples
--------
>>> from sim_bridge import trace
>>> trace.node_name(7), trace.counter_column("cpu_user"), trace.DEFAULT_BETA
('n0007', 'c_cpu_user', 1.3)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: ``import sim_bridge`` loads no pandas
    from sim_bridge._trace_schema import pd

from sim_bridge._straggler_rule import (
    DEFAULT_BETA,
    DEFAULT_MIN_TASKS,
    check_beta,
    excluded_counts,
    stage_codes,
    straggler_thresholds,
)
from sim_bridge._trace_protocol import PredictorProtocol
from sim_bridge._trace_schema import (
    COUNTER_PREFIX,
    JOB_COLUMNS,
    NODE_FORMAT,
    OUTCOMES,
    REQUIRED_COLUMNS,
    TASK_COLUMNS,
    counter_column,
    counter_columns,
    jobs_table,
    node_index,
    node_name,
    node_names,
    task_ids,
    tasks_table,
)

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
