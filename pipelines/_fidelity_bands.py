"""The stylized facts ``straggler fidelity`` measures: each one's band and published source
(:data:`FACTS`), and the result row of a fact measured on one workload (:class:`FactResult`).

A fact passes when its estimate (for the multi-seed comparisons: its corrected interval) sits
in its band; a failed band is a finding, not an error.

Examples
--------
>>> [f.key for f in FACTS][:3]
['straggler_share', 'p90_ratio', 'median_node_share']
>>> r = _point("straggler_share", "SYN", 0.2)
>>> r.verdict(), r.band_text(), r.value_text()
('PASS', '0.15-0.30', '0.200')
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ACF_LAGS_MIN", "FACTS", "Fact", "FactResult", "in_band"]

#: Lags of the CPU autocorrelation fact, in minutes.
ACF_LAGS_MIN: tuple[int, ...] = (5, 20, 60)


@dataclass(frozen=True)
class Fact:
    """One stylized fact: its key, wording, band and source.

    ``lo``/``hi`` bound the band (None: open side); ``relative_to_real`` marks the ACF facts,
    whose band is the real series' value +- ``hi``.
    """

    key: str
    name: str
    lo: float | None
    hi: float | None
    source: str
    band_text: str


FACTS: tuple[Fact, ...] = (
    Fact(
        "straggler_share",
        "straggler share at beta 1.3 (stage label)",
        0.15,
        0.30,
        "Wrangler (SoCC'14); Mantri (OSDI'10); FlowBench (real, 14%)",
        "0.15-0.30",
    ),
    Fact(
        "p90_ratio",
        "p90 of straggler duration / stage median",
        3.0,
        None,
        "Dolly (NSDI'13); Mantri (OSDI'10)",
        ">= 3",
    ),
    Fact(
        "median_node_share",
        "share of stragglers that would not straggle on the median node",
        0.45,
        0.65,
        "Garraghan et al. (53% from server load)",
        "0.45-0.65",
    ),
    Fact(
        "counters_auc",
        "ROC-AUC of counters alone, held-out later 40%",
        0.65,
        0.85,
        "FlowBench (real, 0.63-0.71)",
        "0.65-0.85, < true-state AUC",
    ),
    *(
        Fact(
            f"cpu_acf_{lag}min",
            f"autocorrelation of synthetic CPU load at {lag} min",
            None,
            0.1,
            "Alibaba 2018 machine usage",
            "real +- 0.1",
        )
        for lag in ACF_LAGS_MIN
    ),
    Fact(
        "oracle_gain",
        "oracle placement gain in mean JCT over LATE alone",
        0.15,
        None,
        "-",
        ">= 15%, significant",
    ),
    Fact(
        "late_p99",
        "LATE vs no speculation: p99 JCT reduction",
        0.0,
        None,
        "LATE (OSDI'08)",
        "> 0, significant",
    ),
    Fact(
        "mantri_p99",
        "Mantri vs no speculation: p99 JCT reduction",
        0.0,
        None,
        "Mantri (OSDI'10)",
        "> 0, significant",
    ),
)
_FACT = {f.key: f for f in FACTS}


@dataclass
class FactResult:
    """One row of the table: a fact measured on one workload (or ``-`` for cluster facts)."""

    key: str
    workload: str
    value: float | None
    interval: tuple[float, float] | None = None
    band: tuple[float | None, float | None] = (None, None)
    passed: bool | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def fact(self) -> Fact:
        return _FACT[self.key]

    def value_text(self) -> str:
        """The value as the table shows it (with the interval, or the reason it is absent)."""
        if self.value is None or not math.isfinite(self.value):
            return self.note or "not measured"
        text = f"{self.value:.3f}"
        if self.interval is not None:
            text += f" [{self.interval[0]:.3f}, {self.interval[1]:.3f}]"
        truth = self.extra.get("truth_auc")
        if truth is not None and math.isfinite(truth):
            text += f" (true-state {truth:.3f})"
        if self.note:
            text += f" ({self.note})"
        return text

    def band_text(self) -> str:
        """The band as text (the ACF facts show the real value they are held to)."""
        if self.key.startswith("cpu_acf") and self.band[0] is not None:
            return f"{self.band[0]:.3f}-{self.band[1]:.3f} (real +- 0.1)"
        return self.fact.band_text

    def verdict(self) -> str:
        """``PASS``, ``FAIL`` or ``n/a`` (not measured)."""
        return "n/a" if self.passed is None else ("PASS" if self.passed else "FAIL")

    def record(self) -> dict[str, Any]:
        """The JSON record of the fact in ``summary.json``."""
        rec = asdict(self)
        rec.pop("extra")
        rec.update(
            fact=self.fact.name,
            band_text=self.band_text(),
            source=self.fact.source,
            verdict=self.verdict(),
            **self.extra,
        )
        return rec


def in_band(lo: float | None, hi: float | None, low: float, high: float | None = None) -> bool:
    """Whether ``[low, high]`` (a point when ``high`` is None) sits inside ``[lo, hi]``.

    Examples
    --------
    >>> in_band(0.15, 0.30, 0.2), in_band(0.15, 0.30, 0.1, 0.2), in_band(3.0, None, 4.0)
    (True, False, True)
    """
    high = low if high is None else high
    return (lo is None or low >= lo) and (hi is None or high <= hi)


def _point(key: str, workload: str, value: float, **extra: Any) -> FactResult:
    """The result of a single-estimate fact: PASS inside its band, ``n/a`` when not finite.

    Examples
    --------
    >>> _point("p90_ratio", "SYN", 2.5).passed, _point("p90_ratio", "SYN", float("nan")).passed
    (False, None)
    """
    f = _FACT[key]
    ok = None if not math.isfinite(value) else in_band(f.lo, f.hi, value)
    return FactResult(key, workload, value, band=(f.lo, f.hi), passed=ok, extra=extra)
