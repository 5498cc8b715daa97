"""How a :class:`~mtl.Predictor` scores: one task from a counter mapping or from the counter
values in model order (a scheduler's hot loop), and every row of a frame at once.

Public names
------------
PredictorInputError
    Input to a predictor lacks a counter, or a counter is NaN / infinite.
PredictorScoring
    The scoring methods of :class:`~mtl.Predictor` (``straggler_probability``,
    ``straggler_probability_values``, ``predict_proba``), which compose on the cached
    per-pair entries the predictor builds (``_entry``).

Examples
--------
>>> from mtl import GroupedMTLSVC, Predictor, make_grouped_classification
>>> X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
>>> pred = Predictor.from_estimator(GroupedMTLSVC().fit(X, y))
>>> isinstance(pred, PredictorScoring)
True
>>> pred.straggler_probability("n0", "w0", {"c_0": 1.0})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
mtl._predictor_scoring.PredictorInputError: counters lack ['c_1', 'c_2'] (...)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from numbers import Real
from operator import mul as _mul
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.special import expit

from ._common import rowwise_dot
from ._frame import NODE, SINGLE_ID, WORKLOAD, native_id


class PredictorInputError(ValueError):
    """Input to a predictor lacks a counter, or a counter is NaN / infinite."""


def _sigmoid(t: float) -> float:
    if t >= 0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


class PredictorScoring:
    """The scoring paths of :class:`~mtl.Predictor` (a mixin: it holds no state of its own).

    It reads what :class:`~mtl.Predictor` sets up: the counters, the kind of model, its ids
    and ``_entry(key)``, the cached ``(W, b', a, c, W as a list)`` of a (node, workload) pair.

    Examples
    --------
    >>> from mtl import Predictor
    >>> issubclass(Predictor, PredictorScoring)
    True
    """

    kind: str
    feature_names: list[str]
    _d: int
    _node: dict[object, int]
    _wl: dict[object, int]
    _task: dict[tuple[Hashable, Hashable], int]
    _pairs: dict[tuple[Hashable, Hashable], int]

    if TYPE_CHECKING:

        def _entry(self, key: tuple) -> tuple[np.ndarray, float, float, float, list[float]]: ...

    def straggler_probability(
        self, node: Hashable, workload: Hashable, counters: Mapping[str, float]
    ) -> float:
        """Calibrated probability that a task launched now on ``node`` for ``workload`` straggles.

        ``counters`` maps every name in :attr:`feature_names` to its value (extra keys are
        ignored). Ids compare by value *and type* with the training ids.
        """
        try:
            x = list(map(counters.__getitem__, self.feature_names))
        except KeyError as exc:
            missing = [f for f in self.feature_names if f not in counters]
            raise PredictorInputError(
                f"counters lack {missing[:5]} (the predictor needs {len(self.feature_names)} "
                f"counters: {self.feature_names[:5]}...)"
            ) from exc
        return self._probability(node, workload, x)

    def _probability(self, node: Hashable, workload: Hashable, x: list) -> float:
        """``sigmoid(a (x . W + b') + c)`` of pair ``(node, workload)`` for the counter values
        ``x`` (feature order, length checked): a plain Python dot product, about twice as
        fast as NumPy's on one row of ~30 counters."""
        _W, b, a, c, w_list = self._entry((node, workload))
        try:
            z = float(sum(map(_mul, w_list, x))) + b
        except (TypeError, ValueError) as exc:
            names = self.feature_names
            wrong = [(f, v) for f, v in zip(names, x, strict=True) if not isinstance(v, Real)]
            what = f"counter {wrong[0][0]!r} is {wrong[0][1]!r}, " if wrong else ""
            raise PredictorInputError(f"counters must be numbers: {what}{exc}") from exc
        if not math.isfinite(z):
            bad = [f for f, v in zip(self.feature_names, x, strict=True) if not math.isfinite(v)]
            raise PredictorInputError(
                f"counter(s) {bad} are NaN or infinite for node {node!r}, workload {workload!r}"
            )
        return _sigmoid(a * z + c)

    def straggler_probability_values(
        self, node: Hashable, workload: Hashable, values: Sequence[float]
    ) -> float:
        """:meth:`straggler_probability` from the counter values in :attr:`feature_names`
        order (no mapping to build or look up: the fast path of a scheduler's hot loop).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from mtl import GroupedMTLSVC, Predictor
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame({"node": ["a", "b"] * 20, "workload": "w",
        ...                   "c_cpu": rng.random(40), "c_mem": rng.random(40)})
        >>> y = (X["c_cpu"] > 0.5).astype(int)
        >>> p = Predictor.from_estimator(GroupedMTLSVC(variant="f0nl").fit(X, y))
        >>> row = {"c_cpu": 0.9, "c_mem": 0.2}
        >>> p.straggler_probability_values("a", "w", [0.9, 0.2]) == p.straggler_probability(
        ...     "a", "w", row)
        True
        """
        shape = np.shape(values) if isinstance(values, np.ndarray) else None
        if shape is not None and len(shape) == 1:
            values = values.tolist()
        elif type(values) is not list and shape is None:
            values = list(values)
        if shape not in (None, (self._d,)) or len(values) != self._d:
            raise PredictorInputError(
                f"expected {self._d} counter values in feature_names order "
                f"({self.feature_names[:5]}...), got shape {np.shape(values)}"
            )
        return self._probability(node, workload, values)

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        """Straggler probability (shape ``(n,)``) for every row of ``frame``.

        ``frame`` has ``node`` and ``workload`` columns (both may be omitted for a model fitted
        on a plain array) and every counter in :attr:`feature_names`; extra columns are ignored.
        """
        if not isinstance(frame, pd.DataFrame):
            raise PredictorInputError(
                f"frame must be a pandas DataFrame, got {type(frame).__name__}"
            )
        missing = [f for f in self.feature_names if f not in frame.columns]
        if missing:
            raise PredictorInputError(f"frame lacks counter column(s) {missing}")
        X = frame[self.feature_names].to_numpy(dtype=np.float64)
        bad = ~np.isfinite(X)
        if bad.any():
            r, j = np.argwhere(bad)[0]
            raise PredictorInputError(
                f"counter {self.feature_names[j]!r} is {X[r, j]} at row {r} of the frame"
            )
        n = X.shape[0]
        has = (NODE in frame.columns, WORKLOAD in frame.columns)
        if has == (False, False):
            if self._trained_ids():
                raise PredictorInputError(
                    f"frame has no 'node' and 'workload' columns, but this predictor was "
                    f"trained on {self._trained_ids()}; give both columns (without them every "
                    "row would be scored as an unseen node and workload)"
                )
            nodes = np.full(n, SINGLE_ID, dtype=object)
            wls = nodes
        elif all(has):
            nodes = frame[NODE].to_numpy(dtype=object)
            wls = frame[WORKLOAD].to_numpy(dtype=object)
        else:
            raise PredictorInputError("frame needs both a 'node' and a 'workload' column")
        ncode, nuniq = pd.factorize(pd.Series(nodes, dtype=object))
        lcode, luniq = pd.factorize(pd.Series(wls, dtype=object))
        if (ncode < 0).any() or (lcode < 0).any():
            raise PredictorInputError("frame has a missing node or workload id")
        known = self._known_workloads()
        if known:
            # once per predictor and workload: a scheduler scores thousands of batches
            warned = self.__dict__.setdefault("_warned_unseen", set())
            unseen = [
                i
                for i, w in enumerate(luniq)
                if native_id(w) not in known and native_id(w) not in warned
            ]
            if unseen:
                from ._grouped import warn_unseen_workloads

                warned.update(native_id(luniq[i]) for i in unseen)
                rows = int(np.isin(lcode, unseen).sum())
                warn_unseen_workloads([luniq[i] for i in unseen], rows)
        combo, cuniq = pd.factorize(ncode.astype(np.int64) * max(len(luniq), 1) + lcode)
        entries = [
            self._entry(
                (
                    native_id(nuniq[k // max(len(luniq), 1)]),
                    native_id(luniq[k % max(len(luniq), 1)]),
                )
            )
            for k in cuniq
        ]
        W = np.array([e[0] for e in entries]).reshape(-1, self._d)
        bac = np.array([e[1:4] for e in entries]).reshape(-1, 3)
        z = rowwise_dot(X, W, combo) + bac[combo, 0]
        t = bac[combo, 1] * z + bac[combo, 2]
        return expit(t)

    def _known_workloads(self) -> set:
        """Workloads with workload-specific weights (empty: the model has none, so no
        workload is "unseen")."""
        if self.kind == "grouped":
            return set(self._wl) | {p[1] for p in self._task}
        return {p[1] for p in self._pairs}

    def _trained_ids(self) -> str:
        """What the model knows of nodes and workloads (``""`` for a model fitted on a plain
        array, whose only ids are the single-task ones)."""
        if self.kind == "grouped":
            ids = set(self._node) | set(self._wl) | {i for p in self._task for i in p}
            counts = (len(self._node), len(self._wl))
        else:
            ids = {i for p in self._pairs for i in p}
            counts = (len({p[0] for p in self._pairs}), len({p[1] for p in self._pairs}))
        if ids <= {SINGLE_ID}:
            return ""
        return f"{counts[0]} node(s) and {counts[1]} workload(s)"
