"""Grouped multi-task SVMs for straggler prediction (Yadwadkar et al.), the Wrangler baseline
and the scheduler-facing predictor.

Public names
------------
GroupedMTLSVC
    The grouped multi-task linear SVM ``w0 + w_node + w_workload + v_task`` (seed 004).
WranglerSVC
    One calibrated linear SVM per (node, workload) pair, with an insufficient-data record.
Predictor, load_predictor, PredictorProtocol
    What a scheduler imports; safe JSON + .npz artifact, MLflow URIs loaded lazily.
ArtifactError, PredictorInputError, SignatureError
    Errors for bad artifacts, bad predictor input and artifacts whose signature does not
    verify under the configured key (all ``ValueError``).
REGULARISER_RANGE, DegenerateModelWarning, UnseenWorkloadWarning
    The allowed range of a finite block regulariser, the warning of a collapsed fit, and the
    warning that rows of a workload unseen in training were scored from the shared blocks.
make_grouped_classification
    Synthetic node x workload structured data.
VARIANTS
    The blocks of every model variant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# What a scheduler needs to load and query a predictor is imported now (numpy, pandas,
# scipy.special); the estimators, which import scikit-learn, on first use (PEP 562), so that
# ``from mtl import load_predictor`` stays light.
from ._common import REGULARISER_RANGE
from ._predictor import (
    ArtifactError,
    Predictor,
    PredictorInputError,
    PredictorProtocol,
    load_predictor,
)
from ._signing import SignatureError

if TYPE_CHECKING:  # the lazy names, for type checkers and IDEs
    from ._grouped import DegenerateModelWarning, GroupedMTLSVC, UnseenWorkloadWarning
    from ._structure import VARIANTS
    from ._synthetic import make_grouped_classification
    from ._wrangler import WranglerSVC

_LAZY: dict[str, str] = {
    "DegenerateModelWarning": "._grouped",
    "GroupedMTLSVC": "._grouped",
    "UnseenWorkloadWarning": "._grouped",
    "VARIANTS": "._structure",
    "make_grouped_classification": "._synthetic",
    "WranglerSVC": "._wrangler",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # once: later lookups do not come back here
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__: list[str] = [
    "REGULARISER_RANGE",
    "VARIANTS",
    "ArtifactError",
    "DegenerateModelWarning",
    "GroupedMTLSVC",
    "Predictor",
    "PredictorInputError",
    "PredictorProtocol",
    "SignatureError",
    "UnseenWorkloadWarning",
    "WranglerSVC",
    "load_predictor",
    "make_grouped_classification",
]
