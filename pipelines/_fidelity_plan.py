"""What one ``straggler fidelity`` run will do: its sizes (:class:`FidelityProfile`), its
workloads and seeds, and the simulation settings every run shares (:class:`FidelityPlan`).

Examples
--------
>>> from pipelines._fidelity_config import FidelityConfig
>>> plan = plan_fidelity(FidelityConfig(out="o", quick=True, workloads=["SYN"], seeds=2))
>>> plan.profile.name, plan.seeds, plan.workloads, plan.sim["nodes"], plan.sim["hours"]
('quick', 2, ['SYN'], 20, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipelines._fidelity_config import FidelityConfig

__all__ = [
    "PROFILES",
    "REAL_WORKLOADS",
    "FidelityPlan",
    "FidelityProfile",
    "choose_workloads",
    "plan_fidelity",
]

#: The real workloads measured by default when their files are in the data directory.
REAL_WORKLOADS: tuple[str, ...] = ("FB2009", "FB2010")


@dataclass(frozen=True)
class FidelityProfile:
    """Sizes of one fidelity run (``default``, or ``quick`` for tests and the demo)."""

    name: str
    nodes: int
    slots: int
    hours: float
    load: float
    seeds: int
    acf_nodes: int = 64
    acf_days: float = 2.0


PROFILES: dict[str, FidelityProfile] = {
    "default": FidelityProfile("default", nodes=50, slots=2, hours=3.0, load=0.7, seeds=8),
    "quick": FidelityProfile(
        "quick", nodes=20, slots=2, hours=1.0, load=0.7, seeds=3, acf_nodes=16, acf_days=1.0
    ),
}


def choose_workloads(requested: Sequence[str] | None, data_dir) -> tuple[list[str], str]:
    """The workloads to measure and one line saying why.

    Requested names are kept as given; by default the real FB2009/FB2010 workloads whose
    files the data directory holds, else the synthetic ``SYN``.

    Examples
    --------
    >>> choose_workloads(["SYN"], None)
    (['SYN'], 'workloads: SYN (as requested)')
    """
    if requested:
        return list(requested), f"workloads: {', '.join(requested)} (as requested)"
    import sim_bridge
    from sim_bridge._workloads import SWIM_FILES

    root = sim_bridge.resolve_data_dir(data_dir)
    found = [w for w in REAL_WORKLOADS if (root / SWIM_FILES[w]).is_file()]
    if not found:
        return ["SYN"], (
            f"workloads: no FB2009/FB2010 files under {root}; using the synthetic workload SYN"
        )
    return found, f"workloads: real {', '.join(found)} from {root}"


@dataclass
class FidelityPlan:
    """The runs of one fidelity measurement.

    Attributes
    ----------
    profile : FidelityProfile
        The sizes it started from (the ACF facts read ``acf_nodes`` and ``acf_days``).
    seeds : int
        Paired seeds of the multi-seed comparisons.
    workloads : list of str
        Each measured on its own; ``workload_note`` says why these.
    data_dir : pathlib.Path
        The resolved data directory.
    sim : dict
        The settings of every simulation: ``nodes``, ``slots``, ``hours``, ``load``,
        ``data_dir``, ``beta`` and, once calibrated, ``scales`` (workload -> scale).
    """

    profile: FidelityProfile
    seeds: int
    workloads: list[str]
    workload_note: str
    data_dir: Path
    sim: dict[str, Any]

    def describe(self) -> str:
        """The line that opens a run's output.

        Examples
        --------
        >>> p = FidelityPlan(PROFILES["quick"], 2, ["SYN"], "", Path("d"),
        ...                  {"nodes": 4, "slots": 2, "hours": 0.5, "load": 0.7, "beta": 1.3})
        >>> p.describe()
        'profile quick: 4 nodes x 2 slots, 0.5 h, realised load 0.7, 2 seeds, beta 1.3'
        """
        s = self.sim
        return (
            f"profile {self.profile.name}: {s['nodes']} nodes x {s['slots']} slots, "
            f"{s['hours']:g} h, realised load {s['load']:g}, {self.seeds} seeds, "
            f"beta {s['beta']:g}"
        )


def resolve_profile(
    config: FidelityConfig, profile: str | FidelityProfile | None
) -> FidelityProfile:
    """The profile of a run: ``profile`` when given (a name or sizes), else ``quick`` when
    ``config.quick``, else ``default``.

    Raises
    ------
    ValueError
        A profile name that is not in :data:`PROFILES`.

    Examples
    --------
    >>> from pipelines._fidelity_config import FidelityConfig
    >>> resolve_profile(FidelityConfig(out="o", quick=True), None).name
    'quick'
    """
    if profile is None:
        profile = "quick" if config.quick else "default"
    if isinstance(profile, str):
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
        return PROFILES[profile]
    return profile


def plan_fidelity(
    config: FidelityConfig, profile: str | FidelityProfile | None = None
) -> FidelityPlan:
    """The plan of the run ``config`` asks for; its counts and sizes override the profile's.

    Raises
    ------
    ValueError
        Fewer than 2 seeds (paired intervals need two), naming ``--seeds``.
    """
    import sim_bridge

    prof = resolve_profile(config, profile)
    seeds = int(config.seeds if config.seeds is not None else prof.seeds)
    if seeds < 2:
        raise ValueError(f"--seeds must be >= 2 for paired intervals, got {seeds}")
    root = sim_bridge.resolve_data_dir(config.data_dir)
    names, note = choose_workloads(config.workloads, root)
    sim: dict[str, Any] = {
        "nodes": int(config.nodes or prof.nodes),
        "slots": int(config.slots or prof.slots),
        "hours": float(config.hours or prof.hours),
        "load": float(config.load or prof.load),
        "data_dir": root,
        "beta": float(config.beta),
    }
    return FidelityPlan(prof, seeds, names, note, root, sim)
