"""The runs of ``straggler compare``: fresh periods on the training trace's cluster (new job
draws, FB-2009's second day, later contention) and one simulation per period and policy."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

from pipelines._compare_config import CompareConfig
from pipelines._compare_stats import ALL, jct_statistics

#: FB-2009's second day sample, the fresh period of the paper's experiment.
FB2009_DAY = 1


def _shifted(workload, offset: float):
    """The same jobs, ``offset`` seconds later (explicit deadlines move with them)."""
    import sim_bridge

    jobs = [
        dataclasses.replace(
            j,
            submit_time=j.submit_time + offset,
            deadline=None if j.deadline is None else j.deadline + offset,
        )
        for j in workload.jobs
    ]
    return sim_bridge.Workload(
        workload.name,
        jobs,
        profiles=dict(workload.profiles),
        tail_alpha=workload.tail_alpha,
        source=workload.source,
    )


def _work(workload) -> float:
    return float(sum(j.map_work.sum() + j.reduce_work.sum() for j in workload.jobs))


def fresh_workloads(cfg: CompareConfig, setup: dict, k: int) -> tuple[list, dict[str, dict]]:
    """Workloads of fresh period ``k``: new draws, FB-2009's second day, shifted in time.

    With ``cfg.match_load`` each workload's data scale is set so that its total base work
    equals the training period's (FB-2009's second day sample carries ~90x more work than
    the first in its first hour at the same scale; a saturated cluster leaves placement no
    choice, an idle one no stragglers to avoid). Returns the workloads and, per name, the
    source file and the scale used.
    """
    import sim_bridge

    root = sim_bridge.resolve_data_dir(cfg.data_dir)
    day_file = root / "swim" / f"FB-2009_samples_24_times_1hr_{FB2009_DAY}.tsv"
    loaded, info = [], {}
    for j, name in enumerate(cfg.workloads):
        day = FB2009_DAY if name == "FB2009" and day_file.is_file() else 0
        scale = setup["scales"].get(name, 1.0)

        def load(scale, seed, day, name=name):
            return sim_bridge.load_workload(
                name, cfg.data_dir, hours=setup["hours"], scale=scale, seed=seed, day=day
            )

        # alone on the cluster (layout "separate") a workload's draws do not depend on the
        # others listed, as in collect's cells
        alone = setup["layout"] == "separate"
        seed = setup["test_seed"] + 17 * k + (0 if alone else j)
        w = load(scale, seed, day)
        target = None
        if cfg.match_load:
            # the training period of this workload, as straggler collect loaded it
            # collect seeds workload k of a cell with seed + k; alone in its cell, k is 0
            order = setup["train_order"]
            k_train = 0 if alone else order.index(name) if name in order else j
            target = _work(load(scale, setup["train_seed"] + k_train, 0))
            for _ in range(3):  # the task count is a step function of the scale
                got = _work(w)
                if not got > 0 or abs(got / target - 1.0) < 0.05:
                    break
                scale *= target / got
                w = load(scale, seed, day)
        info[name] = {
            "source": w.source,
            "day": day,
            "scale": scale,
            "base_work": _work(w),
            "train_base_work": target,
            "jobs": len(w.jobs),
        }
        loaded.append(_shifted(w, setup["offset"] * (k + 1)))
    return loaded, info


def _metrics(jobs, tasks, workloads: list[str]) -> dict[str, dict[str, float]]:
    out = {}
    for w in [*workloads, ALL]:
        jsel = jobs if w == ALL else jobs[jobs["workload"] == w]
        tsel = tasks if w == ALL else tasks[tasks["workload"] == w]
        m = jct_statistics(jsel["jct"].to_numpy())
        m["task_seconds"] = float((tsel["end_time"] - tsel["launch_time"]).sum())
        m["jobs"] = int(len(jsel))
        m["attempts"] = int(len(tsel))
        m["copies"] = int((tsel["attempt"] > 0).sum())
        out[w] = m
    return out


def task_key(k: int, policy: str) -> str:
    return f"seed={k}/policy={policy}"


#: The last fresh period built in this process (a local sweep runs seed after seed, so every
#: policy of a seed simulates the same workload objects, as before sweeps ran on Dask).
_PERIOD_CACHE: dict[str, tuple] = {}


def _fresh_period(cfg: CompareConfig, setup: dict, k: int) -> tuple[list, dict[str, dict]]:
    key = json.dumps([dataclasses.asdict(cfg), setup, k], sort_keys=True, default=str)
    if key not in _PERIOD_CACHE:
        _PERIOD_CACHE.clear()
        _PERIOD_CACHE[key] = fresh_workloads(cfg, setup, k)
    return _PERIOD_CACHE[key]


def run_policy(
    cfg: CompareConfig,
    setup: dict,
    k: int,
    pol: str,
    predictor=None,
    upstream: dict[str, dict] | None = None,
) -> dict:
    """One run of ``compare``: policy ``pol`` + speculation on fresh period ``k``.

    A sweep task (:mod:`pipelines._sweep`): everything it draws comes from ``setup`` and
    ``k``, so it gives the same result on any worker. The random-refusal control (``pol ==
    "random"``) needs the MTL run of the same period (``upstream``) for its refusal rate.

    Returns
    -------
    dict
        ``run`` (the record of ``summary.json``'s ``runs``), ``jct`` (workload -> job
        completion times, ``ALL`` included), ``refusal_rate`` and ``sources``.
    """
    import pandas as pd

    import sim_bridge
    from sim_bridge.policies._predictor import refusal_rate

    workloads, sources = _fresh_period(cfg, setup, k)
    actual = [w.name for w in workloads]
    # as the trace was collected: the workloads together on one cluster, or each alone on it
    # (collect --layout separate), every run with the same seed and machines
    groups = [[w] for w in workloads] if setup["layout"] == "separate" else [workloads]
    results, placements = [], []
    for group in groups:
        placement = _placement(cfg, setup, k, pol, group, predictor, upstream)
        results.append(
            sim_bridge.simulate(
                group,
                cfg.speculation,
                placement,
                nodes=setup["nodes"],
                slots=setup["slots"],
                seed=setup["test_seed"] + k,
                cluster_seed=setup["cluster_seed"],
                data_dir=cfg.data_dir,
                counters=setup["counters"],
                beta=cfg.beta,
                progress=False,
                record_counters=False,
            )
        )
        placements.append(placement)
    jobs = pd.concat([r.jobs for r in results], ignore_index=True)
    tasks = pd.concat([r.tasks for r in results], ignore_index=True)
    wl_names = sorted(set(actual))
    stats: dict[str, Any] = {}
    for placement in placements:
        for key, value in getattr(placement, "stats_", {}).items():
            stats[key] = stats.get(key, 0) + value
    # one run: its share; several (one per workload): their mean weighted by attempts
    share = results[0].summary.get("straggler_share")
    if len(results) > 1:
        pairs = [(r.summary.get("straggler_share"), len(r.tasks)) for r in results]
        known = [(v, n) for v, n in pairs if v is not None and np.isfinite(v) and n]
        share = float(sum(v * n for v, n in known) / sum(n for _, n in known)) if known else None
    run = {
        "seed_index": k,
        "seed": setup["test_seed"] + k,
        "policy": pol,
        "metrics": _metrics(jobs, tasks, wl_names),
        "placement_stats": stats,
        # the control's refusal rate: the MTL run's of the same seed
        "refusal_rate": float(placements[0].refusal_rate) if pol == "random" else None,
        "wall_seconds": float(sum(r.summary["wall_seconds"] for r in results)),
        "straggler_share": share,
    }
    jct = {}
    for w in [*wl_names, ALL]:
        sel = jobs if w == ALL else jobs[jobs["workload"] == w]
        jct[w] = sel["jct"].to_numpy()
    # over every run of the period, as one run's refusal_rate_ (the same counts summed)
    refusal = refusal_rate(stats) if stats else None
    return {"run": run, "jct": jct, "refusal_rate": refusal, "sources": sources}


def _placement(cfg: CompareConfig, setup: dict, k: int, pol: str, workloads, predictor, upstream):
    """A fresh placement of policy ``pol`` for one simulation of ``workloads``."""
    import sim_bridge
    from sim_bridge import PredictorPlacement
    from sim_bridge.policies import RandomRefusalPlacement

    if pol == "spec":
        return sim_bridge.DEFAULT_PLACEMENT
    if pol == "random":
        mtl_rate = next(iter((upstream or {}).values()), {}).get("refusal_rate")
        return RandomRefusalPlacement(
            refusal_rate=finite_rate(mtl_rate),
            max_wait=cfg.max_wait,
            seed=setup["test_seed"] + k,
        )
    if pol == "oracle":
        return PredictorPlacement(
            _oracle(cfg, setup, workloads),
            max_wait=cfg.max_wait,
            refresh=cfg.refresh,
            mode=cfg.mode,
        )
    return PredictorPlacement(predictor, max_wait=cfg.max_wait, refresh=cfg.refresh, mode=cfg.mode)


def _oracle(cfg: CompareConfig, setup: dict, workloads: list):
    """The slowdown oracle of the test runs: a twin of their cluster, the workloads'
    profiles (an upper bound for what a predictor of the node state can gain)."""
    import sim_bridge

    data_dir = None
    if setup["counters"] == "alibaba2018":
        data_dir = sim_bridge.resolve_data_dir(cfg.data_dir)
    cluster = sim_bridge.Cluster(
        setup["nodes"],
        setup["slots"],
        setup["cluster_seed"],
        source=setup["counters"],
        data_dir=data_dir,
    )
    return sim_bridge.SlowdownOracle(cluster, workloads, beta=cfg.beta)


def finite_rate(rate) -> float:
    """A refusal rate for the control: the MTL run's, or 0 when it looked at no node."""
    return float(rate) if rate is not None and np.isfinite(rate) else 0.0
