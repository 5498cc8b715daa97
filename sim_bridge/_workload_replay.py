"""Data-file rows to jobs: SWIM rows as SWIM's replay derives them, Alibaba 2017 rows one
stage per job.

Examples
--------
>>> [j.job_id for j in ali2017_jobs([(5.0, 9.0, "j1", "t1", 2)], hours=None, scale=1.0)]
['ALI2017-j1']
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence

import numpy as np

from sim_bridge._workload_spec import JobSpec

__all__ = ["ali2017_jobs", "swim_jobs"]


def swim_jobs(
    rows: Iterable[tuple[str, float, float, float, float]],
    name: str,
    *,
    hours: float | None,
    scale: float,
    block_size: float = 64 * 2**20,
    reduce_bytes: float = 2**30,
    map_mb_s: float = 3.0,
    shuffle_mb_s: float = 4.0,
    write_mb_s: float = 6.0,
    overhead_s: float = 3.0,
) -> list[JobSpec]:
    """SWIM rows -> jobs, as SWIM's replay derives them.

    ``scale`` multiplies every byte count (SWIM scales data by the ratio of cluster sizes);
    maps = ceil(input / block_size) (at least 1); reduces = ceil(shuffle / reduce_bytes)
    (none when shuffle is 0). Map work = bytes read / map rate + start-up overhead; reduce work
    = shuffle bytes / shuffle rate + output bytes / write rate + overhead. ``hours`` keeps the
    jobs submitted in the first ``hours`` hours.

    Examples
    --------
    >>> js = swim_jobs([("job0", 10, 200 * 2**20, 0, 5), ("job1", 7300, 1, 1, 1)], "FB2009",
    ...                hours=2, scale=1.0)
    >>> len(js), js[0].map_work.size, js[0].reduce_work.size
    (1, 4, 0)
    """
    jobs = []
    limit = math.inf if hours is None else hours * 3600.0
    mb = 2.0**20
    for jid, submit, inp, shuf, out in rows:
        if submit >= limit:
            continue
        inp, shuf, out = inp * scale, shuf * scale, out * scale
        n_maps = max(1, math.ceil(inp / block_size))
        per = np.full(n_maps, block_size)
        per[-1] = max(inp - block_size * (n_maps - 1), 0.0)
        map_work = overhead_s + per / (map_mb_s * mb)
        if shuf > 0:
            n_red = max(1, math.ceil(shuf / reduce_bytes))
            red = (
                overhead_s
                + (shuf / n_red) / (shuffle_mb_s * mb)
                + (out / n_red) / (write_mb_s * mb)
            )
            reduce_work = np.full(n_red, red)
        else:
            reduce_work = np.empty(0)
        jobs.append(JobSpec(f"{name}-{jid}", float(submit), map_work, reduce_work, name))
    return jobs


def ali2017_jobs(
    rows: Sequence[tuple[float, float, str, str, int]], *, hours: float | None, scale: float
) -> list[JobSpec]:
    """Alibaba 2017 rows -> jobs: one stage per job, one simulated task per instance
    (``round(instances * scale)`` of them), base work = the task's end - create time
    (at least 1 s; an upper bound of the instance run time, the trace has nothing finer).
    Arrival = the job's earliest create time, shifted so the trace starts at 0.

    A task whose ``instances * scale`` is below 1 is kept (as one instance) with that
    probability, decided by a stable hash of its job and task ids (no random state), so the
    offered work keeps shrinking in proportion to ``scale``; a job left without tasks is
    dropped."""
    if not rows:
        return []
    t0 = min(r[0] for r in rows)
    by_job: dict[str, list] = {}
    for r in rows:
        by_job.setdefault(r[2], []).append(r)
    limit = math.inf if hours is None else hours * 3600.0
    jobs = []
    for jid, rs in by_job.items():
        submit = min(r[0] for r in rs) - t0
        if submit >= limit:
            continue
        works = []
        for create, end, _j, tid, inst in sorted(rs, key=lambda r: (r[0], r[3])):
            expected = inst * scale
            if expected >= 1.0:
                n = round(expected)
            else:
                n = int(zlib.crc32(f"{jid}/{tid}".encode()) / 2.0**32 < expected)
            if n:
                works.append(np.full(n, max(end - create, 1.0)))
        if not works:
            continue
        jobs.append(
            JobSpec(
                f"ALI2017-{jid}",
                float(submit),
                np.concatenate(works),
                (),
                "ALI2017",
                phases=("task", "reduce"),
            )
        )
    return jobs
