"""Run many independent simulations or fits: in this process, or on a Dask cluster.

A *sweep* is a list of :class:`SweepTask` (a key naming the task's identity, a picklable
function and its arguments, and optionally the keys of earlier tasks whose results it needs).
:func:`run_sweep` runs them under an :class:`Engine`:

- ``Engine()`` (no option): one after the other in this process, exactly as the commands ran
  before Dask existed. No cluster is started and ``dask`` is never imported.
- ``Engine(workers=N)`` (``--workers N``): a ``LocalCluster`` of N single-threaded worker
  processes on 127.0.0.1 without a dashboard, started for the sweep and closed after it.
- ``Engine(scheduler="tcp://HOST:PORT")`` (``--scheduler``, or the environment variable
  ``STRAGGLER_DASK_SCHEDULER``): the tasks go to an existing Dask cluster.

Whatever the engine, the results are the same: every random choice of a task comes from its
own arguments (use :func:`task_seed` to derive a seed from a root seed and the task's key),
never from the worker that runs it, and results come back keyed by task, in task order. A task
whose worker dies is resubmitted by the scheduler (``retries``); the others are unaffected.
One progress bar on the client counts finished tasks, however many workers there are.

Dask is an optional extra (``pip install 'straggler-mtl[dask]'``); asking for it without it
installed raises :class:`DaskNotInstalledError` (the CLI prints it and exits 2).

Examples
--------
>>> tasks = [SweepTask(f"x={x}", pow, (x, 2)) for x in range(4)]
>>> run_sweep(tasks, progress=False)
{'x=0': 0, 'x=1': 1, 'x=2': 4, 'x=3': 9}
>>> Engine().uses_dask, Engine(workers=2).uses_dask
(False, True)
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Environment variable naming an existing Dask scheduler (``tcp://HOST:PORT``).
SCHEDULER_ENV = "STRAGGLER_DASK_SCHEDULER"
#: How to install the optional Dask extra.
INSTALL_HINT = "pip install 'straggler-mtl[dask]'"
#: Times the scheduler resubmits a task whose worker died before giving up.
DEFAULT_RETRIES = 3


class DaskNotInstalledError(ValueError):
    """Dask was asked for (``--workers``/``--scheduler``) but ``dask.distributed`` is missing."""


@dataclass(frozen=True)
class Engine:
    """Where a sweep runs: locally (default), a local Dask cluster, or an existing one.

    Parameters
    ----------
    workers : int, optional
        Start a ``LocalCluster`` of this many worker processes (one thread each).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://HOST:PORT``); wins over ``workers``
        only if ``workers`` is None (giving both is an error).
    retries : int
        Resubmissions of a task that raised, per task (Dask's ``retries``). A task whose
        worker died is rescheduled by the scheduler anyway, up to Dask's
        ``distributed.scheduler.allowed-failures`` (3) deaths.

    Examples
    --------
    >>> Engine.resolve(workers=None, scheduler=None, environ={}).describe()
    'local (this process)'
    >>> Engine.resolve(None, None, environ={SCHEDULER_ENV: "tcp://h:8786"}).describe()
    'Dask scheduler tcp://h:8786'
    >>> Engine(workers=0)
    Traceback (most recent call last):
    ...
    ValueError: --workers must be an integer >= 1, got 0
    """

    workers: int | None = None
    scheduler: str | None = None
    retries: int = DEFAULT_RETRIES

    def __post_init__(self) -> None:
        if self.workers is not None and not (isinstance(self.workers, int) and self.workers >= 1):
            raise ValueError(f"--workers must be an integer >= 1, got {self.workers!r}")
        if self.workers is not None and self.scheduler:
            raise ValueError(
                f"--workers {self.workers} and --scheduler {self.scheduler!r}: give one of them"
            )
        if self.scheduler is not None and "://" not in self.scheduler:
            raise ValueError(
                f"--scheduler must be an address like tcp://HOST:PORT, got {self.scheduler!r}"
            )
        if not (isinstance(self.retries, int) and self.retries >= 0):
            raise ValueError(f"retries must be an integer >= 0, got {self.retries!r}")

    @classmethod
    def resolve(
        cls,
        workers: int | None = None,
        scheduler: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Engine:
        """The engine of the command-line options, then of ``STRAGGLER_DASK_SCHEDULER``."""
        env = os.environ if environ is None else environ
        if scheduler is None and workers is None:
            scheduler = env.get(SCHEDULER_ENV) or None
        return cls(workers=workers, scheduler=scheduler)

    @property
    def uses_dask(self) -> bool:
        """True when the sweep goes to Dask (a local cluster or an existing scheduler)."""
        return self.workers is not None or bool(self.scheduler)

    def describe(self) -> str:
        """One line saying where the work runs."""
        if self.scheduler:
            return f"Dask scheduler {self.scheduler}"
        if self.workers is not None:
            return f"Dask LocalCluster of {self.workers} process(es) on 127.0.0.1"
        return "local (this process)"


@dataclass(frozen=True)
class SweepTask:
    """One independent unit of a sweep.

    Parameters
    ----------
    key : str
        The task's identity (unique in the sweep), e.g. ``"seed=3/policy=mtl"``. It names the
        result and seeds the task (:func:`task_seed`), so it must not depend on the engine.
    fn : callable
        A module-level (picklable) function.
    args, kwargs
        Its arguments (picklable; they travel to the worker).
    after : tuple of str
        Keys of earlier tasks whose results ``fn`` needs; they are passed as the keyword
        argument ``upstream={key: result}``.
    """

    key: str
    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    after: tuple[str, ...] = ()


def task_seed(root: int, key: str) -> int:
    """A 32-bit seed for the task ``key`` of a sweep seeded with ``root``.

    ``numpy.random.SeedSequence(root, spawn_key=...)`` keyed by a stable digest of the task's
    identity: the same on every machine and worker, independent between tasks.

    Examples
    --------
    >>> task_seed(0, "seed=1") == task_seed(0, "seed=1") != task_seed(0, "seed=2")
    True
    >>> task_seed(0, "seed=1") != task_seed(1, "seed=1")
    True
    """
    import numpy as np

    digest = hashlib.blake2b(key.encode(), digest_size=16).digest()
    spawn_key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return int(np.random.SeedSequence(int(root), spawn_key=spawn_key).generate_state(1)[0])


def require_dask():
    """Import and return ``distributed``, or raise :class:`DaskNotInstalledError`."""
    try:
        import distributed
    except ImportError as exc:
        raise DaskNotInstalledError(
            f"Dask is not installed (asked for by --workers/--scheduler/{SCHEDULER_ENV}); "
            f"install it with: {INSTALL_HINT}"
        ) from exc
    return distributed


@contextlib.contextmanager
def dask_client(engine: Engine) -> Iterator[Any]:
    """A ``distributed.Client`` for ``engine`` (None when it runs locally).

    With ``workers`` a ``LocalCluster`` (processes, one thread each, 127.0.0.1, no dashboard)
    is started here and closed on exit; with ``scheduler`` the client connects to it.
    """
    if not engine.uses_dask:
        yield None
        return
    distributed = require_dask()
    if engine.scheduler:
        with distributed.Client(engine.scheduler) as client:
            yield client
        return
    with (
        distributed.LocalCluster(
            n_workers=engine.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_port=0,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


_SESSION: contextvars.ContextVar[tuple[Engine, Any] | None] = contextvars.ContextVar(
    "straggler_sweep_session", default=None
)


@contextlib.contextmanager
def sweep_session(engine: Engine | None = None) -> Iterator[Any]:
    """Run every :func:`run_sweep` inside the block (that gives no engine) on ``engine``.

    One Dask client (and one ``LocalCluster`` with ``--workers``) serves all the sweeps of a
    command, however deep in the code they are; yields the client (None when local).

    Examples
    --------
    >>> with sweep_session(Engine()):
    ...     run_sweep([SweepTask("a", abs, (-1,))], progress=False)
    {'a': 1}
    """
    engine = engine or Engine()
    with dask_client(engine) as client:
        token = _SESSION.set((engine, client))
        try:
            yield client
        finally:
            _SESSION.reset(token)


def _check_tasks(tasks: Sequence[SweepTask]) -> None:
    seen: set[str] = set()
    for t in tasks:
        if t.key in seen:
            raise ValueError(f"sweep task key {t.key!r} appears twice")
        missing = [k for k in t.after if k not in seen]
        if missing:
            raise ValueError(f"sweep task {t.key!r} needs {missing}, which do not come before it")
        seen.add(t.key)


def _progress(total: int, desc: str, unit: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled)


def run_sweep(
    tasks: Sequence[SweepTask],
    engine: Engine | None = None,
    *,
    client: Any = None,
    desc: str = "sweep",
    unit: str = "task",
    progress: bool = True,
    on_result: Callable[[str, Any], None] | None = None,
) -> dict[str, Any]:
    """Run ``tasks`` and return ``{key: result}`` in task order.

    Parameters
    ----------
    tasks : sequence of SweepTask
    engine : Engine, optional
        Where to run; by default the engine of the enclosing :func:`sweep_session`, else
        local. Ignored when ``client`` is given.
    client : distributed.Client, optional
        An open client to reuse (e.g. across several sweeps of one command).
    desc, unit : str
        Label of the progress bar (one bar, on the client).
    progress : bool
        Show the bar.
    on_result : callable, optional
        ``on_result(key, result)`` on the client as each task finishes (in completion order):
        the place for side effects that must not run concurrently (MLflow logging, ...).

    Examples
    --------
    >>> def add(a, b, upstream=None):
    ...     return a + b + sum((upstream or {}).values())
    >>> ts = [SweepTask("a", add, (1, 2)), SweepTask("b", add, (10, 0), after=("a",))]
    >>> run_sweep(ts, progress=False)
    {'a': 3, 'b': 13}
    """
    _check_tasks(tasks)
    session = _SESSION.get()
    if engine is None and client is None and session is not None:
        engine, client = session
    engine = engine or Engine()
    if client is None and engine.uses_dask:
        with dask_client(engine) as c:
            return _run_dask(tasks, c, engine.retries, desc, unit, progress, on_result)
    if client is not None:
        return _run_dask(tasks, client, engine.retries, desc, unit, progress, on_result)
    results: dict[str, Any] = {}
    with _progress(len(tasks), desc, unit, progress) as bar:
        for t in tasks:
            kwargs = dict(t.kwargs)
            if t.after:
                kwargs["upstream"] = {k: results[k] for k in t.after}
            results[t.key] = t.fn(*t.args, **kwargs)
            if on_result is not None:
                on_result(t.key, results[t.key])
            bar.update(1)
    return results


def _run_dask(tasks, client, retries, desc, unit, progress, on_result) -> dict[str, Any]:
    distributed = require_dask()
    futures: dict[str, Any] = {}
    keys: dict[str, str] = {}
    token = uuid.uuid4().hex[:8]
    shared: dict[int, Any] = {}

    def ship(value):  # arrays and frames shared by many tasks travel to the cluster once
        if type(value).__module__.split(".")[0] not in ("numpy", "pandas"):
            return value
        if id(value) not in shared:
            shared[id(value)] = (client.scatter(value, hash=False), value)
        return shared[id(value)][0]

    for t in tasks:
        args = tuple(ship(a) for a in t.args)
        kwargs = {k: ship(v) for k, v in t.kwargs.items()}
        if t.after:
            kwargs["upstream"] = {k: futures[k] for k in t.after}
        # the Dask key carries the task's identity (readable in the dashboard); a token keeps
        # it unique across sweeps that share a long-lived cluster
        fut = client.submit(
            t.fn,
            *args,
            **kwargs,
            key=f"{desc}-{t.key}-{token}",
            retries=retries,
            pure=False,
        )
        futures[t.key] = fut
        keys[fut.key] = t.key
    results: dict[str, Any] = {}
    try:
        with _progress(len(tasks), desc, unit, progress) as bar:
            for fut in distributed.as_completed(list(futures.values())):
                key = keys[fut.key]
                results[key] = fut.result()
                if on_result is not None:
                    on_result(key, results[key])
                bar.update(1)
    finally:
        for fut in futures.values():
            fut.release()
    return {t.key: results[t.key] for t in tasks}
