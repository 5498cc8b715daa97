"""The warnings of :class:`~mtl.GroupedMTLSVC`: a fit whose probabilities collapsed, and rows
of a workload unseen in training (also raised by :class:`~mtl.Predictor`).

Public names
------------
COLLAPSE_FACTOR
    How far off its base rate the mean training probability may be before ``fit`` warns.
DegenerateModelWarning, UnseenWorkloadWarning
    The two warning categories.
warn_unseen_workloads, warn_if_collapsed
    Issue them.

Examples
--------
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warn_unseen_workloads(["FB2010"], rows=4)
>>> caught[0].category is UnseenWorkloadWarning, "4 row(s)" in str(caught[0].message)
(True, True)
"""

from __future__ import annotations

import warnings

#: ``fit`` warns when the mean training probability of either class is off its base rate by
#: more than this factor (calibrated probabilities collapsed).
COLLAPSE_FACTOR = 10.0


class DegenerateModelWarning(UserWarning):
    """A fitted model's probabilities collapsed (e.g. regularisers that zero every weight)."""


class UnseenWorkloadWarning(UserWarning):
    """Rows of a workload the model never saw in training are scored from the shared blocks
    (``w0``, the node's block) alone."""


def warn_unseen_workloads(unseen: list, rows: int, stacklevel: int = 3) -> None:
    """Warn that ``rows`` rows of the workloads ``unseen`` get no workload-specific weights."""
    if unseen:
        warnings.warn(
            f"{rows} row(s) of workload(s) {sorted(map(str, unseen))[:5]} unseen in training: "
            "scored from the shared blocks only (no workload-specific weights)",
            UnseenWorkloadWarning,
            stacklevel=stacklevel,
        )


def warn_if_collapsed(model, proba_mean: float, base_rate: float) -> None:
    """Warn when ``proba_mean`` is off ``base_rate`` by more than :data:`COLLAPSE_FACTOR` in
    either class (probabilities ~0 or ~1 everywhere)."""
    if not 0.0 < base_rate < 1.0:
        return
    low = proba_mean * COLLAPSE_FACTOR < base_rate
    high = (1.0 - proba_mean) * COLLAPSE_FACTOR < 1.0 - base_rate
    if low or high:
        warnings.warn(
            f"GroupedMTLSVC: predicted probabilities collapsed (mean {proba_mean:.3g} on the "
            f"training rows, base rate {base_rate:.3g}) with lambda0={model.lambda0}, "
            f"nu={model.nu}, omega={model.omega}, tau={model.tau}: the regularisers shrink "
            "every weight to ~0; use smaller ones",
            DegenerateModelWarning,
            stacklevel=3,
        )
