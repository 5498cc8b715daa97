"""The headline of a demo or report: what was trained, how good it is, what it gains.

:func:`headline` reads the ``summary.json`` files that ``straggler train``, ``compare``,
``fidelity`` and ``collect`` write and condenses them into one dictionary:

- ``trained``: the model variant, the trace it was trained on, the metric the grid was
  chosen by and the decision threshold with the rule that chose it;
- ``quality``: test ROC-AUC and PR-AUC beside their chance baselines (0.5 and the positive
  rate), accuracy beside the majority-class share, balanced accuracy;
- ``gains``: for each policy compare ran (the models, the random-refusal control, the
  oracle), the improvement over speculation alone in mean JCT, p99 JCT and task-seconds, in
  %, with a 95% Student-t interval over the per-seed improvements and the significance flag
  compare computed (its multiple-testing correction);
- ``fidelity``: the verdict of ``straggler fidelity`` (facts inside/outside their bands);
- ``verdict``: one sentence saying whether prediction helped here.

:func:`render_headline` turns it into the HTML box that opens the report.

The gains (:func:`compare_gains`, :func:`prediction_verdict`, :func:`t_interval`) live in
:mod:`pipelines._headline_gains`, the HTML box in :mod:`pipelines._headline_html`; both are
re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipelines._headline_gains import (
    ALL,
    CONTROLS,
    CORRECTIONS,
    GAIN_FIGURES,
    compare_gains,
    finite_number,
    prediction_verdict,
    t_interval,
)
from pipelines._headline_html import render_headline

__all__ = [
    "ALL",
    "CONTROLS",
    "CORRECTIONS",
    "GAIN_FIGURES",
    "compare_gains",
    "fidelity_verdict",
    "flat_figures",
    "headline",
    "model_quality",
    "prediction_verdict",
    "render_headline",
    "t_interval",
]


def model_quality(train: Mapping[str, Any]) -> dict[str, Any]:
    """Test ROC-AUC, PR-AUC, accuracy, balanced accuracy of a ``straggler train`` summary,
    each with its baseline (ROC-AUC 0.5, PR-AUC the positive rate, accuracy the majority
    share, balanced accuracy 0.5)."""
    t = train.get("test") or {}
    rows, pos = finite_number(t.get("rows")), finite_number(t.get("positives"))
    rate = finite_number(t.get("positive_rate"))
    if rate is None and rows:
        rate = (pos or 0.0) / rows
    major = finite_number(t.get("majority_accuracy"))
    if major is None and rate is not None:
        major = max(rate, 1 - rate)
    return {
        "roc_auc": finite_number(t.get("roc_auc")),
        "roc_auc_baseline": 0.5,
        "pr_auc": finite_number(t.get("pr_auc")),
        "pr_auc_baseline": rate,
        "accuracy": finite_number(t.get("accuracy")),
        "majority_accuracy": major,
        "balanced_accuracy": finite_number(t.get("balanced_accuracy")),
        "balanced_accuracy_baseline": 0.5,
        "test_rows": int(rows) if rows is not None else None,
        "positives": int(pos) if pos is not None else None,
    }


def fidelity_verdict(fidelity: Mapping[str, Any]) -> dict[str, Any]:
    """Counts of facts inside/outside their published bands and one line saying so."""
    counts = fidelity.get("counts") or {}
    n_pass, n_fail = int(counts.get("pass", 0)), int(counts.get("fail", 0))
    n_na = int(counts.get("not_measured", 0))
    failed = [
        f"{f.get('fact')} [{f.get('workload')}]"
        for f in fidelity.get("facts") or []
        if f.get("verdict") == "FAIL"
    ]
    measured = n_pass + n_fail
    text = f"{n_pass} of {measured} measured facts inside their published bands"
    text += f", {n_fail} outside" if n_fail else ""
    text += f", {n_na} not measured" if n_na else ""
    return {"pass": n_pass, "fail": n_fail, "not_measured": n_na, "failed": failed, "text": text}


def headline(
    *,
    train: Mapping[str, Any] | None = None,
    compare: Mapping[str, Any] | None = None,
    fidelity: Mapping[str, Any] | None = None,
    collect: Mapping[str, Any] | None = None,
    incomplete: Sequence[str] = (),
) -> dict[str, Any]:
    """The headline figures from the commands' summaries (any of them may be missing).

    ``incomplete`` names the commands whose summary was read from a directory still holding
    the incomplete-marker (an interrupted or running run): the headline is then not final,
    ``provisional`` says why and the verdict opens with it.

    Examples
    --------
    >>> h = headline(train={"test": {"rows": 10, "positives": 2, "accuracy": 0.8}})
    >>> h["quality"]["majority_accuracy"], h["quality"]["pr_auc_baseline"]
    (0.8, 0.2)
    >>> headline(train={"test": {}}, incomplete=["train"])["provisional"]
    'Not final: the train run is incomplete (interrupted or still running); numbers may be stale.'
    """
    out: dict[str, Any] = {}
    if train is not None:
        cfg = train.get("config") or {}
        out["trained"] = {
            "variant": cfg.get("variant"),
            "trace": cfg.get("traces"),
            "workloads": (train.get("data") or {}).get("workloads"),
            "rows": (train.get("data") or {}).get("rows"),
            "selected_by": cfg.get("metric"),
            "threshold": (train.get("threshold") or {}).get("value")
            or (train.get("best_params") or {}).get("threshold"),
            "threshold_rule": (train.get("threshold") or {}).get("rule", "grid"),
        }
        out["quality"] = model_quality(train)
    if collect is not None:
        out.setdefault("trained", {})["trace_source"] = collect.get("sources") or collect.get(
            "workloads"
        )
    if compare is not None:
        out["gains"] = compare_gains(compare)
        out["helped"], out["verdict"] = prediction_verdict(out["gains"])
    if fidelity is not None:
        out["fidelity"] = fidelity_verdict(fidelity)
    if incomplete:
        names = list(dict.fromkeys(str(c) for c in incomplete))
        runs = " and ".join(names) + (" runs are" if len(names) > 1 else " run is")
        out["incomplete"] = names
        out["provisional"] = (
            f"Not final: the {runs} incomplete (interrupted or still running); numbers may be "
            "stale."
        )
        if "verdict" in out:
            out["verdict"] = f"{out['provisional']} {out['verdict']}"
    return out


def flat_figures(h: Mapping[str, Any]) -> dict[str, Any]:
    """The headline as top-level ``summary.json`` keys (the demo's summary carries them).

    Gains are ``{policy: mean %}`` per figure, with ``*_ci`` holding ``[low, high]``.
    """
    flat: dict[str, Any] = {}
    q = h.get("quality") or {}
    for k in ("roc_auc", "pr_auc", "pr_auc_baseline", "accuracy", "majority_accuracy"):
        flat[k] = q.get(k)
    flat["balanced_accuracy"] = q.get("balanced_accuracy")
    for p in (h.get("gains") or {}).get("policies", []):
        for _, key, _ in GAIN_FIGURES:
            c = p.get(key) or {}
            flat.setdefault(f"{key}_gain_pct", {})[p["policy"]] = c.get("mean")
            flat.setdefault(f"{key}_gain_ci", {})[p["policy"]] = (
                [c["ci_low"], c["ci_high"]] if c.get("ci_low") is not None else None
            )
    if "helped" in h:
        flat["prediction_helped"] = h["helped"]
        flat["verdict"] = h["verdict"]
    if "fidelity" in h:
        flat["fidelity"] = h["fidelity"]["text"]
    return flat
