"""What a scheduler needs from a straggler predictor, as a structural protocol.

Examples
--------
>>> from mtl import GroupedMTLSVC, Predictor, make_grouped_classification
>>> X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
>>> isinstance(Predictor.from_estimator(GroupedMTLSVC().fit(X, y)), PredictorProtocol)
True
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd


@runtime_checkable
class PredictorProtocol(Protocol):
    """What a scheduler (e.g. the simulator bridge) needs from a straggler predictor.

    The simulator states the same protocol as ``sim_bridge.trace.PredictorProtocol`` (with
    the optional ``straggler_probability_values`` fast path and ``bind_view`` hook it uses
    when present); ``mtl`` does not import ``sim_bridge``, and a test checks the two agree.

    ``threshold`` and ``feature_names`` are read-only members: a plain attribute of any
    subtype (``list[str]``) or a property satisfies them.
    """

    @property
    def threshold(self) -> float: ...

    @property
    def feature_names(self) -> Sequence[str]: ...

    def straggler_probability(
        self, node: Hashable, workload: Hashable, counters: Mapping[str, float]
    ) -> float:
        """Probability that a task launched now on ``node`` for ``workload`` straggles."""
        ...

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        """Straggler probability per row of a frame with node, workload and counters."""
        ...
