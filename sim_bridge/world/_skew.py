"""Within-stage data skew: how much input each task of a stage gets.

HDFS cuts a map stage's input into fixed blocks, so maps differ little (the record mix of a
block still varies its cost); a reduce stage's input is a hash partition of the map output,
and partitions are uneven. Mantri (OSDI'10, §2) finds uneven work among a phase's tasks
behind a large share of outliers, most of it in reduce phases; SkewTune (Kwon et al.,
SIGMOD'12) measures reduce partitions several times the median. A task's input is the
stage's nominal share times a lognormal factor of mean 1 (``exp(s Z - s^2 / 2)``), with
``s = 0.1`` for maps and ``s = 0.5`` for reduces (a reduce p90 of ~1.7x the stage median).
The two sigmas are assumptions of the order those papers show, not fits. The factor is
recorded per attempt in the trace (``input_work``: the task's skewed base work, which a
scheduler knows from the input size).
"""

from __future__ import annotations

import numpy as np

from sim_bridge import _portable_math as portable_math

__all__ = ["SKEW_SIGMA", "input_skew"]

#: lognormal sigma of a task's input within its stage, by stage (0: map/task, 1: reduce)
SKEW_SIGMA = (0.1, 0.5)


def input_skew(rng: np.random.Generator, stage: np.ndarray, sigma=SKEW_SIGMA) -> np.ndarray:
    """Lognormal input factors of mean 1, one per task, ``sigma[stage]`` per task.

    Examples
    --------
    >>> f = input_skew(np.random.default_rng(0), np.repeat([0, 1], 20000))
    >>> bool(abs(f[:20000].mean() - 1) < 0.01), bool(abs(f[20000:].mean() - 1) < 0.02)
    (True, True)
    >>> input_skew(np.random.default_rng(0), np.zeros(3, int), sigma=(0.0, 0.0)).tolist()
    [1.0, 1.0, 1.0]
    """
    s = np.asarray(sigma, dtype=float)[np.asarray(stage, dtype=np.int64)]
    z = rng.standard_normal(s.shape)
    return portable_math.exp(s * z - 0.5 * s * s)
