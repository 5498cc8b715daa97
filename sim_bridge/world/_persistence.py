"""Background contention whose persistence is fitted on the Alibaba 2018 machine series.

The model, per node ``n`` and resource ``r`` (cpu, mem, disk, net), on a grid of ``dt``
seconds, is *logit-normal*::

    level[r, n, k] = expit(m[r, n] + s[r, n, k] + f[r, n, k])

- ``m[r, n] ~ N(logit_mean[r], between_sd[r] ** 2)``: the node's own mean (between-machine
  variance);
- ``s`` and ``f``: two independent stationary Ornstein-Uhlenbeck (Gaussian AR(1) on the grid)
  components of variances ``w * within_sd ** 2`` and ``(1 - w) * within_sd ** 2`` and time
  constants ``t_slow`` and ``t_fast`` (seconds), ``w = slow_weight``. The latent within-node
  autocorrelation is ``w * exp(-tau / t_slow) + (1 - w) * exp(-tau / t_fast)``.

Why logit rather than ``clip(m + s + f, 0, 1)``: the real series has nearly idle machines
(cpu ~0.05) whose fluctuations are ten times smaller than those of busy ones (~0.4); on the
logit scale one within-node sd describes both, and a level never piles up on 0 or 1. The
transform changes the moments (the level mean is not ``expit(logit_mean)``, the level ACF is
not the latent ACF), so the fit never reads parameters off transformed data: it matches the
*expected level-space statistics* of the model, computed by Gauss-Hermite quadrature (mean,
between-machine variance, and the level autocovariance as a function of the latent
correlation, bivariate quadrature) -- deterministic, no simulation.

The fit also accounts for the finite length of the real series: every machine is centred on
its own sample mean, which removes part of the slow component (``Var(mean)``) from the
within-machine statistics and adds it to the between-machine ones. The model's statistics are
the exact expected values of the estimators on a series of the observed length (formulas in
:func:`expected_statistics`), so a slow component is not mistaken for between-machine variance
nor the other way round. A time constant longer than the observed span cannot be told apart
from a per-machine constant: ``t_slow`` is bounded by the span.

Statistics (:func:`autocorrelation`, :func:`between_machine_share`):

- the autocorrelation that characterises persistence is *within-machine* (each machine
  centred on its own mean, products pooled over machines): it is what the simulator's node
  sees over time. Centred on the grand mean, a lag's correlation also contains the
  between-machine variance (a floor it never decays below); that one is available as
  ``center="grand"``. The reported facts for the real cpu series (0.71, 0.60, 0.51 at 5, 20,
  60 min) are the within-machine ones (grand-mean centring gives 0.86, 0.80, 0.75).
- the between-machine share is the variance of the machine means over the total variance.

Defaults and their evidence: :data:`DEFAULT_PERSISTENCE` is :func:`fit_persistence` on the 16
machines of the Alibaba 2018 subset (``alibaba-v2018-machine-usage-subset``, 8 days at 60 s)
rounded to 2 significant figures; ``tests/test_world_persistence.py`` re-runs the fit on the
real data and checks the constants against it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, cast

import numpy as np

from sim_bridge import _portable_math as portable_math
from sim_bridge.world._block_marks import BlockMarks, seekable

try:  # the recursion in C (built by pip install; optional)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._paths_core import ar1_rows, expit_inplace, expit_rows_inplace
except ImportError:  # pragma: no cover - an install without a C compiler
    ar1_rows = expit_inplace = expit_rows_inplace = None

__all__ = [
    "DEFAULT_PERSISTENCE",
    "FIT_LAGS_MIN",
    "PersistenceParams",
    "PersistentLevels",
    "SeriesStatistics",
    "ar1_inplace",
    "autocorrelation",
    "between_machine_share",
    "expected_statistics",
    "fit_persistence",
    "observed_statistics",
]

RESOURCES = ("cpu", "mem", "disk", "net")

#: lags (minutes) whose within-machine autocorrelation :func:`fit_persistence` matches
FIT_LAGS_MIN: tuple[int, ...] = (1, 5, 10, 20, 30, 60, 120, 240)

_N_GH = 16  # Gauss-Hermite nodes per dimension (machine mean, two within-node normals)
_RHO_GRID = np.linspace(0.0, 1.0, 33)  # latent correlations where level covariance is computed
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(_N_GH)
_GH_W = _GH_W / math.sqrt(2.0 * math.pi)  # expectations under N(0, 1)

Quad = tuple[float, float, float, float]

#: bytes of normal draws :meth:`PersistentLevels.block` holds at once (a chunk of rows)
_CHUNK_BYTES = 2 << 20


def _expit(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``scipy.special.expit``, imported on first use: ``import sim_bridge`` loads no scipy.
    In place on a float64 array (``out is x``, a block's levels) it runs in C when
    ``sim_bridge._paths_core`` is built (the same values; a run then loads no
    ``scipy.special``): in one pass on a C-contiguous array, row by row on a view whose
    rows are apart by more than their steps (a block drawn into the paths' window: a run
    imported SciPy there, at its second day, until 2026-12-02 (y), ~23 MB resident)."""
    if out is x and expit_inplace is not None and x.dtype == np.float64 and x.flags.writeable:
        if x.flags.c_contiguous:
            expit_inplace(x.reshape(-1))
            return x
        rows = _row_view(x)
        if rows is not None:
            expit_rows_inplace(rows)
            return x
    from scipy.special import expit

    return expit(x) if out is None else expit(x, out=out)


def _row_view(x: np.ndarray) -> np.ndarray | None:
    """``x`` as a 2-D view of rows along its last axis, whose steps are contiguous; None
    when that takes a copy.

    Examples
    --------
    >>> buf = np.zeros((4, 3, 10))
    >>> _row_view(buf[:, :, 2:8]).shape, _row_view(buf[:, ::2, :]) is None
    ((12, 6), True)
    """
    if x.ndim < 2 or x.strides[-1] != x.itemsize or not x.size:
        return None
    rows = x.reshape(-1, x.shape[-1])
    return rows if rows.ctypes.data == x.ctypes.data else None  # a copy is elsewhere


@dataclass(frozen=True)
class PersistenceParams:
    """Parameters of the logit-normal persistent contention, one value per resource.

    Every field is a 4-tuple ordered (cpu, mem, disk, net).

    Attributes
    ----------
    logit_mean : tuple of float
        Mean of the node means on the logit scale (the level mean is computed by
        :func:`expected_statistics`, it is not ``expit(logit_mean)``).
    between_sd : tuple of float
        Sd of the node means on the logit scale (between-machine variation), >= 0.
    within_sd : tuple of float
        Sd of a node's fluctuation around its mean on the logit scale, >= 0.
    slow_weight : tuple of float
        Share ``w`` in [0, 1] of the within variance carried by the slow component.
    t_slow, t_fast : tuple of float
        Time constants (seconds, > 0) of the slow and fast OU components: the latent
        autocorrelation at lag ``tau`` seconds is ``w e^(-tau/t_slow) + (1-w) e^(-tau/t_fast)``.

    Examples
    --------
    >>> p = PersistenceParams((0, 0, 0, 0), (1, 1, 1, 1), (1, 1, 1, 1), (0.5,) * 4,
    ...                       (3600,) * 4, (60,) * 4)
    >>> p.latent_acf(0, [0.0, 3600.0]).round(3).tolist()
    [1.0, 0.184]
    >>> p.rounded(1).t_slow
    (4000.0, 4000.0, 4000.0, 4000.0)
    """

    logit_mean: Quad
    between_sd: Quad
    within_sd: Quad
    slow_weight: Quad
    t_slow: Quad
    t_fast: Quad

    def __post_init__(self) -> None:
        for f in fields(self):
            v = tuple(float(x) for x in getattr(self, f.name))
            if len(v) != 4 or not all(math.isfinite(x) for x in v):
                raise ValueError(f"{f.name} must be 4 finite values, got {getattr(self, f.name)!r}")
            object.__setattr__(self, f.name, v)
        checks = (
            ("between_sd", lambda x: x >= 0, ">= 0"),
            ("within_sd", lambda x: x >= 0, ">= 0"),
            ("slow_weight", lambda x: 0 <= x <= 1, "in [0, 1]"),
            ("t_slow", lambda x: x > 0, "> 0"),
            ("t_fast", lambda x: x > 0, "> 0"),
        )
        for name, ok, what in checks:
            if not all(ok(x) for x in getattr(self, name)):
                raise ValueError(f"{name} must be {what}, got {getattr(self, name)!r}")

    def latent_acf(self, r: int, lags_s) -> np.ndarray:
        """The latent (logit-scale) within-node autocorrelation of resource ``r`` at lags (s)."""
        tau = np.abs(np.asarray(lags_s, dtype=float))
        w = self.slow_weight[r]
        return w * np.exp(-tau / self.t_slow[r]) + (1.0 - w) * np.exp(-tau / self.t_fast[r])

    def rounded(self, digits: int = 2) -> PersistenceParams:
        """The parameters rounded to ``digits`` significant figures."""
        parts: list[Any] = [
            tuple(_round_sig(x, digits) for x in getattr(self, f.name)) for f in fields(self)
        ]
        return PersistenceParams(*parts)


def _round_sig(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


# ------------------------------------------------------------------------------ statistics
def _as_series(levels) -> np.ndarray:
    x = np.asarray(levels, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"levels must be (n_machines, n_steps >= 2), got shape {x.shape}")
    return x


def autocorrelation(levels, lags_steps, center: str = "machine") -> np.ndarray:
    """Autocorrelation of a ``(n_machines, n_steps)`` series at the given lags (steps).

    ``c = x - mean`` with the mean of each machine (``center="machine"``, within-machine
    ACF: the persistence a node sees) or the grand mean (``center="grand"``: also holds the
    between-machine variance). Products are pooled over machines::

        acf(k) = mean_{n, t < N-k} c[n, t] c[n, t+k] / mean_{n, t} c[n, t] ** 2

    (each lag averages its ``N - k`` pairs per machine; machines weigh by their variance).
    A 1-D series is one machine. A constant series gives NaN.

    Examples
    --------
    >>> x = np.array([[0.1, 0.2, 0.35, 0.3, 0.2, 0.1], [0.5, 0.6, 0.7, 0.7, 0.6, 0.5]])
    >>> autocorrelation(x, [0, 1, 2]).round(3).tolist()
    [1.0, 0.298, -0.769]
    >>> autocorrelation(x, [1], center="grand").round(3).tolist()  # between-machine floor
    [0.876]
    """
    x = _as_series(levels)
    n = x.shape[1]
    lags = np.atleast_1d(np.asarray(lags_steps))
    if lags.size and (
        not np.issubdtype(lags.dtype, np.integer) or lags.min() < 0 or lags.max() >= n
    ):
        raise ValueError(f"lags must be integers in [0, {n - 1}], got {lags_steps!r}")
    if center == "machine":
        c = x - x.mean(axis=1, keepdims=True)
    elif center == "grand":
        c = x - x.mean()
    else:
        raise ValueError(f"center must be 'machine' or 'grand', got {center!r}")
    var = np.mean(c * c)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.array([np.mean(c[:, : n - k] * c[:, k:]) for k in lags.tolist()]) / var


def between_machine_share(levels) -> float:
    """Share of the total variance that is between the machine means.

    ``var_n(mean_t x[n]) / var_{n,t}(x)`` (population variances): with equal lengths the
    total is this between part plus the mean within-machine variance. NaN if constant.

    Examples
    --------
    >>> round(between_machine_share([[0.1, 0.3], [0.5, 0.7]]), 6)
    0.8
    """
    x = _as_series(levels)
    total = x.var()
    return float(x.mean(axis=1).var() / total) if total > 0 else math.nan


@dataclass(frozen=True)
class SeriesStatistics:
    """What the fit matches, per resource: arrays with a leading axis of 4 (cpu..net).

    ``acf`` (4, n_lags) within-machine autocorrelation, ``mean`` level mean, ``within_sd``
    pooled within-machine sd (``sqrt(mean_n var_t x[n])``), ``between_share``.
    """

    acf: np.ndarray
    mean: np.ndarray
    within_sd: np.ndarray
    between_share: np.ndarray


def observed_statistics(levels, lags_steps) -> SeriesStatistics:
    """The statistics of a real or simulated ``(4, n_machines, n_steps)`` series.

    Examples
    --------
    >>> x = np.linspace(0.1, 0.9, 4 * 2 * 6).reshape(4, 2, 6)
    >>> s = observed_statistics(x, [1])
    >>> s.acf.round(3).ravel().tolist(), s.between_share.round(3).tolist()
    ([0.6, 0.6, 0.6, 0.6], [0.755, 0.755, 0.755, 0.755])
    """
    x = np.asarray(levels, dtype=float)
    if x.ndim != 3 or x.shape[0] != 4:
        raise ValueError(f"levels must be (4, n_machines, n_steps), got shape {x.shape}")
    return SeriesStatistics(
        acf=np.stack([autocorrelation(x[r], lags_steps) for r in range(4)]),
        mean=x.mean(axis=(1, 2)),
        within_sd=np.sqrt(x.var(axis=2).mean(axis=1)),
        between_share=np.array([between_machine_share(x[r]) for r in range(4)]),
    )


# ------------------------------------------------------------------------------ forward model
def _level_moments(mu: float, sb: float, sw: float) -> tuple[float, float, np.ndarray]:
    """Level mean, between-machine variance of the node means, and the within-node level
    autocovariance (averaged over nodes) at the latent correlations ``_RHO_GRID``."""
    x, w = _GH_X, _GH_W
    m = mu + sb * x  # node-mean quadrature nodes
    f0 = _expit(m[:, None] + sw * x[None, :])  # (node mean i, z0 node j)
    g = f0 @ w  # E[level | node mean]
    mean = float(w @ g)
    between = float(w @ (g - mean) ** 2)
    rho = _RHO_GRID[:, None, None, None]
    c = np.sqrt(np.clip(1.0 - _RHO_GRID**2, 0.0, None))[:, None, None, None]
    # z1 = rho z0 + sqrt(1 - rho^2) z': f1[rho, i, j, l] for node mean i, z0 node j, z' node l
    f1 = _expit(m[None, :, None, None] + sw * (rho * x[None, None, :, None] + c * x))
    cross = np.einsum("j,l,ij,rijl->ri", w, w, f0, f1, optimize=True)
    cov = (cross - g**2) @ w
    return mean, between, cov


def _expected_estimators(gamma: np.ndarray, lags: np.ndarray) -> tuple[np.ndarray, float]:
    """Expected own-mean-centred autocovariance estimates at ``lags`` of a stationary series
    of ``N = gamma.size`` steps with autocovariance ``gamma`` (lags 0..N-1), and ``Var(mean)``.

    ``E[(x_t - xbar)(x_{t+k} - xbar)] = gamma(k) - Cov(x_t, xbar) - Cov(x_{t+k}, xbar)
    + Var(xbar)``, averaged over the ``N - k`` pairs; ``Cov(x_t, xbar) = (S(t) + S(N-1-t) -
    gamma(0)) / N`` with ``S`` the cumulative sum of ``gamma``.
    """
    n = gamma.size
    s = np.cumsum(gamma)
    t = np.arange(n)
    cov_mean = (s[t] + s[n - 1 - t] - gamma[0]) / n
    var_mean = float(cov_mean.mean())
    p = np.concatenate([[0.0], np.cumsum(cov_mean)])
    k = lags
    ec = gamma[k] - (p[n - k] + (p[n] - p[k])) / (n - k) + var_mean
    return ec, var_mean


def _resource_statistics(theta: np.ndarray, lags: np.ndarray, n_steps: int, n_machines: int):
    """Expected (acf, mean, within_sd, share) for one resource; ``theta`` = (mu, sb, sw, w,
    t_slow, t_fast) with times in steps."""
    mu, sb, sw, w, ts, tf = theta
    mean, between, cov = _level_moments(mu, sb, sw)
    k = np.arange(n_steps)
    rho = w * np.exp(-k / ts) + (1.0 - w) * np.exp(-k / tf)
    gamma = np.interp(rho, _RHO_GRID, cov)
    ec, var_mean = _expected_estimators(gamma, np.concatenate([[0], lags]))
    within = ec[0]
    between_obs = (1.0 - 1.0 / n_machines) * (between + var_mean)
    share = between_obs / (between_obs + within) if between_obs + within > 0 else math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        acf = ec[1:] / within
    return acf, mean, math.sqrt(max(within, 0.0)), share


def _theta(params: PersistenceParams, r: int, dt: float) -> np.ndarray:
    return np.array(
        [
            params.logit_mean[r],
            params.between_sd[r],
            params.within_sd[r],
            params.slow_weight[r],
            params.t_slow[r] / dt,
            params.t_fast[r] / dt,
        ]
    )


def expected_statistics(
    params: PersistenceParams,
    lags_steps,
    n_steps: int,
    n_machines: int,
    dt: float = 60.0,
) -> SeriesStatistics:
    """The model's expected :func:`observed_statistics` on ``n_machines`` series of
    ``n_steps`` steps of ``dt`` seconds (quadrature, no simulation).

    Level moments come from Gauss-Hermite quadrature over the node mean and the within-node
    normal(s); the level autocovariance at a latent correlation ``rho`` by bivariate
    quadrature on a grid of ``rho``, interpolated. Finite length: the expected value of the
    own-mean-centred estimators (``Var(mean)`` moves from within to between); the between
    variance of ``n_machines`` means carries the factor ``1 - 1/n_machines``. The ACF and the
    share are ratios of these expectations.

    Examples
    --------
    >>> s = expected_statistics(DEFAULT_PERSISTENCE, [5, 20, 60], 11520, 16)
    >>> s.acf.shape, bool(np.all(np.diff(s.acf, axis=1) < 0))
    ((4, 3), True)
    """
    lags = np.atleast_1d(np.asarray(lags_steps, dtype=int))
    if n_steps < 2 or lags.size and (lags.min() < 0 or lags.max() >= n_steps):
        raise ValueError(f"lags must be in [0, {n_steps - 1}], got {lags_steps!r}")
    out = [_resource_statistics(_theta(params, r, dt), lags, n_steps, n_machines) for r in range(4)]
    return SeriesStatistics(
        acf=np.stack([o[0] for o in out]),
        mean=np.array([o[1] for o in out]),
        within_sd=np.array([o[2] for o in out]),
        between_share=np.array([o[3] for o in out]),
    )


# ------------------------------------------------------------------------------ fit
def _unpack(p: np.ndarray) -> np.ndarray:
    """Free parameters to theta = (mu, sb, sw, w, t_slow, t_fast), times in steps: (mu,
    log sb, log sw, logit w, log t_slow, log t_fast), or (mu, log sb, log sw, log t) for one
    component (w = 1, t_fast = t_slow)."""
    e = np.exp(p)
    if p.size == 4:
        return np.array([p[0], e[1], e[2], 1.0, e[3], e[3]])
    return np.array([p[0], e[1], e[2], _expit(p[3]), e[4], e[5]])


#: a second OU component is kept only if it lowers the least-squares cost (half the sum of
#: squared residuals) by more than this; otherwise the fit is one component (w = 1,
#: t_fast = t_slow), so a component of negligible weight leaves no arbitrary time constant
_SECOND_COMPONENT_GAIN = 1e-3


def _fit_resource(x: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """Least squares of one resource's model statistics on its observed ones; theta in steps."""
    from scipy.optimize import least_squares  # fitting only: not paid by ``import sim_bridge``

    n_machines, n_steps = x.shape
    acf_obs = autocorrelation(x, lags)
    mean_obs = x.mean()
    sd_obs = math.sqrt(x.var(axis=1).mean())
    share_obs = between_machine_share(x)
    if not sd_obs > 0:
        raise ValueError("a resource has no within-machine variance: nothing to fit")

    def residuals(p: np.ndarray) -> np.ndarray:
        acf, mean, sd, share = _resource_statistics(_unpack(p), lags, n_steps, n_machines)
        scale = [(mean - mean_obs) / sd_obs, math.log(max(sd, 1e-12) / sd_obs), share - share_obs]
        return np.concatenate([acf - acf_obs, scale])

    z = np.log(np.clip(x, 1e-3, 1 - 1e-3) / (1 - np.clip(x, 1e-3, 1 - 1e-3)))
    level = [float(z.mean()), math.log(max(float(z.mean(axis=1).std()), 0.05)),
             math.log(max(float(z.std(axis=1).mean()), 0.05))]  # fmt: skip
    log_t = (math.log(0.1), math.log(float(n_steps)))  # time constants: 0.1 step to the span
    lo, hi = [-10.0, math.log(1e-3), math.log(1e-3)], [10.0, math.log(10.0), math.log(10.0)]
    starts = {  # (logit w, t_slow, t_fast) or (t,) in steps
        2: ((0.0, n_steps / 16, 3.0), (0.0, 30.0, 1.0)),
        1: ((60.0,),),
    }
    best: dict[int, Any] = {}  # components -> scipy's OptimizeResult
    for k, k_starts in starts.items():
        b_lo = lo + ([-8.0] if k == 2 else []) + [log_t[0]] * k
        b_hi = hi + ([8.0] if k == 2 else []) + [log_t[1]] * k
        for st in k_starts:
            shape = [st[0]] if k == 2 else []
            p0 = np.array(level + shape + [math.log(t) for t in st[-k:]])
            p0 = np.clip(p0, np.add(b_lo, 1e-6), np.subtract(b_hi, 1e-6))
            res = least_squares(residuals, p0, bounds=(b_lo, b_hi), xtol=1e-10, ftol=1e-10)
            if k not in best or res.cost < best[k].cost:
                best[k] = res
    if best[1].cost <= best[2].cost + _SECOND_COMPONENT_GAIN:
        return _unpack(best[1].x)
    theta = _unpack(best[2].x)
    if theta[5] > theta[4]:  # label the slower component "slow"
        theta[3], theta[4], theta[5] = 1.0 - theta[3], theta[5], theta[4]
    return theta


def fit_persistence(levels, dt: float = 60.0) -> PersistenceParams:
    """Fit :class:`PersistenceParams` on a real ``(4, n_machines, n_steps)`` level series.

    Per resource, least squares (``scipy.optimize.least_squares``, bounded, fixed starts,
    the best kept: deterministic) of the model's expected statistics
    (:func:`expected_statistics` at the series' own length and machine count) on the observed
    ones: the within-machine ACF at :data:`FIT_LAGS_MIN` (those under half the series),
    the level mean (in units of the within sd), the log of the pooled within sd, and the
    between-machine share, all with weight 1. ``t_slow`` and ``t_fast`` are bounded to
    [0.1 step, series length].

    Examples
    --------
    >>> truth = PersistenceParams((-0.5,) * 4, (0.5,) * 4, (0.6,) * 4, (0.6,) * 4,
    ...                           (7200.0,) * 4, (300.0,) * 4)
    >>> x = PersistentLevels(truth, 16, (7,)).block(0, 2880)
    >>> fit = fit_persistence(x)
    >>> bool(abs(fit.slow_weight[0] - 0.6) < 0.2 and 0.2 < fit.between_sd[0] < 0.8)
    True
    """
    x = np.asarray(levels, dtype=float)
    if x.ndim != 3 or x.shape[0] != 4 or x.shape[2] < 4:
        raise ValueError(f"levels must be (4, n_machines, n_steps >= 4), got shape {x.shape}")
    if not (dt > 0 and math.isfinite(dt)):
        raise ValueError(f"dt must be > 0, got {dt!r}")
    lags = np.array(sorted({max(1, round(m * 60.0 / dt)) for m in FIT_LAGS_MIN}))
    lags = lags[lags < x.shape[2] // 2]
    thetas = np.stack([_fit_resource(x[r], lags) for r in range(4)], axis=1)  # (6, 4)
    return PersistenceParams(
        logit_mean=tuple(thetas[0]),
        between_sd=tuple(thetas[1]),
        within_sd=tuple(thetas[2]),
        slow_weight=tuple(thetas[3]),
        t_slow=tuple(thetas[4] * dt),
        t_fast=tuple(thetas[5] * dt),
    )


def ar1_inplace(x: np.ndarray, a, start) -> np.ndarray:
    """Run ``x[:, k] = a * x[:, k - 1] + x[:, k]`` in place along the last axis of ``x``.

    ``x`` is ``(rows, steps)`` float64 holding the (already scaled) innovations; ``a`` the
    AR coefficient, a scalar or one per row; ``start`` the state before step 0 (one per row,
    ``x[:, -1]`` of the previous block). Each step rounds the product, then the sum: the
    values of ``scipy.signal.lfilter([1.0], [1.0, -a], x, axis=-1, zi=a * start)`` bit for
    bit (lfilter's delay ``0 * x - (-a) * y`` is ``a * y`` exactly), without scipy.signal
    (~50 MB and ~1 s to import) and without a copy of ``x``. With the compiled extension
    (``sim_bridge._paths_core.ar1_rows``, same roundings) a C-contiguous ``x`` is filtered
    in one pass; else one Python step per column, vectorised over the rows: pass many rows
    at once.

    Parameters
    ----------
    x : ndarray, shape (rows, steps)
        Overwritten with the filtered series.
    a : float or ndarray, shape (rows,)
    start : ndarray, shape (rows,)

    Returns
    -------
    ndarray
        ``x``.

    Examples
    --------
    >>> x = np.array([[1.0, 0.0, 0.0, 2.0]])
    >>> ar1_inplace(x, 0.5, np.array([4.0])).tolist()
    [[3.0, 1.5, 0.75, 2.375]]
    """
    if x.ndim != 2:
        raise ValueError(f"x must be (rows, steps), got shape {x.shape}")
    a = np.broadcast_to(np.asarray(a, dtype=float), x.shape[:1])
    if ar1_rows is not None and x.dtype == np.float64 and x.flags.c_contiguous:
        ar1_rows(x, np.ascontiguousarray(a), np.ascontiguousarray(start, dtype=float))
        return x
    prev = np.asarray(start, dtype=float)
    tmp = np.empty(x.shape[0])
    for k in range(x.shape[1]):
        col = x[:, k]
        np.multiply(a, prev, out=tmp)
        np.add(tmp, col, out=col)
        prev = col
    return x


# ------------------------------------------------------------------------------ generator
class PersistentLevels:
    """Block generator of the persistent contention levels of ``n_nodes`` nodes.

    The node means come from ``default_rng([*rng_seed_words, 0])`` (then the initial,
    stationary state of both OU components), block ``b``'s innovations from
    ``default_rng([*rng_seed_words, b + 1])``; block ``b`` starts from the end state of block
    ``b - 1``, so consecutive blocks are one continuous path and a block is a pure function of
    the seed words, ``b`` and the lengths of the earlier blocks. Blocks are generated in order
    (``b - 1`` first); an earlier block may be asked again and comes out the same.

    NumPy's ``SeedSequence`` ignores trailing zero words: ``[*words, 0]`` draws the same
    stream as ``words`` alone, so a caller must not seed anything else with ``words``.

    Parameters
    ----------
    params : PersistenceParams
    n_nodes : int
    rng_seed_words : sequence of int
        Non-negative seed words (e.g. ``(seed, 505)``).
    dt : float
        Step of the grid (s).

    Examples
    --------
    >>> g = PersistentLevels(DEFAULT_PERSISTENCE, 3, (1, 2))
    >>> a, b = g.block(0, 1440), g.block(1, 1440)
    >>> a.shape, bool(a.min() >= 0.0 and a.max() <= 1.0)
    ((4, 3, 1440), True)
    >>> np.array_equal(PersistentLevels(DEFAULT_PERSISTENCE, 3, (1, 2)).block(0, 1440), a)
    True
    """

    def __init__(
        self,
        params: PersistenceParams,
        n_nodes: int,
        rng_seed_words: Sequence[int] | int,
        *,
        dt: float = 60.0,
    ):
        if not (isinstance(n_nodes, (int, np.integer)) and n_nodes >= 1):
            raise ValueError(f"n_nodes must be an integer >= 1, got {n_nodes!r}")
        if not (dt > 0 and math.isfinite(dt)):
            raise ValueError(f"dt must be > 0, got {dt!r}")
        words: list[Any] = (
            [rng_seed_words] if np.isscalar(rng_seed_words) else list(cast(Any, rng_seed_words))
        )
        self.seed_words = tuple(int(w) for w in words)
        self.params, self.n_nodes, self.dt = params, int(n_nodes), float(dt)
        p = {f.name: np.array(getattr(params, f.name)) for f in fields(params)}
        rng = np.random.default_rng([*self.seed_words, 0])
        n = self.n_nodes
        #: node means on the logit scale, (4, n_nodes)
        self.node_mean = p["logit_mean"][:, None] + p["between_sd"][:, None] * rng.standard_normal(
            (4, n)
        )
        w = p["slow_weight"]
        self._sd = np.stack([np.sqrt(w), np.sqrt(1.0 - w)]) * p["within_sd"]  # (2, 4)
        self._a = portable_math.exp(-self.dt / np.stack([p["t_slow"], p["t_fast"]]))  # (2, 4)
        start = self._sd[:, :, None] * rng.standard_normal((2, 4, n))
        self._end: dict[int, np.ndarray] = {-1: start}  # end state (2, 4, n) after block b
        self._marks: BlockMarks | None = None  # the parts of the block being drawn in parts

    def block(self, b: int, n_steps: int, out: np.ndarray | None = None) -> np.ndarray:
        """Levels ``(4, n_nodes, n_steps)`` in [0, 1] of block ``b`` (after block ``b - 1``),
        written into ``out`` when given (e.g. the tail of a bigger array: no block-sized copy;
        its last axis may be a slice, the other two as in that array).

        Block ``b``'s innovations are one stream of ``2 * 4 * n_nodes * n_steps`` standard
        normals in C order over (component, resource, node, step). They are drawn in chunks
        of whole (component, resource, node) rows of about ``_CHUNK_BYTES`` (2 MiB), each
        chunk filtered in place (:func:`ar1_inplace`) and added into the output, which then
        goes through ``expit`` and ``clip`` in place: the block's extra memory is one chunk,
        not the full ``(2, 4, n_nodes, n_steps)`` draw and its block-sized temporaries. The
        values are those of one ``standard_normal((2, 4, n_nodes, n_steps))`` draw filtered
        by ``scipy.signal.lfilter``, bit for bit: NumPy's ``Generator.standard_normal``
        carries no state between calls but the bit generator's (each float64 normal is a
        ziggurat draw from 64-bit words, no cached second value), so consecutive chunks
        read the same stream, and the recursion does lfilter's two roundings per step
        (``tests/test_persistence_block.py`` checks both against the lfilter reference).

        Examples
        --------
        >>> from sim_bridge.world import DEFAULT_PERSISTENCE
        >>> a, c = (PersistentLevels(DEFAULT_PERSISTENCE, 3, (7,)) for _ in range(2))
        >>> buf = np.zeros((4, 3, 15))
        >>> same = c.block(0, 10, out=buf[:, :, 5:]) is not None
        >>> bool((a.block(0, 10) == buf[:, :, 5:]).all()), bool((buf[:, :, :5] == 0).all())
        (True, True)
        """
        if n_steps < 0:
            raise ValueError(f"n_steps must be >= 0, got {n_steps!r}")
        return self.block_part(b, n_steps, 0, n_steps, out=out)

    def block_part(
        self, b: int, n_steps: int, lo: int, m: int, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Steps ``lo`` to ``lo + m`` of block ``b`` of ``n_steps`` steps: the levels
        ``block(b, n_steps)[:, :, lo:lo + m]``, bit for bit, without the rest of the block
        in memory (``out`` as in :meth:`block`, of ``m`` steps).

        The stream is ordered by row, then step, so a part reaches its steps only by drawing
        and filtering the whole block's stream; it keeps one chunk of rows and the part.
        When ``m`` divides ``n_steps`` (and ``lo`` is a multiple of it) and
        ``sim_bridge._normals_core`` is built, that pass also marks where each row's other
        parts start (:class:`~sim_bridge.world._block_marks.BlockMarks`), and those parts
        draw only their own steps, to the same floats; the marks are dropped once every
        part of the block was drawn. Otherwise every part draws the whole stream again. Parts
        may come in any order once block ``b - 1``'s end is known; the part that reaches the
        block's end records block ``b``'s (the next block's start).

        Examples
        --------
        >>> from sim_bridge.world import DEFAULT_PERSISTENCE
        >>> a, c = (PersistentLevels(DEFAULT_PERSISTENCE, 3, (7,)) for _ in range(2))
        >>> whole = a.block(0, 12)
        >>> parts = [c.block_part(0, 12, lo, 4) for lo in (0, 4, 8)]
        >>> bool((np.concatenate(parts, axis=2) == whole).all())
        True
        >>> bool((c.block(1, 12) == a.block(1, 12)).all())  # the next block goes on alike
        True
        """
        if b - 1 not in self._end:
            raise ValueError(f"block {b} needs block {b - 1} first (blocks come in order)")
        if not (0 <= lo and m >= 0 and lo + m <= n_steps):
            raise ValueError(f"part [{lo}, {lo + m}) is not within a block of {n_steps} steps")
        n = self.n_nodes
        state = self._end[b - 1]
        rng = np.random.default_rng([*self.seed_words, b + 1])
        if out is None:
            latent = np.empty((4, n, m))
        elif out.shape != (4, n, m):
            raise ValueError(f"parameter out must have shape {(4, n, m)}, got {out.shape}")
        else:
            latent = out
        latent[...] = self.node_mean[:, :, None]
        last = lo + m == n_steps
        end = state.copy()
        rows = latent.reshape(4 * n, m)
        if m and not np.shares_memory(rows, latent):
            raise ValueError("parameter out: its (resource, node) axes must merge into one")
        # a part of an even split: drawn from the marks of the block's first pass (see
        # sim_bridge.world._block_marks), the first pass then records them
        key = (b, n_steps, m)
        even = m > 0 and n_steps % m == 0 and lo % m == 0 and m < n_steps
        marks = self._marks
        if not (even and marks is not None and marks.key == key and lo // m in marks.left):
            marks = None  # none, another block's or split's, or this part's let go
        new = None
        if marks is None and even and seekable():
            self._marks = None  # another block's: dropped before the new ones are made
            new = BlockMarks.start(rng, key, 4 * n)
        chunk = max(1, _CHUNK_BYTES // (8 * max(m if marks is not None else n_steps, 1)))
        for c in range(2):  # the slow component is added first, as the stream orders them
            a = [float(x) for x in self._a[c]]
            gain = [float(self._sd[c, r]) * math.sqrt(1.0 - a[r] * a[r]) for r in range(4)]
            a_rows, gain_rows = np.repeat(a, n), np.repeat(gain, n)
            start, stop = state[c].reshape(4 * n), end[c].reshape(4 * n)
            for i in range(0, 4 * n if n_steps else 0, chunk):
                j = min(i + chunk, 4 * n)
                if marks is not None:  # this part's steps alone
                    y = marks.part(c, i, j, lo // m)
                    y *= gain_rows[i:j, None]
                    ar1_inplace(y, a_rows[i:j], marks.start_of(c, i, j, lo // m))
                    rows[i:j] += y
                    stop[i:j] = y[:, -1]
                    continue
                if new is None:
                    y = rng.standard_normal((j - i, n_steps))
                else:  # the same normals, with the marks recorded on the way
                    y = new.draw(c, i, j, n_steps)
                y *= gain_rows[i:j, None]
                ar1_inplace(y, a_rows[i:j], start[i:j])
                if new is not None:
                    new.note_starts(c, i, j, y, start[i:j])
                rows[i:j] += y[:, lo : lo + m]
                stop[i:j] = y[:, -1]
                del y  # before the next chunk is drawn: one chunk alive at a time
        used = new if new is not None else marks
        if used is not None:  # each part's marks kept until it was drawn
            used.release(lo // m)
            self._marks = used if used.left else None
        if last:
            self._end[b] = end
        _expit(latent, out=latent)
        return np.clip(latent, 0.0, 1.0, out=latent)


# fit_persistence on the Alibaba 2018 subset (alibaba-v2018-machine-usage-subset, 16 machines,
# 8 days, dt = 60 s), rounded to 2 significant figures; tests/test_world_persistence.py re-runs
# the fit on the real data and checks these against it. Order (cpu, mem, disk, net); times in
# seconds. net is one component whose time constant sits at its bound (the 8-day span): within
# the observed span a net level behaves as a slowly drifting per-machine constant.
DEFAULT_PERSISTENCE = PersistenceParams(
    logit_mean=(-0.72, 2.2, -3.0, -0.61),
    between_sd=(0.61, 0.35, 0.41, 0.27),
    within_sd=(0.61, 0.51, 0.84, 0.28),
    slow_weight=(0.69, 0.84, 0.48, 1.0),
    t_slow=(13000.0, 26000.0, 9800.0, 690000.0),
    t_fast=(180.0, 450.0, 160.0, 690000.0),
)
