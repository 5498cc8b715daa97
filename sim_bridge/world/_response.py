"""The response of a task's speed to the load of a resource: convex, queueing-like.

A resource at utilisation ``l`` serves a task as a processor-sharing queue would: the task's
stretch grows as ``1 / (1 - l)``, so the *extra* time per unit of work is ``l / (1 - l)``
(M/M/1-PS; Harchol-Balter, *Performance Modeling and Design of Computer Systems*, ch. 22).
Light load barely matters (``phi(0.2) = 0.24``); a saturated resource slows a sensitive task
several-fold (``phi(0.9) = 6``). ``eps`` keeps a fully used resource finite: a task still gets
a share of it, at most ``1 + 1 / eps`` times slower (21x at the default ``eps = 0.05``, of the
order of the slowest stragglers Dolly (NSDI'13) reports, ~20x the median).
"""

from __future__ import annotations

import numpy as np

__all__ = ["RESPONSE_EPS", "contention_load", "contention_response"]

#: the saturation guard of :func:`contention_response` (a saturated resource: ``1 / eps``)
RESPONSE_EPS = 0.05


def contention_response(level, eps: float = RESPONSE_EPS):
    """Extra time per unit of work on a resource at utilisation ``level``: ``l / (1 - l + eps)``.

    Parameters
    ----------
    level : float or ndarray
        Utilisation in [0, 1] (values outside are clipped).
    eps : float
        Saturation guard, > 0.

    Returns
    -------
    float or ndarray
        ``phi(level)``: 0 at an idle resource, increasing and convex, ``1 / eps`` at 1.

    Examples
    --------
    >>> float(contention_response(0.0)), round(float(contention_response(0.5)), 3)
    (0.0, 0.909)
    >>> float(contention_response(1.0))
    20.0
    """
    if not eps > 0:
        raise ValueError(f"parameter eps must be > 0, got {eps!r}")
    lv = np.clip(level, 0.0, 1.0)
    return lv / (1.0 - lv + eps)


def contention_load(weights: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """A task's load from the responses ``phi`` of the four resources: ``sum_r w_r phi_r``,
    added in resource order, one IEEE operation at a time.

    The same value as the scalar loop ``load = 0.0; load += w[r] * phi[r]`` of
    ``Cluster._rate_with_py`` and of the compiled walk (``sim_bridge._tenants_core``), on any
    machine. A BLAS product (``weights @ phi``) is not: OpenBLAS picks its kernel by the CPU
    at run time, and its kernels round the four-term sums differently (Haswell, SkylakeX and
    Sandybridge kernels gave three different task tables from one seed).

    Parameters
    ----------
    weights : ndarray, shape (4,)
        A profile's sensitivities times the node's (``profile * sens[node]``).
    phi : ndarray, shape (4, m)
        :func:`contention_response` of the node's levels over ``m`` steps.

    Returns
    -------
    ndarray, shape (m,)

    Examples
    --------
    >>> w = np.array([0.5, 0.25, 1.0, 0.125])
    >>> phi = contention_response(np.array([[0.1, 0.9], [0.2, 0.0], [0.5, 0.5], [0.0, 1.0]]))
    >>> loads = contention_load(w, phi)
    >>> [sum(float(w[r] * phi[r, k]) for r in range(4)) == float(loads[k]) for k in range(2)]
    [True, True]
    """
    return ((weights[0] * phi[0] + weights[1] * phi[1]) + weights[2] * phi[2]) + weights[3] * phi[3]
