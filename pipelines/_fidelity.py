"""``straggler fidelity``: the simulated world's stylized facts beside their published bands.

:func:`run_fidelity` takes a :class:`~pipelines._fidelity_config.FidelityConfig`, runs the
simulations, measures every fact per workload and writes ``fidelity.csv``, ``fidelity.md``,
``summary.json`` and two PNG plots. A fact passes when its estimate (for the multi-seed
comparisons: its corrected interval) sits in its band; a failed band is a finding, not an error.

Each job has its own module:

- :mod:`pipelines._fidelity_bands`: the facts (:data:`FACTS`), their bands and sources, and
  the result row of a measured fact;
- :mod:`pipelines._fidelity_trace_facts`: the straggler share at beta 1.3 (stage label), the
  p90 of a straggler's duration over its stage median, the share of stragglers that would not
  straggle on the median node at that instant (needs the simulator's ``record_truth``
  columns) and the ROC-AUC of the counters alone on a held-out later period, below the
  true-state AUC;
- :mod:`pipelines._fidelity_acf`: the autocorrelation of the synthetic CPU load at 5, 20 and
  60 minutes against the Alibaba 2018 machines;
- :mod:`pipelines._fidelity_intervals`: the oracle placement gain in mean JCT over
  speculation alone, and LATE and Mantri against no speculation in p99 JCT, as paired
  per-seed relative differences with Student t-intervals Bonferroni-corrected over all the
  comparisons of a run (family-wise 95%), Holm-adjusted p-values beside them;
- :mod:`pipelines._fidelity_plan` (sizes, workloads, seeds) and :mod:`pipelines._fidelity_runs`
  (the simulations they need);
- :mod:`pipelines._fidelity_outputs`: the table, the plots, ``summary.json`` and the printed
  lines.

Examples
--------
>>> import numpy as np
>>> round(straggler_share(np.array([0.0, 1.0, np.nan, 0.0])), 3)
0.333
>>> holm([0.01, 0.04, 0.03])[0].round(2).tolist()
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pipelines._fidelity_acf import acf_facts, real_cpu, synthetic_cpu
from pipelines._fidelity_bands import ACF_LAGS_MIN, FACTS, Fact, FactResult, in_band
from pipelines._fidelity_config import FidelityConfig
from pipelines._fidelity_intervals import (
    bonferroni_level,
    comparison_facts,
    paired_relative_gain,
    t_interval,
)
from pipelines._fidelity_outputs import (
    build_summary,
    result_lines,
    table_rows,
    to_csv,
    to_markdown,
    write_table_and_plots,
)
from pipelines._fidelity_plan import (
    PROFILES,
    REAL_WORKLOADS,
    FidelityPlan,
    FidelityProfile,
    choose_workloads,
    plan_fidelity,
)
from pipelines._fidelity_runs import calibrate_scales, quiet_simulator, reference_run, seed_runs
from pipelines._fidelity_trace_facts import (
    NOT_MEASURED_TRUTH,
    TRUTH_COLUMNS,
    counters_auc,
    median_node_share,
    roc_auc,
    stage_medians,
    straggler_ratios,
    straggler_share,
    time_split,
    trace_facts,
)
from pipelines._metrics import holm

__all__ = [
    "ACF_LAGS_MIN",
    "FACTS",
    "NOT_MEASURED_TRUTH",
    "PROFILES",
    "REAL_WORKLOADS",
    "TRUTH_COLUMNS",
    "Fact",
    "FactResult",
    "FidelityConfig",
    "FidelityPlan",
    "FidelityProfile",
    "acf_facts",
    "bonferroni_level",
    "choose_workloads",
    "comparison_facts",
    "counters_auc",
    "holm",
    "in_band",
    "measure",
    "median_node_share",
    "paired_relative_gain",
    "plan_fidelity",
    "real_cpu",
    "roc_auc",
    "run_fidelity",
    "seed_runs",
    "stage_medians",
    "straggler_ratios",
    "straggler_share",
    "synthetic_cpu",
    "t_interval",
    "table_rows",
    "time_split",
    "to_csv",
    "to_markdown",
    "trace_facts",
]


def measure(
    plan: FidelityPlan, say: Callable[[str], None] = print
) -> tuple[list[FactResult], dict, dict[str, np.ndarray], dict[str, dict]]:
    """Run the plan's simulations and measure every fact (in :data:`FACTS` order).

    Calibrates the scales into ``plan.sim["scales"]``; the simulator's log is kept below
    errors meanwhile.

    Returns
    -------
    results : list of FactResult
    acf_plot : dict
        The CPU autocorrelation curves (:func:`pipelines._fidelity_outputs.plot_acf`).
    ratios : dict
        Per workload, the stragglers' duration over stage median.
    runs : dict
        Per workload, the per-seed numbers of :func:`seed_runs`.
    """
    cfg = plan.sim
    results: list[FactResult] = []
    ratios: dict[str, np.ndarray] = {}
    runs: dict[str, dict] = {}
    with quiet_simulator():
        cfg["scales"] = calibrate_scales(plan)
        for w in plan.workloads:
            ref = reference_run(w, cfg)
            say(f"  {w} reference run (no speculation, seed 0): {len(ref.tasks)} attempts")
            facts, plot = trace_facts(ref.tasks, w, cfg["beta"])
            below = facts[1].extra["below_stage_threshold"]
            if below > 0.01:
                say(
                    f"  note: {below:.0%} of the {w} stragglers labelled by "
                    "sim_bridge.label_stragglers run within beta x their stage median (the "
                    "label is not per stage)"
                )
            results += facts
            ratios[w] = plot["ratios"]
            runs[w] = seed_runs(w, cfg, plan.seeds, say)
        acf, acf_plot = acf_facts(plan.profile, plan.data_dir, seed=0)
        results += acf
        results += comparison_facts(runs)
    order = {f.key: i for i, f in enumerate(FACTS)}
    results.sort(key=lambda r: (order[r.key], r.workload))
    return results, acf_plot, ratios, runs


def run_fidelity(
    config: FidelityConfig | str | Path,
    *,
    profile: str | FidelityProfile | None = None,
    say: Callable[[str], None] = print,
    **settings: Any,
) -> dict[str, Any]:
    """Measure every fact, write the table, plots and ``summary.json`` into ``config.out``.

    Parameters
    ----------
    config : FidelityConfig
        The run (``straggler fidelity``'s flags): ``out`` (created), ``quick``, ``workloads``
        (default: FB2009 and FB2010 when their files are in the data directory, else SYN),
        ``seeds``, ``nodes``, ``slots``, ``hours`` and ``load`` (override the profile),
        ``beta``, ``data_dir`` (see :func:`sim_bridge.resolve_data_dir`). The former call,
        an output directory followed by those settings as keywords
        (``run_fidelity(out, profile="quick", seeds=2)``), still works.
    profile : {"default", "quick"} or FidelityProfile, optional
        Sizes; default ``quick`` when ``config.quick``, else ``default``.
    say : callable
        Receives each progress and result line.
    **settings
        Only with an output directory for ``config``: the other fields of the config.

    Returns
    -------
    dict
        The summary written to ``summary.json``.

    Raises
    ------
    TypeError
        Settings given as keywords beside a FidelityConfig, or an unknown setting.
    ValueError
        Fewer than 2 seeds, or an unknown profile name.

    Examples
    --------
    >>> run_fidelity(FidelityConfig(out="o"), seeds=3)
    Traceback (most recent call last):
    ...
    TypeError: run_fidelity: settings ['seeds'] go into the FidelityConfig, not beside it
    """
    if isinstance(config, FidelityConfig):
        if settings:
            raise TypeError(
                f"run_fidelity: settings {sorted(settings)} go into the FidelityConfig, "
                "not beside it"
            )
    else:
        config = FidelityConfig(out=str(config), **settings)
    wall0 = time.perf_counter()
    plan = plan_fidelity(config, profile)
    say(plan.describe())
    say(plan.workload_note)
    results, acf_plot, ratios, runs = measure(plan, say)
    out = Path(config.out)
    md = write_table_and_plots(out, results, acf_plot, ratios)
    modes = sorted({str(r.get("oracle_mode")) for r in runs.values()})
    summary = build_summary(plan, results, modes, out, time.perf_counter() - wall0)
    summary["complete"] = True  # the last file written, atomically: the run finished
    from pipelines._io import write_summary

    write_summary(out, summary)
    for line in result_lines(md, summary["interval_method"], modes, results):
        say(line)
    return summary
