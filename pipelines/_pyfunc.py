"""The MLflow pyfunc wrapper around the safe predictor artifact (``mtl.load_predictor``).

The model's only artifact is the non-executable predictor directory (JSON + .npz) under the
key ``predictor``; MLflow stores it in the model directory as ``artifacts/predictor/``. Input:
a DataFrame with ``node``, ``workload`` and the counter columns; output: a DataFrame with one
column, ``straggler_probability``. This module imports mlflow and is only imported where a
model is logged or loaded.
"""

from __future__ import annotations

import mlflow.pyfunc
import numpy as np
import pandas as pd


class StragglerPyfunc(mlflow.pyfunc.PythonModel):
    """``mlflow.pyfunc`` model: calibrated straggler probabilities from the safe artifact."""

    def load_context(self, context) -> None:
        """Load the predictor from ``context.artifacts["predictor"]``."""
        from mtl import load_predictor

        self._predictor = load_predictor(context.artifacts["predictor"])

    def predict(self, context, model_input, params=None) -> pd.DataFrame:
        """Probability of a straggler for every row of ``model_input``."""
        frame = model_input if isinstance(model_input, pd.DataFrame) else pd.DataFrame(model_input)
        p = np.asarray(self._predictor.predict_proba(frame), dtype=np.float64)
        if p.ndim == 2:
            p = p[:, -1]
        return pd.DataFrame({"straggler_probability": p})
