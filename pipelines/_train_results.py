"""What ``straggler train`` makes of the chosen grid point: the decision threshold on the
validation rows, the learning curve, the predictor, the serving example and the MLflow
dataset input (part of :mod:`pipelines._train`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipelines._io import atomic_write_text
from pipelines._metrics import binary_metrics, choose_threshold
from pipelines._splits import fraction_split
from pipelines._train_config import TrainConfig
from pipelines._train_noise import quiet_known_noise


def build_predictor(model):
    """The scheduler-facing ``mtl.Predictor`` of a fitted estimator."""
    from mtl import Predictor

    return Predictor.from_estimator(model)


def write_serving_example(rows: pd.DataFrame, counters: list[str], out: Path, n: int = 2) -> Path:
    """``out/serving_example.json``: a complete REST request body for the served model.

    The first ``n`` rows of ``rows`` (test rows) in MLflow's ``dataframe_split`` format, with
    the columns the model's signature names (``node``, ``workload`` as strings, every counter
    as a number), ready for ``curl -d @serving_example.json .../invocations``.
    """
    import json

    example = rows[["node", "workload", *counters]].head(n)
    data = [
        [str(r[0]), str(r[1]), *(float(v) for v in r[2:])]
        for r in example.itertuples(index=False, name=None)
    ]
    body = {"dataframe_split": {"columns": ["node", "workload", *counters], "data": data}}
    return atomic_write_text(out / "serving_example.json", json.dumps(body, indent=1) + "\n")


def validation_threshold(cfg: TrainConfig, ctx, best: dict) -> tuple[float, dict, dict]:
    """The decision threshold by ``cfg.threshold_rule`` on the chosen fit's validation rows.

    The validation probabilities come from the study's cache (the fit on the fitting rows
    that scored the grid point), so no refit. Returns the threshold, its record for
    ``summary.json`` and the validation metrics at it (empty with rule ``grid``).
    """
    grid_thr = float(best.get("threshold", 0.5))
    if cfg.threshold_rule == "grid":
        rec = {"value": grid_thr, "rule": "grid", "chosen_on": "validation (grid search)"}
        return grid_thr, rec, {}
    from pipelines._study import GridObjective

    objective = GridObjective(ctx)
    proba, _ = objective.validation_proba(best)
    data = pd.read_parquet(ctx.data_path, columns=["straggler", "part"])
    y_val = data.loc[data["part"] == "val", "straggler"].to_numpy(dtype=np.int64)
    thr = choose_threshold(y_val, proba, cfg.threshold_rule)
    val = binary_metrics(y_val, proba, thr)
    rec = {
        "value": thr,
        "rule": f"maximise {cfg.threshold_rule} on the validation rows",
        "chosen_on": "validation",
        "validation_value": val[cfg.threshold_rule],
        "grid_threshold": grid_thr,
    }
    return thr, rec, {k: float(v) for k, v in val.items()}


def say_selection(cfg: TrainConfig, summary: dict) -> None:
    """One line: the selection metric, the threshold rule and the validation baselines."""
    v = summary["validation"]
    thr = summary["threshold"]
    print(
        f"selected by validation {cfg.metric} = {v.get(cfg.metric, float('nan')):.3f}; "
        f"threshold {thr['value']:.3g} ({thr['rule']}); validation accuracy "
        f"{v.get('accuracy', float('nan')):.3f} (majority class "
        f"{v.get('majority_accuracy', float('nan')):.3f})",
        flush=True,
    )


def log_trace_dataset(frame: pd.DataFrame, traces: str, digest: str) -> None:
    """Log the labelled training table as the run's MLflow dataset input (context
    ``training``): its schema, row count and our content hash, with the trace path as source
    (metadata only; the rows stay in the trace)."""
    import mlflow
    import mlflow.data

    dataset = mlflow.data.from_pandas(
        frame,
        source=str(Path(traces).resolve()),
        targets="straggler",
        name=Path(traces).resolve().name or "trace",
        digest=digest[:36],
    )
    mlflow.log_input(dataset, context="training")


def learning_curve(cfg, frame, cols, y, best, test_idx) -> pd.DataFrame:
    """Refit the best point on the first ``fraction`` of every pair; score the same test rows."""
    from tqdm.auto import tqdm

    from pipelines._study import make_estimator

    rows = []
    thr = best.get("threshold", 0.5)
    for f in tqdm(cfg.curve_fractions, desc="accuracy vs data", unit="fit"):
        if f > cfg.test_start:
            continue
        tr = fraction_split(frame, f, 0.0, cfg.test_start).train
        if len(tr) == 0 or len(np.unique(y[tr])) < 2:
            rows.append({"model": cfg.variant, "fraction": f, "train_rows": len(tr)})
            continue
        with quiet_known_noise():
            m = make_estimator(cfg.variant, best, cfg.seed).fit(frame.iloc[tr][cols], y[tr])
        p = m.predict_proba(frame.iloc[test_idx][cols])[:, 1]
        met = binary_metrics(y[test_idx], p, thr)
        rows.append({"model": cfg.variant, "fraction": f, "train_rows": len(tr), **met})
    return pd.DataFrame(rows)
