"""One seed, one table, whichever vector unit, BLAS kernel or engine build runs the replay.

A sweep on a Dask cluster runs its tasks on whatever machines the workers are on, and the
issue's promise is identical tables whatever the engine. NumPy and OpenBLAS choose their
kernels by the CPU at run time (AVX-512 or not; OpenBLAS's Haswell, SkylakeX or Sandybridge
kernels), and those kernels round differently; before ``sim_bridge._portable_math`` and the
fixed-order co-tenant load, one replay gave different task tables under each of them, and
the engine without its compiled extensions gave yet another.

Each run here is a child process: a replay of the synthetic workload with co-located
contention, its noise tail, degraded nodes and counters, under every speculation policy,
written to Parquet. The children
differ only in their environment: NumPy's AVX-512 and AVX2 paths switched off
(``NPY_DISABLE_CPU_FEATURES``), OpenBLAS held to its Sandybridge kernel
(``OPENBLAS_CORETYPE``), or the compiled extensions switched off
(``STRAGGLER_NO_EXTENSIONS``, LATE alone: the Python engine is slow). Their tables must be
equal, value for value.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sim_bridge.policies._registry import list_policies

ROOT = Path(__file__).resolve().parents[1]

REPLAY = """
import sys
from pathlib import Path
import sim_bridge
from numpy._core._multiarray_umath import __cpu_features__ as cpu
for policy in sys.argv[2].split(","):
    r = sim_bridge.simulate("SYN", policy, "fair", nodes=40, slots=4, hours=0.06, seed=3,
                            progress=False)
    out = Path(sys.argv[1]) / policy
    out.mkdir()
    r.tasks.to_parquet(out / "tasks.parquet")
    r.jobs.to_parquet(out / "jobs.parquet")
print("avx512" if cpu.get("AVX512_SKX") else "no-avx512")
"""

#: every speculation policy: their closed forms (sim_bridge.theory) use NumPy and SciPy too
POLICIES = tuple(list_policies("speculation"))

Replays = tuple[str, dict[str, tuple[pd.DataFrame, pd.DataFrame]]]

#: NumPy's dispatch targets above the x86-64-v2 baseline (NumPy 2.x names)
NO_SIMD = "AVX512_ICL AVX512_SKX X86_V4 X86_V3"


def _has_avx512() -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # pragma: no cover - another NumPy layout
        return False
    return bool(__cpu_features__.get("AVX512_SKX"))


def _replay(out: Path, policies: tuple[str, ...], **env: str) -> Replays:
    """Run the replay of each policy in a child process with ``env``; its CPU path and tables."""
    out.mkdir()
    clean = {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    done = subprocess.run(
        [sys.executable, "-c", REPLAY, str(out), ",".join(policies)],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    tables = {
        p: (pd.read_parquet(out / p / "tasks.parquet"), pd.read_parquet(out / p / "jobs.parquet"))
        for p in policies
    }
    return done.stdout.split()[0], tables


def _assert_same(got: Replays, want: Replays) -> None:
    for policy, tables in got[1].items():
        for a, b in zip(tables, want[1][policy], strict=True):
            assert list(a.columns) == list(b.columns)
            assert len(a) == len(b) > 0
            pd.testing.assert_frame_equal(a, b, check_exact=True, obj=policy)


def test_other_cpu_paths_and_the_engine_without_extensions_give_the_same_tables(tmp_path):
    reference = _replay(tmp_path / "default", POLICIES)
    # the engine without its compiled extensions (LATE alone: the Python engine is slow)
    _assert_same(_replay(tmp_path / "python", ("late",), STRAGGLER_NO_EXTENSIONS="1"), reference)
    if not _has_avx512():
        pytest.skip("this CPU has no AVX-512: NumPy would take its same paths")
    env = {"NPY_DISABLE_CPU_FEATURES": NO_SIMD, "OPENBLAS_CORETYPE": "Sandybridge"}
    got = _replay(tmp_path / "plain", POLICIES, **env)
    assert reference[0] == "avx512" and got[0] == "no-avx512"  # the two took different paths
    _assert_same(got, reference)
