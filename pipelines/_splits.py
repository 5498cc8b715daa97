"""Time-ordered train/validation/test splits per (node, workload) pair (the seed's protocols).

Table 1 protocol (:func:`fraction_split`): within every pair, rows in launch order; the first
``fraction`` of them train (their last ``val_share`` is the validation part of the grid
search, the rest is the fitting part), and the rows from position ``test_start`` on (the last
34% by default) are the test set, the same for every fraction so that accuracies by fraction
are comparable. With ``fraction <= test_start`` train and test never overlap.

Table 2 protocol (:func:`leave_pair_out_splits`): for each of ``n_pairs`` pairs drawn with a
seeded generator, the later 95% of that pair's rows are held out as the test set; everything
else (all other pairs, and the earliest 5% of this one) trains.

Row counts per pair are ``floor(fraction * n)`` etc., so a pair with few rows can get an empty
training part at small fractions; the models then predict it from the shared blocks.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: The training fractions of the seed's Table 1.
TABLE1_FRACTIONS: tuple[float, ...] = (0.01, 0.02, 0.05, 0.10, 0.20, 0.30, 0.40, 0.50, 0.66)


@dataclass(frozen=True)
class Split:
    """Positions (into the labelled frame) of one train/test split.

    Attributes
    ----------
    name : str
        E.g. ``"fraction=0.05"`` or ``"heldout=n3/FB2009"``.
    fit, val : numpy.ndarray
        The fitting and validation parts of the training rows (disjoint).
    test : numpy.ndarray
        Test rows, disjoint from training rows.
    info : dict
        Protocol parameters (fraction, held-out pair, ...).
    """

    name: str
    fit: np.ndarray
    val: np.ndarray
    test: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def train(self) -> np.ndarray:
        """All training rows (fitting and validation parts), sorted."""
        return np.sort(np.concatenate([self.fit, self.val]))


def pair_order(frame: pd.DataFrame) -> dict[tuple[str, str], np.ndarray]:
    """Positions of each (node, workload) pair's rows, in launch order.

    Ties in ``launch_time`` are broken by ``job_id`` then ``task_id``, so the order does not
    depend on the row order of ``frame``.

    Examples
    --------
    >>> f = pd.DataFrame({"node": ["a", "a", "b"], "workload": ["W"] * 3,
    ...     "launch_time": [5.0, 1.0, 0.0], "job_id": "j", "task_id": ["1", "2", "3"]})
    >>> {k: v.tolist() for k, v in pair_order(f).items()}
    {('a', 'W'): [1, 0], ('b', 'W'): [2]}
    """
    order = np.lexsort(
        (
            frame["task_id"].to_numpy(dtype=str),
            frame["job_id"].to_numpy(dtype=str),
            frame["launch_time"].to_numpy(dtype=float),
        )
    )
    nodes = frame["node"].to_numpy(dtype=str)[order]
    wls = frame["workload"].to_numpy(dtype=str)[order]
    keys = pd.DataFrame({"n": nodes, "w": wls})
    out: dict[tuple[str, str], np.ndarray] = {}
    for key, idx in sorted(keys.groupby(["n", "w"], sort=True).indices.items()):
        out[(str(key[0]), str(key[1]))] = order[np.sort(idx)]
    return out


def _count(share: float, n: int) -> int:
    """``floor(share * n)``, robust to binary rounding (0.29 * 100 is 28.999...)."""
    return int(np.floor(share * n + 1e-9))


def _check_fraction(name: str, value: float, upper: float = 1.0) -> None:
    if not (isinstance(value, (int, float)) and 0 <= value <= upper):
        raise ValueError(f"{name} must be a number in [0, {upper}], got {value!r}")


def _fit_val(train_by_pair: list[np.ndarray], val_share: float) -> tuple[np.ndarray, np.ndarray]:
    fit, val = [], []
    for pos in train_by_pair:
        n_val = _count(val_share, len(pos))
        fit.append(pos[: len(pos) - n_val])
        val.append(pos[len(pos) - n_val :])
    cat = lambda parts: np.sort(np.concatenate(parts)) if parts else np.empty(0, np.int64)  # noqa: E731
    return cat(fit).astype(np.int64), cat(val).astype(np.int64)


def fraction_split(
    frame: pd.DataFrame,
    fraction: float,
    val_share: float = 0.25,
    test_start: float = 0.66,
) -> Split:
    """The Table 1 split for one training fraction.

    Parameters
    ----------
    frame : pandas.DataFrame
        Labelled rows with ``node``, ``workload``, ``launch_time``, ``job_id``, ``task_id``.
    fraction : float
        Share of each pair's rows (earliest first) used for training, ``<= test_start``.
    val_share : float
        Share of each pair's training rows (the latest ones) kept for validation.
    test_start : float
        Each pair's rows from this share on form the test set.

    Returns
    -------
    Split

    Examples
    --------
    >>> f = pd.DataFrame({"node": "a", "workload": "W", "launch_time": range(100),
    ...     "job_id": "j", "task_id": [str(i) for i in range(100)]})
    >>> s = fraction_split(f, 0.2)
    >>> len(s.fit), len(s.val), len(s.test), int(s.test.min())
    (15, 5, 34, 66)
    """
    _check_fraction("test_start", test_start)
    _check_fraction("fraction", fraction, upper=test_start)
    _check_fraction("val_share", val_share)
    trains, tests = [], []
    for pos in pair_order(frame).values():
        n = len(pos)
        trains.append(pos[: _count(fraction, n)])
        tests.append(pos[_count(test_start, n) :])
    fit, val = _fit_val(trains, val_share)
    test = np.sort(np.concatenate(tests)).astype(np.int64) if tests else np.empty(0, np.int64)
    info = {"protocol": "table1", "fraction": float(fraction), "val_share": float(val_share)}
    info["test_start"] = float(test_start)
    return Split(f"fraction={fraction:g}", fit, val, test, info)


def table1_splits(
    frame: pd.DataFrame,
    fractions: tuple[float, ...] = TABLE1_FRACTIONS,
    val_share: float = 0.25,
    test_start: float = 0.66,
) -> list[Split]:
    """One :func:`fraction_split` per training fraction (same test set for all)."""
    return [fraction_split(frame, f, val_share, test_start) for f in fractions]


def leave_pair_out_splits(
    frame: pd.DataFrame,
    n_pairs: int = 20,
    keep: float = 0.05,
    min_rows: int = 40,
    val_share: float = 0.25,
    seed: int = 0,
) -> list[Split]:
    """The Table 2 splits: hold out the later ``1 - keep`` of one pair's rows, ``n_pairs`` times.

    Parameters
    ----------
    frame : pandas.DataFrame
        Labelled rows (see :func:`fraction_split`).
    n_pairs : int
        Number of held-out pairs (fewer when fewer pairs have ``min_rows`` rows, with a
        ``UserWarning`` naming both numbers; the info of each split records the number
        available).
    keep : float
        Share of the held-out pair's rows (the earliest) that stay in training.
    min_rows : int
        Pairs with fewer rows are not held out.
    val_share : float
        Share of each pair's training rows (the latest) kept for validation.
    seed : int
        Seed of the generator that draws the pairs.

    Returns
    -------
    list of Split

    Examples
    --------
    >>> f = pd.DataFrame({"node": ["a", "b"] * 50, "workload": "W",
    ...     "launch_time": range(100), "job_id": "j", "task_id": [str(i) for i in range(100)]})
    >>> [(s.info["pair"], len(s.test)) for s in leave_pair_out_splits(f, n_pairs=1, seed=3)]
    [(['b', 'W'], 48)]
    """
    if not (isinstance(n_pairs, (int, np.integer)) and n_pairs >= 1):
        raise ValueError(f"n_pairs must be an integer >= 1, got {n_pairs!r}")
    _check_fraction("keep", keep)
    _check_fraction("val_share", val_share)
    orders = pair_order(frame)
    eligible = [k for k, v in orders.items() if len(v) >= min_rows]
    if not eligible:
        raise ValueError(
            f"no (node, workload) pair has min_rows={min_rows} rows "
            f"(largest has {max((len(v) for v in orders.values()), default=0)})"
        )
    if n_pairs > len(eligible):
        warnings.warn(
            f"n_pairs={n_pairs}: only {len(eligible)} (node, workload) pairs have "
            f"min_rows={min_rows} rows; using those {len(eligible)}",
            UserWarning,
            stacklevel=2,
        )
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(eligible), size=min(n_pairs, len(eligible)), replace=False)
    splits = []
    for i in picks:
        held = eligible[int(i)]
        pos = orders[held]
        n_keep = _count(keep, len(pos))
        trains = [v for k, v in orders.items() if k != held] + [pos[:n_keep]]
        fit, val = _fit_val(trains, val_share)
        info = {
            "protocol": "table2",
            "pair": [held[0], held[1]],
            "keep": float(keep),
            "pair_rows": len(pos),
            "pairs_available": len(eligible),
            "seed": int(seed),
        }
        test = np.sort(pos[n_keep:]).astype(np.int64)
        splits.append(Split(f"heldout={held[0]}/{held[1]}", fit, val, test, info))
    return splits
