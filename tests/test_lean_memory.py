"""``sim_bridge.lean_allocators``: what it sets, what it leaves alone, and that a streamed
run's files do not depend on it. Each case runs in a fresh interpreter: the settings are
process-wide, and Arrow reads its pool's variable once, when pyarrow is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sim_bridge._lean_memory import _glibc

ROOT = Path(__file__).resolve().parents[1]


def _child(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter; its last printed line, as JSON."""
    environ = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    environ.update(env, PYTHONPATH=str(ROOT))
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, check=False
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


_POOL = """
import json, os, sys
{before}
import sim_bridge
done = sim_bridge.lean_allocators()
import pyarrow as pa
print(json.dumps({{**done, "backend": pa.default_memory_pool().backend_name,
    "env": os.environ.get("ARROW_DEFAULT_MEMORY_POOL")}}))
"""


def test_before_pyarrow_both_settings_are_taken():
    got = _child(_POOL.format(before=""))
    assert got["arrow_system_pool"] is True
    assert got["backend"] == "system" and got["env"] == "system"
    assert got["malloc_mmap_threshold"] is (_glibc() is not None)


def test_after_pyarrow_its_pool_is_left_and_said_so():
    got = _child(_POOL.format(before="import pyarrow"))
    assert got["arrow_system_pool"] is False
    assert got["env"] is None and got["backend"] != "system"


def test_a_users_pool_choice_is_kept():
    got = _child(_POOL.format(before=""), ARROW_DEFAULT_MEMORY_POOL="jemalloc")
    assert got["env"] == "jemalloc" and got["arrow_system_pool"] is False


_RUN = """
import json, sys
import sim_bridge
if {lean}:
    sim_bridge.lean_allocators()
r = sim_bridge.simulate("SYN", "late", nodes=20, hours=0.25, seed=3, progress=False,
                        trace_sink={sink!r})
print(json.dumps({{"events": r.summary["events"], "p99": r.summary["p99_jct"]}}))
"""


@pytest.mark.slow
def test_a_streamed_runs_files_do_not_depend_on_the_allocators(tmp_path):
    runs = {}
    for lean in (False, True):
        sink = tmp_path / f"lean_{lean}.parquet"
        runs[lean] = _child(_RUN.format(lean=lean, sink=str(sink)))
        runs[lean]["tasks"] = pd.read_parquet(sink)
    assert runs[True]["events"] == runs[False]["events"] > 0
    assert runs[True]["p99"] == runs[False]["p99"]
    pd.testing.assert_frame_equal(runs[True]["tasks"], runs[False]["tasks"])


_CLI = """
import json, sys
from pipelines.cli import main
code = main(["simulate", "--workload", "SYN", "--nodes", "8", "--hours", "0.05", "--seed", "1",
             "--stream", "--no-progress", "--out", {out!r}])
print(json.dumps({{"code": code, "pyarrow": "pyarrow" in sys.modules}}))
"""


def test_straggler_simulate_stream_takes_both_settings(tmp_path):
    """The CLI claims its output directory before the command runs; that claim imports no
    pyarrow, so ``simulate --stream`` still sets Arrow's pool to the system allocator, and
    its summary says so."""
    got = _child(_CLI.format(out=str(tmp_path / "run")))
    assert got["code"] == 0 and got["pyarrow"] is True
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["lean_allocators"] == {
        "malloc_mmap_threshold": _glibc() is not None,
        "arrow_system_pool": True,
    }


_API = """
import json, sys
from pipelines._api import simulate
from pipelines._simulate_config import SimulateConfig
s = simulate(SimulateConfig(workloads=["SYN"], nodes=8, hours=0.05, seed=1, stream=True,
                            progress=False, out={out!r}))
print(json.dumps(s["lean_allocators"]))
"""


def test_the_api_simulate_streamed_sets_them_before_it_imports_pyarrow(tmp_path):
    """``pipelines.simulate`` with ``stream=True``, in a process that has not imported
    pyarrow: the settings come before the function's own imports of mtl and pandas."""
    got = _child(_API.format(out=str(tmp_path / "run")))
    assert got == {"malloc_mmap_threshold": _glibc() is not None, "arrow_system_pool": True}
