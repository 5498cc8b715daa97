"""Which data the demo runs on: the real workloads the data directory holds (else the
synthetic one) and whether it holds FlowBench (part of :mod:`pipelines._demo`)."""

from __future__ import annotations

import logging

#: The real workloads the demo uses when their files are in the data directory. Alibaba 2017
#: is not one: alone on the demo's 30 nodes at load 0.7 (``collect --layout separate``) its
#: jobs leave 3 labelled rows in 6 hours, all of one class, so no model can train on it.
REAL_WORKLOADS: tuple[str, ...] = ("FB2009", "FB2010")


def flowbench_present(data_dir: str | None) -> bool:
    """Does the data directory hold FlowBench run files (``flowbench/parsed/*/*.csv[.gz]``)?

    Examples
    --------
    >>> flowbench_present("/nonexistent")
    False
    """
    from pipelines._datadir import resolve_data_dir

    parsed = resolve_data_dir(data_dir) / "flowbench" / "parsed"
    if not parsed.is_dir():
        return False
    return any(parsed.glob("*/*.csv.gz")) or any(parsed.glob("*/*.csv"))


def probe_data(data_dir: str | None, hours: float) -> tuple[list[str], str]:
    """The workloads the demo runs and the one line saying where they come from.

    The real workloads (:data:`REAL_WORKLOADS`) whose files the data directory holds; the
    synthetic ``SYN`` when none is there.
    """
    import sim_bridge

    root = sim_bridge.resolve_data_dir(data_dir)
    logger = logging.getLogger("sim_bridge")
    level = logger.level
    logger.setLevel(logging.ERROR)  # the missing-file warnings are summed up in one line here
    try:
        found = [
            w
            for w in REAL_WORKLOADS
            if sim_bridge.load_workload(w, root, hours=hours).source != "synthetic"
        ]
    finally:
        logger.setLevel(level)
    if not found:
        note = (
            f"data: no data directory with the real workload files ({root}); using the "
            "synthetic workload SYN (run `straggler data fetch` for FB-2009/FB-2010/Alibaba)"
        )
        return ["SYN"], note
    missing = [w for w in REAL_WORKLOADS if w not in found]
    note = f"data: real workload files from {root} for {', '.join(found)}" + (
        f"; {', '.join(missing)} missing there, left out" if missing else ""
    )
    return found, note
