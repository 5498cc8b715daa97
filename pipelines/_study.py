"""The Optuna grid study of ``straggler train``: resumable, parallel, no point fitted twice.

Storage is Optuna's journal file (``JournalStorage`` + ``JournalFileBackend``) in the run
directory, never the MLflow database. The study's sampler is a ``GridSampler`` over the
variant's grid, but trials are driven through Optuna's trial queue so that a resumed or
parallel run never repeats a finished point:

1. :func:`prepare_study` (main process, before any worker) marks trials left ``RUNNING`` by a
   killed run as ``FAIL`` and enqueues every grid point that has no ``COMPLETE`` trial and is
   not already waiting in the queue.
2. Each worker (:func:`run_worker`, one per process) pops queued trials (Optuna claims a
   waiting trial atomically in the storage, so two processes never pop the same one) until the
   queue is empty.
3. GridSampler's duplicate-point caveat: when a worker asks for a trial just as another one
   pops the last queued point, Optuna lets the sampler create a trial, and a GridSampler
   re-evaluates an already visited point in that situation. The objective recognises such a
   trial (queued trials carry ``user_attrs["grid_point"]``, it has none) and prunes it before
   fitting anything
   (``user_attrs["skipped"] = "queue empty"``).

Fitted validation probabilities are cached per regulariser combination in the run directory
(``cache/``), so the thresholds of one fit cost one fit whichever process evaluates them.

On Dask (``straggler train --workers N`` / ``--scheduler URL``, :func:`run_study_dask`) each
trial is one task that pops one queued point. Storage choice: the same journal file, on a
file system every worker mounts. Optuna's RDB storage would need a database server (SQLite's
``fcntl`` locks are unreliable on NFS), and optuna-integration's ``DaskStorage`` keeps the
study in the scheduler's memory, so a killed scheduler or client would lose it; the journal
file keeps resume-after-kill exactly as in the local case. MLflow is written by the client
only, as each trial comes back, so workers never write to the tracking store concurrently.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mtl._atomic import atomic_path
from pipelines._estimators import REGULARISERS, make_estimator
from pipelines._grid import point_key
from pipelines._metrics import binary_metrics


@dataclass
class StudyContext:
    """Everything a worker process needs (picklable).

    Attributes
    ----------
    journal : str
        Path of the Optuna journal file.
    study_name : str
    space : dict
        Grid key -> values.
    data_path : str
        Parquet file with the fitting and validation rows (column ``part``: ``fit``/``val``).
    counters : list of str
    variant : str
    metric : str
        Metric the study maximises (validation).
    cache_dir : str
    seed : int
    estimator_params : dict
        Extra fixed GroupedMTLSVC parameters.
    """

    journal: str
    study_name: str
    space: dict[str, list[float]]
    data_path: str
    counters: list[str]
    variant: str
    metric: str
    cache_dir: str
    seed: int = 0
    estimator_params: dict[str, Any] = field(default_factory=dict)


def _queue_grid_sampler_class():
    import optuna

    class QueueGridSampler(optuna.samplers.GridSampler):
        """A GridSampler whose ``after_trial`` does not stop the study.

        Our workers pop enqueued grid points until the queue is empty, so the queue, not the
        sampler, ends the study. Optuna's own ``after_trial`` also reads a ``grid_id`` system
        attribute that enqueued trials do not have, and raises ``KeyError`` when one grid point
        is left unvisited (e.g. a one-point grid).
        """

        def after_trial(self, study, trial, state, values) -> None:
            return None

    return QueueGridSampler


def open_study(ctx: StudyContext):
    """Create or load the study in the journal file."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = JournalStorage(JournalFileBackend(ctx.journal))
    sampler = _queue_grid_sampler_class()(ctx.space, seed=ctx.seed)
    return optuna.create_study(
        storage=storage,
        sampler=sampler,
        study_name=ctx.study_name,
        direction="maximize",
        load_if_exists=True,
    )


def prepare_study(ctx: StudyContext, points: list[dict[str, float]]) -> dict[str, int]:
    """Fail stale trials and enqueue the grid points not completed yet (main process only).

    Returns
    -------
    dict
        ``completed`` (points already done), ``stale`` (RUNNING trials marked FAIL),
        ``enqueued`` (points added to the queue), ``waiting`` (points queued in total).
    """
    from optuna.trial import TrialState

    study = open_study(ctx)
    keys = list(ctx.space)
    stale = 0
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        # Only one pipeline run drives a study at a time, so a RUNNING trial here belongs to a
        # run that was killed. (FrozenTrial has no public id accessor; _trial_id is stable.)
        study._storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
        stale += 1
    done = {
        point_key(t.params, keys)
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if set(keys) <= set(t.params)
    }
    waiting = {
        t.user_attrs.get("grid_point")
        for t in study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
    }
    enqueued = 0
    # threshold-major order: workers that start together pop different regulariser sets
    # (distinct fits); the other thresholds of a set come later and hit the fit cache
    for p in sorted(points, key=lambda p: p.get("threshold", 0.0)):
        k = point_key(p, keys)
        if k not in done and k not in waiting:
            study.enqueue_trial(p, user_attrs={"grid_point": k})
            waiting.add(k)
            enqueued += 1
    n_done = sum(point_key(p, keys) in done for p in points)
    return {"completed": n_done, "stale": stale, "enqueued": enqueued, "waiting": len(waiting)}


def _fit_key(point: dict[str, float]) -> str:
    return point_key(point, [k for k in REGULARISERS if k in point])


class GridObjective:
    """The objective: fit on the fitting rows (cached per regulariser set), score validation."""

    def __init__(self, ctx: StudyContext):
        self.ctx = ctx
        self._data: pd.DataFrame | None = None

    def _grid_keys(self) -> set[str]:
        from pipelines._grid import grid_points

        keys = list(self.ctx.space)
        return {point_key(p, keys) for p in grid_points(self.ctx.space)}

    def _load(self) -> pd.DataFrame:
        if self._data is None:
            self._data = pd.read_parquet(self.ctx.data_path)
        return self._data

    def validation_proba(self, point: dict[str, float]) -> tuple[np.ndarray, dict[str, float]]:
        """Validation probabilities of the fit for ``point``'s regularisers (cached on disk)."""
        ctx = self.ctx
        key = _fit_key(point)
        cache = Path(ctx.cache_dir) / (key.replace(",", "_").replace("=", "-") + ".npz")
        if cache.is_file():
            with np.load(cache) as z:
                return z["proba"], {"fit_seconds": float(z["fit_seconds"])}
        data = self._load()
        fit, val = data[data["part"] == "fit"], data[data["part"] == "val"]
        cols = ["node", "workload", *ctx.counters]
        model = make_estimator(ctx.variant, point, ctx.seed, **ctx.estimator_params)
        t0 = time.perf_counter()
        model.fit(fit[cols], fit["straggler"].to_numpy(dtype=np.int64))
        seconds = time.perf_counter() - t0
        proba = model.predict_proba(val[cols])[:, 1]
        with atomic_path(cache, suffix=".npz") as tmp:  # savez adds .npz to other names
            np.savez(tmp, proba=proba, fit_seconds=seconds)
        return proba, {"fit_seconds": seconds}

    def __call__(self, trial) -> float:
        import optuna

        if "grid_point" not in trial.user_attrs:
            trial.set_user_attr("skipped", "queue empty")
            raise optuna.TrialPruned("not from the queue: would duplicate a grid point")
        if trial.user_attrs["grid_point"] not in self._grid_keys():
            # queued by an earlier run with another grid file for the same data and settings
            trial.set_user_attr("skipped", "not in the current grid")
            raise optuna.TrialPruned("grid point not in the current grid")
        point = {k: trial.suggest_categorical(k, self.ctx.space[k]) for k in self.ctx.space}
        proba, extra = self.validation_proba(point)
        data = self._load()
        y_val = data.loc[data["part"] == "val", "straggler"].to_numpy(dtype=np.int64)
        metrics = binary_metrics(y_val, proba, point.get("threshold", 0.5))
        metrics.update(extra)
        metrics["fit_rows"] = int((data["part"] == "fit").sum())
        for k, v in metrics.items():
            trial.set_user_attr(k, float(v) if isinstance(v, float) else v)
        value = metrics[self.ctx.metric]
        return float(value) if math.isfinite(value) else 0.0


def run_worker(ctx: StudyContext, max_trials: int | None = None, callbacks=()) -> int:
    """Pop queued trials until the queue is empty (or ``max_trials``); return trials run."""
    from optuna.trial import TrialState

    study = open_study(ctx)
    objective = GridObjective(ctx)
    n = 0
    while max_trials is None or n < max_trials:
        if not study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
            break
        study.optimize(objective, n_trials=1, callbacks=list(callbacks))
        n += 1
    return n


def completed_trials(ctx: StudyContext) -> pd.DataFrame:
    """One row per grid point with a COMPLETE trial: the point, value and user attributes."""
    from optuna.trial import TrialState

    study = open_study(ctx)
    rows = []
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        rows.append({"trial": t.number, **t.params, "value": t.value, **t.user_attrs})
    return pd.DataFrame(rows)


def best_point(trials: pd.DataFrame, points: list[dict[str, float]]) -> dict[str, float]:
    """The point with the highest value; ties go to the earliest point of the grid order.

    Deterministic whatever order parallel workers finished in.

    Examples
    --------
    >>> pts = [{"lambda0": 1.0}, {"lambda0": 2.0}]
    >>> best_point(pd.DataFrame({"lambda0": [2.0, 1.0], "value": [0.7, 0.7]}), pts)
    {'lambda0': 1.0}
    """
    keys = list(points[0])
    order = {point_key(p, keys): i for i, p in enumerate(points)}
    best = None
    for r in trials.to_dict("records"):
        k = point_key(r, keys)
        if k not in order:
            continue
        rank = (-r["value"], order[k])
        if best is None or rank < best[0]:
            best = (rank, {kk: float(r[kk]) for kk in keys})
    if best is None:
        raise ValueError("no completed trial on this grid: nothing to choose from")
    return best[1]


# ---------------------------------------------------------------------------- Dask
def run_one_trial(ctx: StudyContext) -> list[int]:
    """Sweep task: pop one queued trial, run it, return the numbers of the trials it ran.

    Returns ``[]`` when the queue is already empty. No MLflow logging here: the client logs
    each trial when it comes back (:func:`run_study_dask`), so workers never write to the
    tracking store at the same time.
    """
    from optuna.trial import TrialState

    study = open_study(ctx)
    if not study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
        return []
    numbers: list[int] = []
    study.optimize(
        GridObjective(ctx), n_trials=1, callbacks=[lambda _s, t: numbers.append(t.number)]
    )
    return numbers


def run_study_dask(
    ctx: StudyContext,
    points: list[dict[str, float]],
    engine,
    max_trials: int | None = None,
    callbacks=(),
    max_rounds: int = 5,
) -> int:
    """Run the queued grid points as Dask tasks (one trial per task); return trials run.

    Storage: the study's journal file (``ctx.journal``) and fit cache (``ctx.cache_dir``)
    must be on a file system every worker can reach (the run directory on a shared mount);
    Optuna's file journal locks with ``link()``/``O_EXCL``, which work on NFS, unlike SQLite's
    ``fcntl`` locks. Each task pops whichever queued point is next, so which worker fits which
    point varies, but each point's value depends only on the point and ``ctx.seed``: the
    table is the same on any engine.

    A worker killed mid-trial leaves that trial ``RUNNING``; the scheduler resubmits the task,
    which pops the next point. After each round, :func:`prepare_study` marks such trials
    ``FAIL`` and queues their points again, and another round runs them (at most
    ``max_rounds``). ``callbacks`` (e.g. the MLflow trial logger) run on the client, one trial
    at a time, as results come back.
    """
    from optuna.trial import TrialState

    from pipelines._sweep import SweepTask, dask_client, run_sweep

    study = open_study(ctx)

    def log(_key: str, numbers: list[int]) -> None:
        if not numbers or not callbacks:
            return
        trials = {t.number: t for t in study.get_trials(deepcopy=False)}
        for n in numbers:
            for cb in callbacks:
                cb(study, trials[n])

    ran = 0
    with dask_client(engine) as client:
        for r in range(max_rounds):
            waiting = len(study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))
            n = waiting if max_trials is None else min(waiting, max_trials - ran)
            if n <= 0:
                break
            tasks = [SweepTask(f"round={r}/slot={i}", run_one_trial, (ctx,)) for i in range(n)]
            done = run_sweep(tasks, client=client, progress=False, on_result=log)
            ran += sum(len(v) for v in done.values())
            status = prepare_study(ctx, points)  # trials of killed workers: FAIL + requeue
            if not status["stale"] and not status["enqueued"]:
                break
    return ran
