"""``straggler collect``'s workload options: the default load and data scales, ``--scale``
parsing and the ``--workloads`` check (part of :mod:`pipelines._collect`)."""

from __future__ import annotations

#: Realised load (:func:`realised_load`) ``straggler collect`` targets unless ``--scale``.
DEFAULT_LOAD = 0.7


#: Per-workload data scale of ``collect()`` without scales (SWIM bytes, Alibaba instance
#: counts); these saturate a 50-node cluster, so the CLI defaults to :data:`DEFAULT_LOAD`.
DEFAULT_SCALES: dict[str, float] = {"FB2009": 10.0, "FB2010": 0.01, "ALI2017": 0.01, "SYN": 0.5}


def parse_scales(spec: str | None, workloads: list[str]) -> dict[str, float]:
    """``"2"`` (all workloads) or ``"FB2009=10,SYN=50"`` (others keep their default).

    Examples
    --------
    >>> parse_scales("FB2009=3", ["FB2009", "SYN"])
    {'FB2009': 3.0, 'SYN': 0.5}
    >>> parse_scales("2", ["SYN"])
    {'SYN': 2.0}
    """
    scales = {w: DEFAULT_SCALES.get(w, 1.0) for w in workloads}
    if not spec:
        return scales
    if "=" not in spec:
        value = _positive("--scale", spec)
        return dict.fromkeys(workloads, value)
    for item in spec.split(","):
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in scales:
            raise ValueError(f"--scale names workload {name!r}, not one of {workloads}")
        scales[name] = _positive(f"--scale {name}", value)
    return scales


def _positive(what: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not v > 0 or v == float("inf"):
        raise ValueError(f"{what} must be a positive number, got {text!r}")
    return v


def check_workloads(workloads: list[str]) -> None:
    """Raise ``ValueError`` naming ``--workloads`` if the list is empty, unknown or repeated."""
    import sim_bridge

    if not workloads:
        raise ValueError("--workloads is empty")
    unknown = [w for w in workloads if w not in sim_bridge.WORKLOAD_NAMES]
    if unknown:
        raise ValueError(
            f"--workloads: unknown {unknown}; choose from {list(sim_bridge.WORKLOAD_NAMES)}"
        )
    if len(set(workloads)) != len(workloads):
        raise ValueError(f"--workloads lists a workload twice: {workloads}")
