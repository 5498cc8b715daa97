"""Shared fixtures: where the public data lives in a checkout (``../shared/data``)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

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
