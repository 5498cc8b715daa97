"""The headline box that opens the report, in HTML (part of :mod:`pipelines._headline`)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from pipelines._headline_gains import GAIN_FIGURES


def _fmt_gain(cell: Mapping[str, Any] | None) -> str:
    if not cell or cell.get("mean") is None:
        return "n/a"
    txt = f"{cell['mean']:+.1f}%"
    if cell.get("ci_low") is not None:
        txt += f" [{cell['ci_low']:+.1f}, {cell['ci_high']:+.1f}]"
    return txt + (" *" if cell.get("significant") else "")


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
