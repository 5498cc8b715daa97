"""The labelling defaults the light config modules need, stated once without importing pandas.

``sim_bridge.trace`` owns the straggler rule (``DEFAULT_BETA``, ``DEFAULT_MIN_TASKS``, with
their evidence); importing it loads pandas, which ``straggler --help`` should not pay for, so
the settings dataclasses read these copies and ``tests/test_pipelines_api.py`` checks they
equal the owner's.
"""

from __future__ import annotations

#: ``sim_bridge.trace.DEFAULT_BETA``: a straggler runs longer than beta x its stage's median.
BETA = 1.3

#: ``sim_bridge.trace.DEFAULT_MIN_TASKS``: finished original attempts a stage needs.
MIN_TASKS = 3
