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
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Compare's statistic names of the headline figures -> (key, label).
GAIN_FIGURES: tuple[tuple[str, str, str], ...] = (
    ("Average", "mean_jct", "mean JCT"),
    ("99p", "p99_jct", "p99 JCT"),
    ("task_seconds", "task_seconds", "task-seconds"),
)
#: The workload group compare pools every workload into.
ALL = "ALL"
#: Policies that are not predictors (compared against, never "prediction").
CONTROLS: frozenset[str] = frozenset({"random", "oracle"})
#: Corrected significance columns compare may write, most preferred first, with their names.
CORRECTIONS: tuple[tuple[str, str], ...] = (
    ("significant_fdr", "Benjamini-Hochberg FDR"),
    ("significant_holm", "Holm"),
)


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """Student-t confidence interval of the mean; ``None`` with fewer than two values.

    Examples
    --------
    >>> lo, hi = t_interval([1.0, 2.0, 3.0])
    >>> round(lo, 3), round(hi, 3)
    (-0.484, 4.484)
    >>> t_interval([5.0]) is None
    True
    """
    from scipy import stats

    v = [float(x) for x in values if x is not None and math.isfinite(float(x))]
    n = len(v)
    if n < 2:
        return None
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _correction(rows: Sequence[Mapping[str, Any]]) -> tuple[str | None, str]:
    for col, name in CORRECTIONS:
        if any(col in r for r in rows):
            return col, name
    return None, "uncorrected"


def _cell(row: Mapping[str, Any] | None, col: str | None) -> dict[str, Any] | None:
    if row is None:
        return None
    per_seed = [x for x in (row.get("per_seed") or []) if _num(x) is not None]
    ci = t_interval(per_seed)
    sig = bool(row.get(col)) if col else bool(row.get("significant"))
    return {
        "mean": _num(row.get("mean")),
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "n": int(row.get("n") or len(per_seed)),
        "significant": sig,
    }


def compare_gains(compare: Mapping[str, Any]) -> dict[str, Any]:
    """The headline gains of a ``straggler compare`` summary (workload group ``ALL``).

    Returns
    -------
    dict
        ``policies`` (list of ``{"policy", "label", "kind", "mean_jct", "p99_jct",
        "task_seconds"}``, each figure ``{"mean", "ci_low", "ci_high", "n", "significant"}``
        in % of speculation alone, positive = better), ``seeds``, ``correction``, ``test``.
    """
    t3 = [r for r in compare.get("table3") or [] if r.get("workload") == ALL]
    t4 = [r for r in compare.get("table4") or [] if r.get("workload") == ALL]
    if not t3:  # a single workload group only
        groups = [r.get("workload") for r in compare.get("table3") or []]
        first = groups[0] if groups else None
        t3 = [r for r in compare.get("table3") or [] if r.get("workload") == first]
        t4 = [r for r in compare.get("table4") or [] if r.get("workload") == first]
    col, corr = _correction([*t3, *t4])
    labels = compare.get("policies") or {}
    order = list(compare.get("predictors") or dict.fromkeys(r.get("predictor") for r in t3))
    out = []
    for pred in order:
        rec: dict[str, Any] = {
            "policy": pred,
            "label": labels.get(pred, pred),
            "kind": pred if pred in CONTROLS else "model",
        }
        for stat, key, _ in GAIN_FIGURES:
            if stat == "task_seconds":
                row = next((r for r in t4 if r.get("predictor") == pred), None)
            else:
                row = next(
                    (r for r in t3 if r.get("predictor") == pred and r.get("statistic") == stat),
                    None,
                )
            rec[key] = _cell(row, col)
        out.append(rec)
    sig = compare.get("significance") or {}
    return {
        "policies": out,
        "seeds": sig.get("seeds", compare.get("config", {}).get("seeds")),
        "correction": corr,
        "test": sig.get("test", ""),
        "speculation": compare.get("speculation"),
    }


def _fmt_gain(cell: Mapping[str, Any] | None) -> str:
    if not cell or cell.get("mean") is None:
        return "n/a"
    txt = f"{cell['mean']:+.1f}%"
    if cell.get("ci_low") is not None:
        txt += f" [{cell['ci_low']:+.1f}, {cell['ci_high']:+.1f}]"
    return txt + (" *" if cell.get("significant") else "")


def prediction_verdict(gains: Mapping[str, Any]) -> tuple[bool | None, str]:
    """Whether prediction helped, as ``(helped, one plain sentence)``.

    Helped means: some model (not the random control, not the oracle) improves a headline
    figure over speculation alone and compare's corrected test calls it significant. ``None``
    when there is nothing to judge.

    Examples
    --------
    >>> cell = {"mean": 5.0, "ci_low": 1.0, "ci_high": 9.0, "n": 8, "significant": True}
    >>> g = {"policies": [{"policy": "mtl", "label": "MTL", "kind": "model",
    ...       "mean_jct": cell, "p99_jct": None, "task_seconds": None}],
    ...      "seeds": 8, "correction": "Holm"}
    >>> prediction_verdict(g)[0]
    True
    >>> worse = {**cell, "mean": -16.0, "ci_low": -30.0, "ci_high": -2.0}
    >>> g["policies"].append({"policy": "wrangler", "label": "Wrangler", "kind": "model",
    ...                       "mean_jct": worse, "p99_jct": None, "task_seconds": None})
    >>> prediction_verdict(g)[1].endswith("Wrangler makes mean JCT significantly worse (-16.0%).")
    True
    """
    models = [p for p in gains.get("policies", []) if p.get("kind") == "model"]
    if not models:
        return None, "No predictor was compared with speculation, so nothing says whether it helps."
    seeds = gains.get("seeds")
    corr = gains.get("correction", "")
    wins, losses = [], []
    for p in models:
        for _, key, label in GAIN_FIGURES:
            c = p.get(key)
            if c and c.get("significant") and c.get("mean") is not None:
                (wins if c["mean"] > 0 else losses).append((p["label"], label, c))
    hurt = ""
    if losses:  # said beside a win too: one model's gain must not hide another's loss
        name, what, c = min(losses, key=lambda w: w[2]["mean"])
        hurt = f"; {name} makes {what} significantly worse ({c['mean']:+.1f}%)"
    if wins:
        name, what, c = max(wins, key=lambda w: w[2]["mean"])
        ci = (
            f" (95% CI {c['ci_low']:+.1f} to {c['ci_high']:+.1f}%)"
            if c.get("ci_low") is not None
            else ""
        )
        ctrl = next((p for p in gains["policies"] if p.get("policy") == "random"), None)
        caveat = ""
        if ctrl and any((ctrl.get(k) or {}).get("significant") for _, k, _ in GAIN_FIGURES):
            caveat = "; the random-refusal control also gains significantly, so part of it is"
            caveat += " placement, not prediction"
        return True, (
            f"Prediction helped here: {name} improves {what} by {c['mean']:.1f}%{ci} over "
            f"speculation alone, significant after {corr} correction over {seeds} seeds"
            f"{caveat}{hurt}."
        )
    if seeds is not None and int(seeds) < 2:
        return False, (
            "No significant gain: with one seed compare runs no significance test, so these "
            "numbers may be noise."
        )
    return False, (
        f"No significant gain: no predictor improves mean JCT, p99 JCT or task-seconds over "
        f"speculation alone significantly ({corr} correction, {seeds} seeds){hurt}."
    )


def model_quality(train: Mapping[str, Any]) -> dict[str, Any]:
    """Test ROC-AUC, PR-AUC, accuracy, balanced accuracy of a ``straggler train`` summary,
    each with its baseline (ROC-AUC 0.5, PR-AUC the positive rate, accuracy the majority
    share, balanced accuracy 0.5)."""
    t = train.get("test") or {}
    rows, pos = _num(t.get("rows")), _num(t.get("positives"))
    rate = _num(t.get("positive_rate"))
    if rate is None and rows:
        rate = (pos or 0.0) / rows
    major = _num(t.get("majority_accuracy"))
    if major is None and rate is not None:
        major = max(rate, 1 - rate)
    return {
        "roc_auc": _num(t.get("roc_auc")),
        "roc_auc_baseline": 0.5,
        "pr_auc": _num(t.get("pr_auc")),
        "pr_auc_baseline": rate,
        "accuracy": _num(t.get("accuracy")),
        "majority_accuracy": major,
        "balanced_accuracy": _num(t.get("balanced_accuracy")),
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


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _f(v: Any, fmt: str = ".3f") -> str:
    return "n/a" if v is None else format(v, fmt)


def _rule_text(rule: Any) -> str:
    rule = str(rule or "grid")
    if rule == "grid":
        return "the grid point's, chosen on the validation rows"
    return rule if "validation" in rule else f"{rule} on the validation rows"


def _tone(v: float | None, b: float | None) -> str:
    if v is None or b is None or abs(v - b) < 0.005:
        return "flat"
    return "up" if v > b else "down"


def render_headline(h: Mapping[str, Any]) -> str:
    """The headline box (HTML, every value escaped); empty when ``h`` is empty."""
    if not h:
        return ""
    parts = ['<section class="headline" id="headline"><h2>Headline</h2>']
    if h.get("provisional") and "verdict" not in h:  # else the verdict opens with it
        parts.append(f'<p class="verdict no">{_e(h["provisional"])}</p>')
    if "verdict" in h:
        cls = "yes" if h.get("helped") else "no"
        parts.append(f'<p class="verdict {cls}">{_e(h["verdict"])}</p>')
    t = h.get("trained") or {}
    if t.get("variant"):
        wl = ", ".join(map(str, t.get("workloads") or []))
        thr = t.get("threshold")
        parts.append(
            f"<p><b>Trained</b>: MTL <code>{_e(t['variant'])}</code> on "
            f"<code>{_e(t.get('trace'))}</code> ({_e(wl)}, {_e(t.get('rows'))} labelled rows); "
            f"grid chosen by validation <b>{_e(t.get('selected_by'))}</b>, decision threshold "
            f"{_e(_f(thr, '.3g'))} ({_e(_rule_text(t.get('threshold_rule')))}).</p>"
        )
    q = h.get("quality")
    if q:
        rows = [
            ("ROC-AUC", q.get("roc_auc"), q.get("roc_auc_baseline"), "0.5 = random ranking"),
            ("PR-AUC", q.get("pr_auc"), q.get("pr_auc_baseline"), "positive rate"),
            ("accuracy", q.get("accuracy"), q.get("majority_accuracy"), "majority class"),
            (
                "balanced accuracy",
                q.get("balanced_accuracy"),
                q.get("balanced_accuracy_baseline"),
                "0.5 = one answer",
            ),
        ]
        body = "".join(
            f"<tr><th>{_e(n)}</th><td>{_e(_f(v))}</td><td>{_e(_f(b))}</td><td>{_e(w)}</td>"
            f'<td class="{_tone(v, b)}">'
            f"{_e(_f(None if v is None or b is None else v - b, '+.3f'))}</td></tr>"
            for n, v, b, w in rows
        )
        parts.append(
            '<div class="hcol"><h3>How good the model is (test rows'
            f"{_e(', ' + str(q['test_rows']) if q.get('test_rows') else '')})</h3>"
            '<table class="tbl"><tr><th>metric</th><th>model</th><th>baseline</th>'
            f"<th>baseline is</th><th>above it</th></tr>{body}</table></div>"
        )
    g = h.get("gains")
    if g:
        head = "".join(f"<th>{_e(lbl)}</th>" for _, _, lbl in GAIN_FIGURES)
        body = "".join(
            f"<tr><th>{_e(p['label'])}</th>"
            + "".join(f"<td>{_e(_fmt_gain(p.get(k)))}</td>" for _, k, _ in GAIN_FIGURES)
            + "</tr>"
            for p in g["policies"]
        )
        parts.append(
            '<div class="hcol"><h3>What it gains over speculation alone '
            f"({_e(g.get('speculation') or '')}, {_e(g.get('seeds'))} seed(s))</h3>"
            f'<table class="tbl"><tr><th>policy</th>{head}</tr>{body}</table>'
            '<p class="note">% improvement (positive = better), mean over seeds [95% t-interval];'
            f" * significant after {_e(g.get('correction'))} correction.</p></div>"
        )
    fid = h.get("fidelity")
    if fid:
        failed = "; ".join(fid.get("failed") or [])
        parts.append(
            f"<p><b>Fidelity of the simulated world</b>: {_e(fid['text'])}"
            + (f' <span class="note">(outside: {_e(failed)})</span>' if failed else "")
            + ".</p>"
        )
    parts.append("</section>")
    return "".join(parts)
