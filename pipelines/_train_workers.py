"""The grid study's workers of ``straggler train``: in this process, in ``jobs`` processes
or on Dask, with a progress bar polled from the study (part of :mod:`pipelines._train`)."""

from __future__ import annotations

import threading

from pipelines._train_config import TrainConfig


def trial_progress(total: int, initial: int, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="trial")


class PollProgress:
    """Advance a progress bar from the study's COMPLETE count while workers run elsewhere."""

    def __init__(self, ctx, bar, every: float = 1.0):
        self.ctx, self.bar, self.every = ctx, bar, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        from pipelines._study import completed_trials

        while not self._stop.wait(self.every):
            try:
                n = len(completed_trials(self.ctx))
            except Exception:  # the journal is being written; try again next tick
                continue
            self.bar.update(max(0, n - self.bar.n))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)


def run_workers(ctx, jobs: int, max_trials: int | None, callback, engine=None, points=()) -> int:
    from pipelines._study import run_worker

    if engine is not None and engine.uses_dask:
        from pipelines._study import run_study_dask

        return run_study_dask(ctx, list(points), engine, max_trials, [callback])
    if jobs == 1:
        return run_worker(ctx, max_trials, callbacks=[callback])
    from joblib import Parallel, delayed

    shares = [None] * jobs
    if max_trials is not None:
        shares = [max_trials // jobs + (i < max_trials % jobs) for i in range(jobs)]
    ran = Parallel(n_jobs=jobs, backend="loky")(
        delayed(run_worker)(ctx, s, [callback]) for s in shares if s is None or s > 0
    )
    return int(sum(ran))


def train_engine(cfg: TrainConfig):
    from pipelines._sweep import Engine

    return Engine.resolve(cfg.workers, cfg.scheduler)
