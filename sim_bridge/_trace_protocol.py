"""The one predictor protocol (:class:`PredictorProtocol`): what a scheduler needs from a
straggler predictor; public through :mod:`sim_bridge.trace`.

Examples
--------
>>> PredictorProtocol.__name__
'PredictorProtocol'
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PredictorProtocol"]


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
