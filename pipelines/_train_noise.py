"""Known warning noise of ``straggler train`` and the block that silences it (part of
:mod:`pipelines._train`)."""

from __future__ import annotations

import contextlib
import warnings

#: Warnings that are noise in ``straggler train``'s output (message regex, category name):
#: MLflow's hints for pyfunc models logged from a script (the signature is given explicitly),
#: and liblinear's iteration cap in the calibration folds (the fit is used either way).
NOISE_WARNINGS: tuple[tuple[str, str], ...] = (
    (r".*Add type hints to the `predict` method", "UserWarning"),
    (r".*An input example was not provided when logging the model", "UserWarning"),
    (r".*", "ConvergenceWarning"),
)


@contextlib.contextmanager
def quiet_known_noise():
    """Silence :data:`NOISE_WARNINGS` inside the block, and nothing else."""
    from sklearn.exceptions import ConvergenceWarning

    cats = {"UserWarning": UserWarning, "ConvergenceWarning": ConvergenceWarning}
    with warnings.catch_warnings():
        for message, cat in NOISE_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=cats[cat])
        yield
