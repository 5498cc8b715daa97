"""The predictors of ``straggler compare``: Wrangler and MTL f0,n,l, loaded from
``--model`` or trained on the trace (Wrangler at C=0.1; f0,n,l chosen as ``train`` chooses,
from the ``small`` grid on validation rows, without the Optuna study and MLflow)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd

from pipelines._compare_config import PREDICTORS, CompareConfig, CompareError
from pipelines._dataset import check_classes, label_stragglers
from pipelines._estimators import make_estimator

#: SVM cost of the trained Wrangler predictor (liblinear per pair; C=0.1 converges in
#: seconds on a 16k-row trace).
TRAIN_C = 0.1

#: The grid compare's own MTL model is chosen from (the shipped ``small`` grid; ``train``
#: searches any grid and ``--model`` brings its result).
TRAIN_GRID = "small"


def fit_selected_mtl(labelled, seed: int = 0, val_share: float = 0.25):
    """The f0nl model compare trains when no ``--model mtl=`` is given, chosen as ``train``
    chooses: the regularisers of :data:`TRAIN_GRID` by validation ROC-AUC on the latest
    ``val_share`` of every (node, workload) pair's rows, the threshold by balanced accuracy
    on the same rows, then refitted on every row.

    Returns
    -------
    (GroupedMTLSVC, dict)
        The fitted model and what was chosen (for ``summary.json``).
    """
    import mtl
    from pipelines._grid import load_grid, variant_grid
    from pipelines._metrics import choose_threshold
    from pipelines._selection import select_point
    from pipelines._splits import fraction_split

    X, y = labelled.X, labelled.y
    split = fraction_split(labelled.frame, 1.0, val_share, test_start=1.0)
    space = variant_grid(load_grid(TRAIN_GRID), mtl.VARIANTS["f0nl"])
    sel = select_point("f0nl", X, y, split.fit, split.val, space, seed=seed, metric="roc_auc")
    point = dict(sel.point)
    if sel.proba is not None:
        point["threshold"] = choose_threshold(y[split.val], sel.proba, "balanced_accuracy")
    est = make_estimator("f0nl", point, seed).fit(X, y)
    chosen = {"grid": TRAIN_GRID, "params": point, "val_roc_auc": sel.score}
    return est, chosen


def train_predictors(cfg: CompareConfig, trace: pd.DataFrame, out: Path) -> dict[str, dict]:
    """The Wrangler and MTL predictors: loaded from ``cfg.models`` or trained on ``trace``.

    Each is saved under ``out/models/<name>/`` (a safe ``mtl.Predictor`` artifact).
    """
    import mtl

    labelled = None
    result: dict[str, dict] = {}
    for name in PREDICTORS:
        t0 = time.perf_counter()
        source = cfg.models.get(name)
        if source is not None:
            pred = mtl.load_predictor(source)
            info: dict[str, Any] = {"source": source, "trained": False}
        else:
            if labelled is None:
                labelled = check_classes(
                    label_stragglers(trace, cfg.beta, cfg.min_tasks), on_single_class="drop"
                )
            if name == "mtl":
                est, chosen = fit_selected_mtl(labelled)
            else:
                est = make_estimator("wrangler", C=TRAIN_C).fit(labelled.X, labelled.y)
                chosen = {}
            pred = mtl.Predictor.from_estimator(est)
            info = {
                "source": "trained",
                "trained": True,
                "estimator": repr(est),
                **chosen,
                "rows": int(len(labelled.frame)),
                "straggler_share": float(labelled.y.mean()),
                "dropped_workloads": dict(labelled.dropped_workloads),
            }
        path = pred.save(out / "models" / name)
        info.update(
            artifact=str(path),
            threshold=float(pred.threshold),
            kind=getattr(pred, "kind", None),
            seconds=time.perf_counter() - t0,
        )
        result[name] = {"predictor": pred, "info": info}
    return result


def check_counters(preds: dict[str, dict]) -> None:
    """Every predictor must read counters the simulator has (a model trained on another
    counter set, e.g. FlowBench's, cannot score a simulated node)."""
    import sim_bridge

    have = {sim_bridge.trace.counter_column(c) for c in sim_bridge.COUNTER_NAMES}
    for name, entry in preds.items():
        feats = list(getattr(entry["predictor"], "feature_names", []) or [])
        missing = [f for f in feats if f not in have]
        if missing:
            src = entry["info"].get("source")
            raise CompareError(
                f"--model {name}={src}: reads counters the simulator does not have "
                f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}; "
                f"{len(missing)} of {len(feats)}). A model for compare must be trained on a "
                "simulated trace (`straggler collect`)"
            )
