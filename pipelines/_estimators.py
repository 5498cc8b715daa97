"""The one estimator factory of the pipelines: a model name and a grid point to an unfitted
``mtl`` estimator (train's study, evaluate's tables and compare's predictors build theirs
here)."""

from __future__ import annotations

from typing import Any

#: The regularisers a grid point may hold (one per block of the grouped model).
REGULARISERS: tuple[str, ...] = ("lambda0", "nu", "omega", "tau")

#: The model name of Wrangler's per-pair SVMs; every other name is a ``GroupedMTLSVC``
#: variant (``mtl.VARIANTS``: f0, fn, fl, f0nl, f0t, ...).
WRANGLER = "wrangler"


def make_estimator(
    model: str, point: dict[str, float] | None = None, seed: int = 0, **extra: Any
) -> Any:
    """An unfitted ``mtl.WranglerSVC`` (``model="wrangler"``) or ``mtl.GroupedMTLSVC``.

    Parameters
    ----------
    model : str
        ``"wrangler"`` or a variant of ``mtl.VARIANTS``.
    point : dict, optional
        A grid point: its ``threshold`` and, for a grouped variant, its regularisers
        (:data:`REGULARISERS`); other keys are ignored. Missing values keep the estimator's
        defaults.
    seed : int, default 0
        The estimator's ``random_state`` (its calibration folds).
    **extra
        Further fixed estimator parameters (e.g. ``C``).

    Raises
    ------
    ValueError
        ``model`` is neither ``"wrangler"`` nor a variant; the message lists the choices.

    Examples
    --------
    >>> make_estimator("f0nl", {"lambda0": 10, "threshold": 0.4, "other": 1}, seed=3)
    GroupedMTLSVC(lambda0=10.0, random_state=3, threshold=0.4)
    >>> make_estimator("wrangler", {"lambda0": 10}, C=0.1)
    WranglerSVC(C=0.1)
    """
    from mtl import VARIANTS, GroupedMTLSVC, WranglerSVC

    point = point or {}
    params: dict[str, Any] = {}
    if "threshold" in point:
        params["threshold"] = float(point["threshold"])
    if model == WRANGLER:
        return WranglerSVC(random_state=seed, **params, **extra)
    if model not in VARIANTS:
        choices = ", ".join((WRANGLER, *VARIANTS))
        raise ValueError(f"parameter model must be one of {choices}, got {model!r}")
    params.update({k: float(point[k]) for k in REGULARISERS if k in point})
    return GroupedMTLSVC(variant=model, random_state=seed, **params, **extra)
