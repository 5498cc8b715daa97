"""The CPU persistence facts: autocorrelation of the synthetic CPU load at 5, 20 and 60 minutes
against the Alibaba 2018 machines (when their file is in the data directory).

Examples
--------
>>> synthetic_cpu(2, 0.01, seed=1).shape
(2, 14)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pipelines._fidelity_bands import ACF_LAGS_MIN, FactResult
from pipelines._fidelity_plan import FidelityProfile

__all__ = ["acf_facts", "real_cpu", "synthetic_cpu"]


def _acf(series: np.ndarray, lags: Sequence[int]) -> tuple[np.ndarray, str]:
    """Within-machine autocorrelation (:func:`sim_bridge.world.autocorrelation`, the one
    estimator the persistence fit uses too) and the name of the estimator."""
    from sim_bridge.world import autocorrelation

    return (
        np.asarray(autocorrelation(series, [int(k) for k in lags]), dtype=float),
        "sim_bridge.world.autocorrelation (within-machine)",
    )


def synthetic_cpu(nodes: int, days: float, seed: int = 0, dt: float = 60.0) -> np.ndarray:
    """The synthetic CPU background levels ``(nodes, steps)`` of ``Cluster(nodes, 2, seed)``.

    Examples
    --------
    >>> synthetic_cpu(3, 0.01).shape
    (3, 14)
    """
    from sim_bridge import Cluster

    steps = int(days * 86400.0 / dt)
    cluster = Cluster(int(nodes), 2, int(seed), dt=dt)
    node = np.repeat(np.arange(nodes), steps)
    times = np.tile(np.arange(steps) * dt, nodes)
    return cluster.levels_at(node, times)[0].reshape(nodes, steps)


def real_cpu(data_dir: Path, dt: float = 60.0) -> np.ndarray | None:
    """The Alibaba 2018 machines' CPU levels ``(machines, steps)``, None without the file."""
    from sim_bridge._alibaba2018 import MACHINE_USAGE_FILE, load_machine_levels

    path = Path(data_dir) / MACHINE_USAGE_FILE
    if not path.is_file():
        return None
    _ids, levels = load_machine_levels(path, dt)
    return levels[0]


def acf_facts(profile: FidelityProfile, data_dir: Path, seed: int) -> tuple[list[FactResult], dict]:
    """The CPU autocorrelation facts (synthetic vs Alibaba 2018) and the curves to plot."""
    lags = [int(m) for m in ACF_LAGS_MIN]
    curve_lags = list(range(0, 121))
    syn = synthetic_cpu(profile.acf_nodes, profile.acf_days, seed)
    syn_acf, method = _acf(syn, lags)
    syn_curve, _ = _acf(syn, curve_lags)
    real = real_cpu(data_dir)
    plot = {"lags": curve_lags, "synthetic": syn_curve, "real": None}
    out = []
    if real is None:
        for lag, v in zip(lags, syn_acf, strict=True):
            out.append(
                FactResult(
                    f"cpu_acf_{lag}min",
                    "-",
                    None,
                    note=f"not measured (no Alibaba 2018 machine usage under {data_dir}); "
                    f"synthetic {v:.3f}",
                )
            )
        return out, plot
    real_acf, _ = _acf(real, lags)
    plot["real"], _ = _acf(real, curve_lags)
    for lag, s, r in zip(lags, syn_acf, real_acf, strict=True):
        band = (float(r) - 0.1, float(r) + 0.1)
        out.append(
            FactResult(
                f"cpu_acf_{lag}min",
                "-",
                float(s),
                band=band,
                passed=bool(abs(s - r) <= 0.1),
                extra={"real": float(r), "method": method},
            )
        )
    return out, plot
