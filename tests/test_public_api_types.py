"""The public API of ``mtl`` and ``sim_bridge`` as a type checker sees it from outside.

``make test`` runs mypy on this file (``[tool.mypy] files`` in pyproject.toml) as well as on
the two packages: each ``assert_type`` below fails type-checking if a public name loses its
annotation (an ``Any`` is not a ``Predictor``) or changes its declared type, and the
assignments to protocol-typed names check structural conformance (``mtl.Predictor`` is both
``mtl.PredictorProtocol`` and ``sim_bridge.PredictorProtocol``, the trace contract's). pytest
runs the same code, so the calls are also real.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import assert_type

import numpy as np

import mtl
import sim_bridge


def _tiny_predictor() -> mtl.Predictor:
    X, y = mtl.make_grouped_classification(200, 3, 2, 3, seed=0)
    return mtl.Predictor.from_estimator(mtl.GroupedMTLSVC(variant="f0t").fit(X, y))


def test_predictor_round_trip_is_typed() -> None:
    X, _y = mtl.make_grouped_classification(60, 3, 2, 3, seed=1)
    pred = _tiny_predictor()
    where = assert_type(pred.save(tempfile.mkdtemp()), Path)
    again = assert_type(mtl.load_predictor(where), mtl.Predictor)
    p = assert_type(again.predict_proba(X), np.ndarray)
    one = assert_type(
        again.straggler_probability("n0", "w0", {"c_0": 1.0, "c_1": 2.0, "c_2": 3.0}), float
    )
    protocol: mtl.PredictorProtocol = again  # structural: no inheritance needed
    contract: sim_bridge.PredictorProtocol = again  # the simulator's, without mtl importing it
    assert isinstance(protocol, mtl.PredictorProtocol)
    assert isinstance(contract, sim_bridge.PredictorProtocol)
    assert p.shape == (len(X),) and 0.0 < one < 1.0
    assert_type(again.feature_names, list[str])
    assert_type(again.threshold, float)


def test_simulator_entry_points_are_typed() -> None:
    run = assert_type(
        sim_bridge.simulate("SYN", "late", nodes=6, hours=0.05, seed=1),
        sim_bridge.SimulationResult,
    )
    job = sim_bridge.JobSpec("a", 0.0, [1.0, 2.0], np.array([3.0]))
    assert_type(job.map_work, np.ndarray)
    assert_type(job.critical_path, float)
    work = assert_type(sim_bridge.Workload("X", [job]), sim_bridge.Workload)
    assert_type(sim_bridge.headroom_captured(1.0, 0.5, 0.0), float)
    assert_type(sim_bridge.list_policies(), dict[str, str])
    assert_type(sim_bridge.get_policy("none"), sim_bridge.policies.Policy)
    assert run.summary["jobs"] >= 0 and work.name == "X" and job.critical_path == 5.0
