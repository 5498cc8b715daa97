"""One seed, one table, whichever vector unit, BLAS kernel or engine build runs the replay.

A sweep on a Dask cluster runs its tasks on whatever machines the workers are on, and the
issue's promise is identical tables whatever the engine. NumPy and OpenBLAS choose their
kernels by the CPU at run time (AVX-512 or not; OpenBLAS's Haswell, SkylakeX or Sandybridge
kernels), and those kernels round differently; before ``sim_bridge._portable_math`` and the
fixed-order co-tenant load, one replay gave different task tables under each of them, and
the engine without its compiled extensions gave yet another.

Each run here is a child process: a LATE replay of the synthetic workload with co-located
contention, its noise tail, degraded nodes and counters, written to Parquet. The children
differ only in their environment: NumPy's AVX-512 and AVX2 paths switched off
(``NPY_DISABLE_CPU_FEATURES``), OpenBLAS held to its Sandybridge kernel
(``OPENBLAS_CORETYPE``), or the compiled extensions switched off
(``STRAGGLER_NO_EXTENSIONS``). Their tables must be equal, value for value.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]

REPLAY = """
import sys
import numpy as np
import sim_bridge
from numpy._core._multiarray_umath import __cpu_features__ as cpu
r = sim_bridge.simulate("SYN", "late", "fair", nodes=40, slots=4, hours=0.1, seed=3,
                        progress=False)
r.tasks.to_parquet(sys.argv[1] + "/tasks.parquet")
r.jobs.to_parquet(sys.argv[1] + "/jobs.parquet")
print("avx512" if cpu.get("AVX512_SKX") else "no-avx512", r.summary["engine"])
"""

#: NumPy's dispatch targets above the x86-64-v2 baseline (NumPy 2.x names)
NO_SIMD = "AVX512_ICL AVX512_SKX X86_V4 X86_V3"


def _has_avx512() -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # pragma: no cover - another NumPy layout
        return False
    return bool(__cpu_features__.get("AVX512_SKX"))


def _replay(out: Path, **env: str) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    out.mkdir()
    clean = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES",)}
    done = subprocess.run(
        [sys.executable, "-c", REPLAY, str(out)],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return (
        done.stdout.split()[0],
        pd.read_parquet(out / "tasks.parquet"),
        pd.read_parquet(out / "jobs.parquet"),
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The replay as this machine runs it by default."""
    return _replay(tmp_path_factory.mktemp("cpu") / "default")


def _assert_same(got, want) -> None:
    for a, b in zip(got[1:], want[1:], strict=True):
        assert list(a.columns) == list(b.columns)
        assert len(a) == len(b) > 0
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_numpy_without_avx512_and_another_blas_kernel_give_the_same_tables(reference, tmp_path):
    if not _has_avx512():
        pytest.skip("this CPU has no AVX-512: both runs would take NumPy's same paths")
    got = _replay(
        tmp_path / "plain", NPY_DISABLE_CPU_FEATURES=NO_SIMD, OPENBLAS_CORETYPE="Sandybridge"
    )
    assert reference[0] == "avx512" and got[0] == "no-avx512"  # the two took different paths
    _assert_same(got, reference)


def test_the_engine_without_its_extensions_gives_the_same_tables(reference, tmp_path):
    _assert_same(_replay(tmp_path / "python", STRAGGLER_NO_EXTENSIONS="1"), reference)
