"""The install without a C compiler: ``STRAGGLER_NO_EXTENSIONS=1`` makes ``sim_bridge`` skip
its compiled extensions (``_attempt_core``, ``_lifecycle_core``, ``_fifo_core``, ``_counters_core``,
``_tenants_core``, ``_retenant_core``, ``_paths_core``, ``_progress_core``, ``_heap_core``,
``_normals_core``, ``_libm_core``) as if they had not been built, and the engine oracles and
counter tests must pass on the Python/NumPy fallbacks (issue 16).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: Engine oracles (closed forms, conformance invariants) and the counter model, run again in a
#: child process with the extensions switched off.
FALLBACK_SUITE = [
    "test_sim_oracles.py",
    "test_sim_conformance.py",
    "test_sim_model.py::test_task_driven_counters_follow_the_running_tasks",
    "test_sim_model.py::test_synthetic_contention_paths_are_deterministic_and_persistent",
    "test_path_parts.py::test_a_part_of_a_block_is_the_blocks_slice",
    "test_shared_demands.py::test_a_full_pool_is_emptied_before_it_grows",
]


def _child(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=TESTS.parent,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_environment_variable_switches_the_extensions_off():
    code = (
        "import sim_bridge._cluster as c, sim_bridge._compiled as k, sim_bridge as s\n"
        "import sim_bridge.world._persistence as p, sim_bridge._view as v\n"
        "import sim_bridge.policies._speculation as sp, sim_bridge._event_heap as eh\n"
        "assert not eh.HEAP_IN_C and type(eh.new_event_heap()) is eh.PyEventHeap\n"
        "assert v._progress_c is None and sp._late_scan is sp._mantri_scan is None\n"
        "assert c.CounterSynth is None and c.TenantRates is None and not k.compiled_available()\n"
        "assert c._compiled_response is None and p.ar1_rows is p.expit_inplace is None\n"
        "import sim_bridge.world._block_marks as bm\n"
        "assert bm._normals_core is None and not bm.seekable()\n"
        "import sim_bridge.world._attempts as a\n"
        "assert a._retenant_c is None\n"
        "import sim_bridge.world._shared_demands as sd\n"
        "assert sd._share_demands_c is None\n"
        "import sim_bridge._portable_math as pm\n"
        "assert pm._libm_core is None\n"
        "import sim_bridge._jobs as j\n"
        "assert j.Attempt is j.PyAttempt\n"
        "import sim_bridge._sim_lifecycle as lc\n"
        "assert lc._core is None and lc.AttemptLifecycle._close is lc.AttemptLifecycle._close_py\n"
        "r = s.simulate(workload='SYN', hours=0.05, seed=0)\n"
        "print(r.summary['engine'], len(r.tasks))\n"
    )
    done = _child(code, STRAGGLER_NO_EXTENSIONS="1")
    assert done.returncode == 0, done.stderr
    engine, rows = done.stdout.split()
    assert engine == "python" and int(rows) > 0


def test_engine_and_counter_oracles_pass_on_the_fallbacks():
    args = [str(TESTS / t) for t in FALLBACK_SUITE]
    code = (
        "import sys, pytest, sim_bridge._compiled as k\n"
        "assert not k.compiled_available()\n"
        f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', *{args!r}]))\n"
    )
    done = _child(code, STRAGGLER_NO_EXTENSIONS="1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
