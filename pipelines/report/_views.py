"""Per-command views of a summary's data: the tables a command presents, built from its JSON.

``straggler compare`` writes Tables 3 and 4 to ``tables.md`` as paper-shaped pivots of
``table3.csv``/``table4.csv``; the report builds the same pivots from ``summary.json``
rather than reading the Markdown back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pipelines.report._model import Grid


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def gain_cell(row: Mapping[str, Any]) -> str:
    """A Table 3/4 cell: ``mean% ± std`` with ``*`` (uncorrected) or ``**`` (corrected) marks.

    Examples
    --------
    >>> gain_cell({"mean": 5.0, "std": 1.25, "n": 3, "significant": True})
    '5.00% ± 1.25*'
    >>> gain_cell({"mean": 5.0, "n": 1}), gain_cell({"mean": None, "n": 3})
    ('5.00%', 'n/a')
    """
    mean, std = _num(row.get("mean")), _num(row.get("std"))
    if mean is None:
        return "n/a"
    mark = "**" if row.get("significant_fdr") else "*" if row.get("significant") else ""
    n = row.get("n") or 0
    if n > 1 and std is not None:
        return f"{mean:.2f}% ± {std:.2f}{mark}"
    return f"{mean:.2f}%{mark}"


def _pivot(
    rows: Sequence[Mapping[str, Any]],
    row_key: str,
    col_keys: Sequence[str],
    label: Callable[[tuple[Any, ...]], str],
    cell: Callable[[Mapping[str, Any]], str],
    corner: str,
    **kw: Any,
) -> Grid:
    """Rows by ``row_key``, columns by ``col_keys`` (both in order of appearance)."""
    index = {(r.get(row_key), *(r.get(k) for k in col_keys)): r for r in rows}
    row_vals = list(dict.fromkeys(r.get(row_key) for r in rows))
    cols = list(dict.fromkeys(tuple(r.get(k) for k in col_keys) for r in rows))
    body = [
        [str(rv)] + [cell(index[(rv, *c)]) if (rv, *c) in index else "" for c in cols]
        for rv in row_vals
    ]
    return Grid(
        [corner, *(label(c) for c in cols)],
        body,
        total_rows=len(body),
        row_headers=True,
        text_columns=[0],
        **kw,
    )


def _records(value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [r for r in value if isinstance(r, Mapping)]


def compare_views(summary: Mapping[str, Any]) -> list[Grid]:
    """Tables 3 and 4 and the headroom table of a ``straggler compare`` summary.

    Examples
    --------
    >>> rows = [{"workload": "ALL", "predictor": "mtl", "statistic": s, "mean": m, "n": 1}
    ...         for s, m in (("Average", 4.0), ("99p", 6.5))]
    >>> t3, = compare_views({"table3": rows, "policies": {"mtl": "MTL"}})
    >>> t3.columns, t3.rows
    (['statistic', 'ALL MTL'], [['Average', '4.00%'], ['99p', '6.50%']])
    """
    labels = summary.get("policies") if isinstance(summary.get("policies"), Mapping) else {}

    def name(p: Any) -> str:
        return str(labels.get(p, p))

    seeds = (summary.get("significance") or {}).get("seeds")
    spec = summary.get("speculation") or "speculation"
    marks = (
        "mean ± std over seeds; * significant (uncorrected two-sided t-test, 5%); "
        "** still significant after the false-discovery-rate correction (significant_fdr)"
    )
    views = []
    t3 = _records(summary.get("table3"))
    if t3:
        views.append(
            _pivot(
                t3,
                "statistic",
                ("workload", "predictor"),
                lambda c: f"{c[0]} {name(c[1])}",
                gain_cell,
                "statistic",
                name=f"Table 3: improvement in job completion time over {spec} alone"
                + (f" ({seeds} seed{'s' if seeds != 1 else ''})" if seeds else ""),
                note=marks,
            )
        )
    t4 = _records(summary.get("table4"))
    if t4:
        views.append(
            _pivot(
                t4,
                "workload",
                ("predictor",),
                lambda c: name(c[0]),
                gain_cell,
                "workload",
                name=f"Table 4: reduction in total task-seconds over {spec} alone",
                note=marks,
            )
        )
    head = _records(summary.get("headroom"))
    if head:
        views.append(
            _pivot(
                head,
                "workload",
                ("predictor",),
                lambda c: name(c[0]),
                lambda r: f"{v:.2f}" if (v := _num(r.get("pooled"))) is not None else "n/a",
                "workload",
                name=f"Headroom captured: share of the oracle's mean-JCT gain over {spec} alone",
                note="pooled over seeds (sum of gains / sum of the oracle's gains); 1 = as good "
                "as the oracle, 0 = no better than speculation alone, < 0 = worse",
            )
        )
    return views


def evaluate_views(summary: Mapping[str, Any]) -> list[Grid]:
    """Table 1 or 2 of a ``straggler evaluate`` summary, from the pivot it recorded (the cells
    ``table1.md``/``table2.md`` hold; :func:`pipelines._evaluate.table1_pivot`).

    Examples
    --------
    >>> pivot = {"columns": ["% training data", "f0nl"], "rows": [["66", "80.0%"]], "note": "n"}
    >>> (g,) = evaluate_views({"table": 1, "pivot": pivot})
    >>> g.name, g.columns, g.rows, g.note
    ('Table 1', ['% training data', 'f0nl'], [['66', '80.0%']], 'n')
    >>> evaluate_views({"table": 1})
    []
    """
    pivot = summary.get("pivot")
    if not isinstance(pivot, Mapping):
        return []
    columns = [str(c) for c in pivot.get("columns") or []]
    rows = [[str(c) for c in r] for r in pivot.get("rows") or [] if isinstance(r, list)]
    if not columns:
        return []
    table = summary.get("table")
    return [
        Grid(
            columns,
            rows,
            name=f"Table {table}" if table in (1, 2) else "Table",
            total_rows=len(rows),
            row_headers=True,
            text_columns=list(range(len(columns))),
            note=str(pivot.get("note") or ""),
        )
    ]


#: Command -> the views built from its summary.
VIEWS: dict[str, Callable[[Mapping[str, Any]], list[Grid]]] = {
    "compare": compare_views,
    "evaluate": evaluate_views,
}
