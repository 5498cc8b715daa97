"""The numbers of a ``summary.json`` worth showing: key fields, the train metrics table."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pipelines.report._model import Grid, KeyNumber, fmt_number

#: Summary numbers shown per section when a command has no key fields.
MAX_SUMMARY_ITEMS = 60
#: Characters of a raw summary.json shown behind its fold.
MAX_RAW_JSON = 60_000
#: Summary keys that are the command line, shown as such rather than as numbers.
COMMAND_KEYS = frozenset({"command", "command_line", "argv"})

#: Headline entries of each command's summary (dotted-key prefixes), shown open; the full
#: list of numbers is folded below them.
KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "collect": (
        "workloads",
        "sources",
        "nodes",
        "slots",
        "hours",
        "attempt_rows",
        "rows",
        "pairs",
        "excluded_jobs",
        "straggler_share",
        "straggler_share_by_workload",
        "simulation.p99_jct",
        "wall_seconds",
    ),
    "train": (
        "status",
        "message",
        "config.variant",
        "config.metric",
        "threshold",
        "study.grid_points",
        "study.points_completed",
        "best_params",
        "model.registered_uri",
        "tracking_uri",
        "wall_seconds",
    ),
    "evaluate": ("table", "fractions", "pairs", "data.rows", "verdicts", "wall_seconds"),
    "compare": ("workloads", "seeds", "speculation", "significance", "wall_seconds"),
    "fidelity": ("counts", "profile", "settings.workloads", "interval_method", "wall_seconds"),
    "replication": (
        "seed_paper",
        "distribution",
        "n_tasks",
        "runs",
        "r",
        "max_abs_z",
        "agreement",
        "best_latency",
        "wall_seconds",
    ),
}


def flatten_summary(summary: Mapping[str, Any], prefix: str = "", depth: int = 3) -> list:
    """``(dotted key, value)`` pairs of the scalar entries of a summary, nested dicts included.

    Lists of up to 8 scalars are kept (shown joined); longer lists and deeper nesting are left
    to ``summary.json``.

    Examples
    --------
    >>> flatten_summary({"a": 1, "b": {"c": 2.5, "d": [1, 2]}, "e": list(range(20))})
    [('a', 1), ('b.c', 2.5), ('b.d', [1, 2])]
    """
    items: list[tuple[str, Any]] = []
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if depth > 1:
                items.extend(flatten_summary(value, f"{name}.", depth - 1))
        elif isinstance(value, list):
            if len(value) <= 8 and all(
                v is None or isinstance(v, (str, int, float, bool)) for v in value
            ):
                items.append((name, value))
        else:
            items.append((name, value))
    return items


def _key_number(key: str, value: Any) -> KeyNumber:
    if isinstance(value, list) and any(isinstance(v, str) and len(v) > 40 for v in value):
        return KeyNumber(key, items=[str(v) for v in value])
    if isinstance(value, list):
        return KeyNumber(key, ", ".join(fmt_number(v) for v in value))
    return KeyNumber(key, fmt_number(value))


def key_numbers(summary: Mapping[str, Any], command: str = "") -> tuple[list[KeyNumber], str]:
    """The key entries of a summary (:data:`KEY_FIELDS`) and the raw JSON behind the fold.

    Both are empty when the summary has no scalar entry besides the command line.

    Examples
    --------
    >>> nums, raw = key_numbers({"command": "x", "rows": 12345, "share": 0.123456})
    >>> [(n.key, n.text) for n in nums], raw.startswith("{")
    ([('rows', '12 345'), ('share', '0.1235')], True)
    """
    items = [(k, v) for k, v in flatten_summary(summary) if k.split(".")[0] not in COMMAND_KEYS]
    if not items:
        return [], ""
    prefixes = KEY_FIELDS.get(command, ())
    key = [
        (k, v)
        for k, v in items
        if any(k == p or k.startswith(p if p.endswith(".") else p + ".") for p in prefixes)
    ]
    shown = key or items[:MAX_SUMMARY_ITEMS]
    text = json.dumps(summary, indent=1, default=str, sort_keys=True)
    if len(text) > MAX_RAW_JSON:
        text = text[:MAX_RAW_JSON] + f"\n... ({len(text) - MAX_RAW_JSON} more characters)"
    return [_key_number(k, v) for k, v in shown], text


def _cell_or(value: Any, missing: str) -> str:
    """A number as the report shows it; ``missing`` for None/NaN (an undefined ratio)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return missing
    return fmt_number(value)


def train_metrics(summary: Mapping[str, Any]) -> Grid:
    """Test and validation metrics of a ``straggler train`` summary beside their baselines.

    Examples
    --------
    >>> g = train_metrics({"test": {"accuracy": 0.75, "rows": 4, "positives": 1}})
    >>> g.rows
    [['accuracy', '0.75', 'n/a', '0.75', 'majority class']]
    """
    test = summary.get("test") or {}
    val = summary.get("validation") or {}
    rows_n, pos = test.get("rows"), test.get("positives")
    rate = test.get("positive_rate")
    if rate is None and rows_n:
        rate = (pos or 0) / rows_n
    major = test.get("majority_accuracy")
    if major is None and rate is not None:
        major = max(rate, 1 - rate)
    base = {
        "accuracy": (major, "majority class"),
        "balanced_accuracy": (0.5, "one answer"),
        "roc_auc": (0.5, "random ranking"),
        "pr_auc": (rate, "positive rate"),
    }
    names = ["accuracy", "balanced_accuracy", "roc_auc", "pr_auc", "precision", "recall", "f1"]
    rows = []
    for m in names:
        if m not in test and m not in val:
            continue
        b, what = base.get(m, (None, ""))
        rows.append(
            [m, _cell_or(test.get(m), "n/a"), _cell_or(val.get(m), "n/a"), _cell_or(b, ""), what]
        )
    chosen = (summary.get("config") or {}).get("metric")
    thr = summary.get("threshold") or {}
    note = f"grid chosen by validation {chosen}" if chosen else ""
    if thr:
        note += f"; threshold {fmt_number(thr.get('value'))} by rule {thr.get('rule')}"
    columns = ["metric", f"test ({rows_n} rows)", "validation", "baseline", "baseline is"]
    return Grid(
        columns, rows, total_rows=len(rows), row_headers=True, note=note, text_columns=[0, 4]
    )
