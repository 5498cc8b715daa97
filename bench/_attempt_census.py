"""What a running attempt holds: a census of a running simulator's live attempts, their tasks
and their jobs' per-attempt structures, by kind and field (``bench_day.py --census``).

Sizes are ``sys.getsizeof`` plus the collector's 16-byte header for tracked objects; each
object is counted once, the first time it is seen, so a value shared by several attempts (a
float that is also its task's first launch, a small int) counts once or not at all. Not
counted: the heap's entries (about 48 bytes each, in C arrays), the cluster's per-node
tables, and allocator slack.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from typing import Any

__all__ = ["attempt_census", "census_table", "format_census", "held_fields", "object_size"]


def object_size(o: Any) -> int:
    """``sys.getsizeof`` plus the collector's 16-byte header when ``o`` is tracked (a NumPy
    array is not: its size is its header, and its buffer when it owns one)."""
    return sys.getsizeof(o) + (16 if gc.is_tracked(o) else 0)


def held_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` instances that hold Python objects: the reference's
    ``__slots__``, or the compiled class's ``OBJECT_FIELDS`` (its numbers are C fields)."""
    slots = getattr(cls, "__slots__", None)
    return tuple(slots) if slots is not None else tuple(cls.OBJECT_FIELDS)  # type: ignore[attr-defined]


def attempt_census(sim: Any) -> dict:
    """The bytes held by the running attempts of ``sim`` (a ``Simulator`` between events),
    as ``{"running": n, "rows": [(what, bytes, objects), ...]}``, largest first."""
    by: Counter = Counter()
    count: Counter = Counter()
    seen: set[int] = set()

    def add(key: str, o: Any) -> None:
        if o is None or id(o) in seen or (type(o) is int and -5 <= o <= 256):
            return
        seen.add(id(o))
        by[key] += object_size(o)
        count[key] += 1

    running = [a for job in sim._active.values() for a in job.running.values()]
    tasks: set[int] = set()
    for a in running:
        add("Attempt", a)
        for name in held_fields(type(a)):
            if name == "task":
                continue
            v = getattr(a, name, None)
            add(f"attempt.{name} ({type(v).__name__})", v)
            if type(v) in (tuple, list):
                for x in v:
                    add(f"attempt.{name}[] ({type(x).__name__})", x)
        t = a.task
        if id(t) in tasks:
            continue
        tasks.add(id(t))
        add("Task (running)", t)
        add("task.attempts", t.attempts)
        for name in ("uid", "work", "first_launch", "_u0"):
            v = getattr(t, name, None)
            add(f"task.{name} ({type(v).__name__})", v)
    for job in sim._active.values():
        add("job.running", job.running)
        add("job._recs (launch records)", job._recs)
    rows = [(k, v, count[k]) for k, v in by.most_common()]
    return {"running": len(running), "tasks": len(tasks), "rows": rows}


def census_table(head: str, rows: list, n: int, per: str, width: int) -> str:
    """A census's rows ``(what, bytes, objects)`` as a table under ``head``: MB, objects and
    bytes per ``per`` (``n`` of them), with a total line; ``width`` is the first column's."""
    n = max(n, 1)
    lines = [head, f"  {'what':{width}s} {'MB':>8s} {'objects':>11s} {'B/' + per:>11s}"]
    total = 0
    for key, b, k in rows:
        total += b
        lines.append(f"  {key:{width}s} {b / 1e6:8.1f} {k:>11,} {b / n:11.1f}")
    lines.append(f"  {'total':{width}s} {total / 1e6:8.1f} {'':>11s} {total / n:11.1f}")
    return "\n".join(lines)


def format_census(c: dict) -> str:
    """The census as a table: bytes, objects and bytes per running attempt."""
    head = f"{c['running']:,} running attempts of {c['tasks']:,} tasks"
    return census_table(head, c["rows"], c["running"], "attempt", 44)
