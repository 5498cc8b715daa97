"""What a run's progress bar shows: jobs finished, and where the simulated clock is.

A replay's jobs arrive through its hours, so a bar of jobs finished alone cannot say how far
through the day a run is; its postfix gives the simulated clock and the jobs alive.
"""

from __future__ import annotations

from typing import Any

__all__ = ["advance_bar"]


def advance_bar(
    bar: Any, finished: int, finished_before: int, clock_s: float, live: int | None = None
) -> int:
    """Move ``bar`` (a tqdm bar) on to ``finished`` jobs from ``finished_before`` and set its
    postfix to the simulated clock ``clock_s`` (seconds, shown in hours) and the ``live``
    jobs (left out when None); returns ``finished`` (the next call's ``finished_before``).
    The postfix is drawn with the bar's next refresh, so a call costs no more than
    ``bar.update``.

    Examples
    --------
    >>> import io
    >>> from tqdm import tqdm
    >>> bar = tqdm(total=10, file=io.StringIO())
    >>> advance_bar(bar, 4, 1, 5400.0, 3)
    4
    >>> bar.n, bar.postfix
    (3, 'clock 1.50 h, 3 jobs alive')
    """
    text = f"clock {clock_s / 3600.0:.2f} h"
    if live is not None:
        text += f", {live:,} jobs alive"
    bar.set_postfix_str(text, refresh=False)
    bar.update(finished - finished_before)
    return finished
