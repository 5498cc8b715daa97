"""The simulations ``straggler fidelity`` needs: scales calibrated to the target load, one
reference run per workload that records the truth, and per seed the paired runs of no
speculation, LATE, Mantri and LATE with the oracle's placement.

Examples
--------
>>> import logging
>>> with quiet_simulator():
...     logging.getLogger("sim_bridge").level == logging.ERROR
True
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from pipelines._fidelity_plan import FidelityPlan

__all__ = ["calibrate_scales", "quiet_simulator", "reference_run", "seed_runs"]


@contextmanager
def quiet_simulator() -> Iterator[None]:
    """Silence the simulator's log below errors for the block (the runs are many)."""
    quiet = logging.getLogger("sim_bridge")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        yield
    finally:
        quiet.setLevel(level)


def calibrate_scales(plan: FidelityPlan) -> dict[str, float]:
    """Per workload: the scale whose runs realise the plan's load
    (:func:`pipelines._collect.scales_for_load`, each workload on its own)."""
    from pipelines._collect import scales_for_load

    sim = plan.sim
    return {
        w: scales_for_load(
            [w],
            sim["load"],
            nodes=sim["nodes"],
            slots=sim["slots"],
            hours=sim["hours"],
            data_dir=plan.data_dir,
        )[w]
        for w in plan.workloads
    }


def reference_run(workload: str, cfg: dict) -> Any:
    """The no-speculation run of seed 0 that records the truth columns (the trace facts')."""
    import sim_bridge

    return _simulate(workload, "none", sim_bridge.DEFAULT_PLACEMENT, cfg, 0, record_truth=True)


def _simulate(workload: str, policy: str, placement: Any, cfg: dict, seed: int, **kw):
    import sim_bridge

    return sim_bridge.simulate(
        workload,
        policy,
        placement,
        nodes=cfg["nodes"],
        slots=cfg["slots"],
        hours=cfg["hours"],
        scale=cfg["scales"][workload],
        seed=seed,
        data_dir=cfg["data_dir"],
        beta=cfg["beta"],
        progress=False,
        **kw,
    )


def _oracle_placement(workload: str, cfg: dict, seed: int) -> tuple[Any, str]:
    import sim_bridge

    oracle = sim_bridge.SlowdownOracle.for_simulation(
        [workload],
        nodes=cfg["nodes"],
        slots=cfg["slots"],
        seed=seed,
        data_dir=cfg["data_dir"],
        hours=cfg["hours"],
        beta=cfg["beta"],
    )
    return sim_bridge.PredictorPlacement(oracle, mode="rank"), "rank"


def seed_runs(
    workload: str, cfg: dict, seeds: int, say: Callable[[str], None]
) -> dict[str, np.ndarray]:
    """Per seed: mean JCT of LATE and LATE + oracle placement, p99 JCT of none/LATE/Mantri."""
    from sim_bridge import DEFAULT_PLACEMENT

    keys = ("none_p99", "late_p99", "mantri_p99", "late_mean", "oracle_mean")
    rec: dict[str, list[float]] = {k: [] for k in keys}
    mode = ""
    for s in range(seeds):
        t0 = time.perf_counter()
        none = _simulate(workload, "none", DEFAULT_PLACEMENT, cfg, s).summary
        late = _simulate(workload, "late", DEFAULT_PLACEMENT, cfg, s).summary
        mantri = _simulate(workload, "mantri", DEFAULT_PLACEMENT, cfg, s).summary
        placement, mode = _oracle_placement(workload, cfg, s)
        oracle = _simulate(workload, "late", placement, cfg, s).summary
        for k, v in zip(
            keys,
            (
                none["p99_jct"],
                late["p99_jct"],
                mantri["p99_jct"],
                late["mean_jct"],
                oracle["mean_jct"],
            ),
            strict=True,
        ):
            rec[k].append(float(v))
        say(
            f"  {workload} seed {s + 1}/{seeds}: p99 JCT none {none['p99_jct']:.0f} s, "
            f"LATE {late['p99_jct']:.0f}, Mantri {mantri['p99_jct']:.0f}; mean JCT LATE "
            f"{late['mean_jct']:.0f}, LATE+oracle {oracle['mean_jct']:.0f} "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    out = {k: np.array(v) for k, v in rec.items()}
    out["oracle_mode"] = mode  # type: ignore[assignment]
    return out
