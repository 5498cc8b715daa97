"""The predictors of ``straggler compare``: Wrangler and MTL f0,n,l, loaded from
``--model`` or trained a second way (default hyper-parameters, no grid) on the trace."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd

from pipelines._compare_config import PREDICTORS, CompareConfig, CompareError
from pipelines._dataset import check_classes, label_stragglers
from pipelines._estimators import make_estimator

#: SVM cost of the trained predictors: with C=1 the Newton solver of GroupedMTLSVC needs
#: 1000+ iterations on a 16k-row trace (minutes); C=0.1 converges in ~70 (seconds).
TRAIN_C = 0.1


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
            est = make_estimator("f0nl" if name == "mtl" else "wrangler", C=TRAIN_C)
            est.fit(labelled.X, labelled.y)
            pred = mtl.Predictor.from_estimator(est)
            info = {
                "source": "trained",
                "trained": True,
                "estimator": repr(est),
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

    have = {f"c_{c}" for c in sim_bridge.COUNTER_NAMES}
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
