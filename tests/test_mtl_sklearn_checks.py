"""scikit-learn's estimator checks on the mtl estimators (expected failures listed with reasons)."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from mtl import GroupedMTLSVC, WranglerSVC

_CALIBRATED_THRESHOLD = (
    "predict thresholds the Platt-calibrated probability, fitted on the true labels; "
    "class_weight reshapes the SVM margin but calibration maps it back to honest "
    "probabilities, so extreme class weights need not force one class (use `threshold`); "
    "whether the check's 87% bar is reached depends on the calibration folds"
)


def _expected_failures(estimator):
    # Only the implicit Newton path misses the check's bar on its tiny, extremely weighted
    # problem; the explicit (liblinear) path and the default ``auto`` pass it.
    if getattr(estimator, "solver", None) == "implicit":
        return {"check_class_weight_classifiers": _CALIBRATED_THRESHOLD}
    return {}


@parametrize_with_checks(
    [
        GroupedMTLSVC(),
        GroupedMTLSVC(solver="implicit"),
        GroupedMTLSVC(variant="f0nlt", solver="explicit", calibration_cv=None),
        WranglerSVC(min_rows=2),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
