"""``straggler train``: Optuna grid search, MLflow tracking and registry (issue 5)."""

from __future__ import annotations

import argparse

from pipelines._train_config import TrainConfig
from pipelines.commands._engine_options import add_engine_options, engine_from_args
from pipelines.commands._params import add_options, config_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` subcommand."""
    p = subparsers.add_parser(
        "train",
        help="train a straggler predictor (Optuna grid, MLflow tracking)",
        description="Label stragglers in a trace, grid-search a grouped multi-task SVM variant "
        "with Optuna (journal file in --out; an interrupted run continues where it stopped), "
        "track every trial in MLflow, refit the best point, and register the model as "
        "straggler-predictor@champion. Writes summary.json, trials.csv, per-pair metrics, "
        "plots and the safe predictor artifact (predictor/) into --out.",
    )
    add_options(p, TrainConfig)
    add_engine_options(p)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the training pipeline and print its outcome."""
    from pipelines._api import train

    engine = engine_from_args(args)
    cfg = config_from_args(TrainConfig, args, workers=engine.workers, scheduler=engine.scheduler)
    s = train(cfg)
    st = s["study"]
    print(
        f"study {st['name']}: {st['points_completed']}/{st['grid_points']} grid points done "
        f"({st['trials_run']} run now, {st['completed']} before, {st['stale']} stale reset)"
    )
    if s["status"] != "complete":
        print(s["message"])
        return 0
    t = s["test"]
    print(f"best {s['best_params']}")
    print(
        f"test ({t['rows']} rows): roc_auc {t['roc_auc']:.3f} (baseline 0.5), pr_auc "
        f"{t['pr_auc']:.3f} (baseline {t['positive_rate']:.3f}), accuracy {t['accuracy']:.3f} "
        f"(majority class {t['majority_accuracy']:.3f}), balanced accuracy "
        f"{t['balanced_accuracy']:.3f}, precision {t['precision']:.3f} recall {t['recall']:.3f}"
    )
    if "model" in s:
        print(f"registered {s['model']['registered_uri']} (version {s['model']['version']})")
    print(f"wrote {args.out}/summary.json")
    return 0
