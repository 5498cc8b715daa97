"""Shared fixtures: where the public data lives in a checkout (``../shared/data``), and a
local Dask cluster of two worker processes on 127.0.0.1 for the sweep tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
import pytest
from hypothesis import settings

matplotlib.use("Agg")

# The suite's property tests draw the same examples on every run (a CI verdict must not depend
# on the day's random draw) and have no per-example deadline (a loaded 2-core runner is slow,
# not wrong). HYPOTHESIS_PROFILE=explore draws fresh random examples, to hunt for new cases.
settings.register_profile("suite", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real public data beside the checkout; tests that need it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"no shared data at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _no_ambient_data_dir(monkeypatch):
    """Tests never pick up a developer's STRAGGLER_DATA_DIR by accident."""
    monkeypatch.delenv("STRAGGLER_DATA_DIR", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    os.environ.setdefault("TQDM_DISABLE", "1")


def local_dask_cluster() -> Iterator[Any]:
    """A ``distributed.LocalCluster`` of 2 single-threaded worker processes on 127.0.0.1
    (no dashboard, a free port), stopped afterwards; skips without the ``dask`` extra. Each
    test module that uses it makes its own fixture of it: one kills a worker mid-sweep."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_port=0,
    ) as c:
        yield c
