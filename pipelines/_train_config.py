"""The settings of ``straggler train`` (:class:`TrainConfig`), each flag declared once.

Light on purpose (no numpy, pandas or mtl at import): the CLI builds its parser from this
class on every ``straggler --help``. The variant and threshold-rule choices are read from
their registries (``mtl.VARIANTS``, :data:`pipelines._metrics.THRESHOLD_RULES`) only when a
value is checked, so ``straggler train --help`` does not load them either (the help names a
few; a wrong value is answered with the full list).

Examples
--------
>>> cfg = TrainConfig(traces="runs/trace", out="runs/train", grid="small")
>>> cfg.variant, cfg.beta, cfg.register
('f0nl', 1.3, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines._label_defaults import BETA as _BETA
from pipelines._label_defaults import MIN_TASKS as _MIN_TASKS
from pipelines.commands._params import RegistryChoices, option
from pipelines.commands._types import beta_value, tracking_uri

#: Training fractions of the accuracy-against-data curve logged with every training run.
CURVE_FRACTIONS: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4, 0.66)


#: The metrics ``--metric`` offers: :data:`pipelines._metrics.METRICS` a grid can sensibly
#: maximise (``tpr`` and ``fpr`` alone are maximised by a degenerate threshold).
GRID_METRICS: tuple[str, ...] = (
    "roc_auc",
    "pr_auc",
    "balanced_accuracy",
    "accuracy",
    "precision",
    "recall",
    "f1",
)


@dataclass
class TrainConfig:
    """Settings of one ``straggler train`` run (see ``straggler train --help``)."""

    traces: str = option(help="trace directory (tasks.parquet) or file")
    out: str = option(help="run directory")
    variant: str = option(
        "f0nl",
        choices=RegistryChoices("mtl", "VARIANTS"),
        metavar="VARIANT",
        help="model variant (seed 004, section 4.1): a name of mtl.VARIANTS, e.g. f0, fn, "
        "fl, f0nl, f0t (an unknown name lists them all); default f0nl",
    )
    grid: str = option("default", help="'default', 'small' or a JSON grid file (see README)")
    jobs: int = option(1, type=int, help="parallel trial processes (default 1)")
    #: Dask: a LocalCluster of this many processes (``--workers``) or an existing scheduler
    #: (``--scheduler``/``STRAGGLER_DASK_SCHEDULER``); both None: ``jobs`` local processes
    #: (flags of :mod:`pipelines.commands._engine_options`)
    workers: int | None = None
    scheduler: str | None = None
    tracking_uri: str | None = option(
        None, type=tracking_uri, help="MLflow tracking URI (default sqlite:///OUT/mlflow.db)"
    )
    experiment: str = option("straggler-train", help="MLflow experiment name")
    beta: float = option(_BETA, type=beta_value, help="straggler threshold x job median")
    min_tasks: int = option(_MIN_TASKS, type=int, help="finished original attempts a job needs (3)")
    fraction: float = option(0.66, type=float, help="training share of each pair (0.66)")
    val_share: float = option(0.25, type=float, help="validation share of the training rows")
    test_start: float = 0.66
    #: validation metric the grid is chosen by (:data:`pipelines._metrics.SELECTION_METRICS`
    #: cannot be flattered by class imbalance; the others are accepted for the paper's setting)
    metric: str = option(
        "roc_auc",
        # METRICS without tpr/fpr (maximising either alone picks a degenerate threshold)
        choices=GRID_METRICS,
        help="validation metric the grid maximises (default roc_auc; pr_auc and "
        "balanced_accuracy are also imbalance-proof; accuracy is the paper's)",
    )
    #: how the decision threshold is chosen on the validation rows of the chosen fit:
    #: maximise balanced accuracy (default) or F1, or keep the grid point's threshold
    threshold_rule: str = option(
        "balanced_accuracy",
        choices=RegistryChoices("pipelines._metrics", "THRESHOLD_RULES"),
        metavar="RULE",
        help="decision threshold: maximise this on the validation rows (default "
        "balanced_accuracy; f1 also), or 'grid' to keep the grid point's threshold",
    )
    seed: int = option(0, type=int, help="seed of calibration folds and sampler")
    max_trials: int | None = option(
        None,
        type=int,
        help="stop after this many trials (run again to continue the study)",
    )
    curve_fractions: tuple[float, ...] = CURVE_FRACTIONS
    register: bool = option(
        True,
        flag="--no-register",
        switch="off",
        help="do not log/register the MLflow model",
    )
    model_name: str = "straggler-predictor"
    alias: str = "champion"
    nan_counters: str = option(
        "raise",
        choices=("raise", "drop"),
        help="rows with NaN/inf counters: error (default) or drop them",
    )
    on_single_class: str = option(
        "raise",
        flag="--single-class-workloads",
        choices=("raise", "drop"),
        help="workloads whose rows are all one class: error (default) or drop them",
    )
