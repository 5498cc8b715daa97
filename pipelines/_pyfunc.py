"""The MLflow pyfunc wrapper around the safe predictor artifact (``mtl.load_predictor``).

The model's only artifact is the non-executable predictor directory (JSON + .npz) under the
key ``predictor``; MLflow stores it in the model directory as ``artifacts/predictor/``. Input:
a DataFrame with ``node``, ``workload`` and the counter columns; output: a DataFrame with one
column, ``straggler_probability``. This module imports mlflow and is only imported where a
model is logged or loaded.

Bad input (a NaN or infinite counter, a missing column, a value that is not a number) is a
client error: :meth:`StragglerPyfunc.predict` raises an ``MlflowException`` with
``INVALID_PARAMETER_VALUE``, which ``mlflow models serve`` returns as HTTP 400 with the message
alone (it names the column, row and value; no traceback, no server path). Any other failure
is logged on the server and answered with a generic message.
"""

from __future__ import annotations

import logging
from typing import Any

import mlflow.pyfunc
import numpy as np
import pandas as pd
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import INTERNAL_ERROR, INVALID_PARAMETER_VALUE

_log = logging.getLogger(__name__)


class StragglerPyfunc(mlflow.pyfunc.PythonModel):
    """``mlflow.pyfunc`` model: calibrated straggler probabilities from the safe artifact.

    Examples
    --------
    >>> import tempfile, types
    >>> from mtl import GroupedMTLSVC, Predictor, make_grouped_classification
    >>> X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
    >>> art = Predictor.from_estimator(GroupedMTLSVC().fit(X, y)).save(tempfile.mkdtemp())
    >>> model = StragglerPyfunc()
    >>> model.load_context(types.SimpleNamespace(artifacts={"predictor": str(art)}))
    >>> model.predict(None, X.head(2)).columns.tolist()
    ['straggler_probability']
    >>> model.predict(None, X.head(2).assign(c_1=float("nan")))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mlflow.exceptions.MlflowException: bad input: counter 'c_1' is nan at row 0 of the frame
    """

    def load_context(self, context: Any) -> None:
        """Load the predictor from ``context.artifacts["predictor"]`` (a signing key in
        ``$STRAGGLER_MODEL_KEY`` is enforced, see :func:`mtl.load_predictor`)."""
        from mtl import load_predictor

        self._predictor = load_predictor(context.artifacts["predictor"])

    def predict(
        self, context: Any, model_input: pd.DataFrame, params: dict[str, Any] | None = None
    ) -> pd.DataFrame:
        """Probability of a straggler for every row of ``model_input`` (a DataFrame, or
        anything ``pandas.DataFrame`` accepts)."""
        from mtl import PredictorInputError

        try:
            frame = (
                model_input if isinstance(model_input, pd.DataFrame) else pd.DataFrame(model_input)
            )
            p = np.asarray(self._predictor.predict_proba(frame), dtype=np.float64)
        except (PredictorInputError, ValueError, TypeError) as exc:
            raise MlflowException(f"bad input: {exc}", error_code=INVALID_PARAMETER_VALUE) from None
        except Exception:
            _log.exception("straggler pyfunc: scoring failed")
            raise MlflowException(
                "internal error while scoring (details in the server log)",
                error_code=INTERNAL_ERROR,
            ) from None
        if p.ndim == 2:
            p = p[:, -1]
        return pd.DataFrame({"straggler_probability": p})
