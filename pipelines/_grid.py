"""The hyper-parameter grid of ``straggler train``: regularisers and the decision threshold.

A grid is a JSON object mapping some of ``lambda0``, ``nu``, ``omega``, ``tau`` and
``threshold`` to non-empty lists of values (``"inf"`` allowed for a regulariser, removing its
block; a finite regulariser must lie in ``mtl.REGULARISER_RANGE``, 1e-8 to 1e8). A grid in
which every regulariser of the variant is only ``inf`` leaves no block to fit: one
``ValueError`` from :func:`variant_grid`, not a failure per trial. ``default`` and
``small`` ship with the package (``pipelines/grids/``); any other value is a path to such a
file. Only the regularisers of the blocks a variant has are searched (the others do not
change the model), so ``f0`` searches ``lambda0`` and the threshold only.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from pathlib import Path

from mtl import REGULARISER_RANGE

#: Regulariser of each block of :data:`mtl.VARIANTS`.
BLOCK_PARAM: dict[str, str] = {"w0": "lambda0", "node": "nu", "workload": "omega", "task": "tau"}

#: Names a grid may hold, in the order points are enumerated.
GRID_KEYS: tuple[str, ...] = ("lambda0", "nu", "omega", "tau", "threshold")

_BUILTIN = Path(__file__).resolve().parent / "grids"


def load_grid(spec: str | os.PathLike[str]) -> dict[str, list[float]]:
    """Read a grid: ``"default"``, ``"small"`` or a JSON file path.

    Returns
    -------
    dict
        Key -> sorted list of unique floats.

    Raises
    ------
    FileNotFoundError
        Unknown name and no such file.
    ValueError
        Unknown key, empty list, a regulariser that is neither ``inf`` nor in
        ``mtl.REGULARISER_RANGE``, a threshold not in (0, 1); the message names the file, key
        and value.

    Examples
    --------
    >>> load_grid("small")["threshold"]
    [0.4, 0.5]
    """
    spec = str(spec)
    path = _BUILTIN / f"{spec}.json" if spec in ("default", "small") else Path(spec)
    if not path.is_file():
        raise FileNotFoundError(f"--grid {spec!r}: not 'default', 'small' or an existing file")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"grid file {path}: not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or not doc:
        raise ValueError(f"grid file {path}: expected a non-empty JSON object")
    grid: dict[str, list[float]] = {}
    for key, values in doc.items():
        if key not in GRID_KEYS:
            raise ValueError(f"grid file {path}: unknown key {key!r}; allowed {list(GRID_KEYS)}")
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid file {path}: {key!r} must be a non-empty list, got {values!r}")
        clean = []
        for v in values:
            try:
                f = float(v) if not isinstance(v, bool) else float("nan")
            except (TypeError, ValueError):
                f = float("nan")
            lo, hi = REGULARISER_RANGE
            ok = 0 < f < 1 if key == "threshold" else (lo <= f <= hi or f == math.inf)
            if not ok:
                want = "a number in (0, 1)"
                if key != "threshold":
                    want = f"a positive number in [{lo:g}, {hi:g}] or 'inf'"
                raise ValueError(f"grid file {path}: {key!r} value {v!r} is not {want}")
            clean.append(f)
        grid[key] = sorted(set(clean))
    return grid


def variant_grid(grid: dict[str, list[float]], blocks: tuple[str, ...]) -> dict[str, list[float]]:
    """The search space for a variant with ``blocks``: its regularisers and the threshold.

    Missing keys take the estimator default (1.0) or threshold 0.5. Raises ``ValueError``
    (naming the keys) when every regulariser of the variant is only ``inf``: no point of the
    grid would have a block to fit.

    Examples
    --------
    >>> variant_grid({"lambda0": [1.0, 2.0], "tau": [3.0]}, ("w0", "node"))
    {'lambda0': [1.0, 2.0], 'nu': [1.0], 'threshold': [0.5]}
    """
    space = {BLOCK_PARAM[b]: list(grid.get(BLOCK_PARAM[b], [1.0])) for b in blocks}
    if space and all(v == math.inf for values in space.values() for v in values):
        raise ValueError(
            f"grid: every regulariser of the variant ({', '.join(f'{k}=inf' for k in space)}) "
            "is only inf, which removes every block; give at least one a finite value"
        )
    space["threshold"] = list(grid.get("threshold", [0.5]))
    return {k: space[k] for k in GRID_KEYS if k in space}


def grid_points(space: dict[str, list[float]]) -> list[dict[str, float]]:
    """Every combination, in a fixed order (last key fastest: thresholds of one fit adjacent).

    Examples
    --------
    >>> grid_points({"lambda0": [1.0, 2.0], "threshold": [0.4, 0.5]})[:2]
    [{'lambda0': 1.0, 'threshold': 0.4}, {'lambda0': 1.0, 'threshold': 0.5}]
    """
    keys = list(space)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*space.values())]


def point_key(point: dict[str, float], keys=None) -> str:
    """A canonical string for a point (or its ``keys`` subset), e.g. to find duplicates.

    Examples
    --------
    >>> point_key({"nu": 1.0, "lambda0": 0.1})
    'lambda0=0.1,nu=1'
    """
    keys = sorted(point) if keys is None else sorted(keys)
    return ",".join(f"{k}={float(point[k]):.12g}" for k in keys)


def config_hash(**parts) -> str:
    """A short SHA-256 of JSON-serialised settings (names a study)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]
