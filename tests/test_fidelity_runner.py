"""``run_fidelity`` takes its command's config; the former ``(out, **settings)`` call is the
same run; the plan takes the config's counts over the profile's."""

from __future__ import annotations

import json

import pytest

from pipelines import _fidelity as fid
from pipelines._fidelity_config import FidelityConfig
from pipelines._fidelity_plan import PROFILES, FidelityProfile, plan_fidelity

TINY = {"workloads": ["SYN"], "seeds": 2, "nodes": 8, "hours": 0.5}


def test_config_and_former_call_give_the_same_table_and_facts(tmp_path):
    empty = tmp_path / "no-data"
    empty.mkdir()
    a, b = tmp_path / "a", tmp_path / "b"
    lines_a: list[str] = []
    lines_b: list[str] = []
    sa = fid.run_fidelity(
        FidelityConfig(out=str(a), quick=True, data_dir=str(empty), **TINY), say=lines_a.append
    )
    sb = fid.run_fidelity(b, profile="quick", data_dir=str(empty), say=lines_b.append, **TINY)
    assert (a / "fidelity.csv").read_bytes() == (b / "fidelity.csv").read_bytes()
    assert (a / "fidelity.md").read_bytes() == (b / "fidelity.md").read_bytes()
    same = json.dumps([sa["facts"], sa["settings"]]) == json.dumps([sb["facts"], sb["settings"]])
    assert same  # as JSON text: a fact not measured holds NaN, which equals nothing
    ja, jb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    assert json.dumps(ja["facts"]) == json.dumps(jb["facts"]) and ja["complete"] is True
    # the printed verdicts are the table's, in the same order
    verdicts = [ln.split()[0] for ln in lines_a if ln[:4] in ("PASS", "FAIL", "n/a ")]
    assert verdicts == [f["verdict"] for f in sa["facts"]]
    assert lines_a[-1] == lines_b[-1]


def test_settings_beside_a_config_are_refused():
    with pytest.raises(TypeError, match=r"\['seeds'\]"):
        fid.run_fidelity(FidelityConfig(out="o"), seeds=3)


def test_plan_takes_the_config_over_the_profile(tmp_path):
    quick = PROFILES["quick"]
    plan = plan_fidelity(FidelityConfig(out="o", quick=True, workloads=["SYN"]))
    assert (plan.seeds, plan.sim["nodes"], plan.sim["hours"]) == (
        quick.seeds,
        quick.nodes,
        quick.hours,
    )
    cfg = FidelityConfig(out="o", workloads=["SYN"], nodes=7, slots=3, hours=0.5, load=0.4)
    plan = plan_fidelity(cfg)
    assert plan.profile is PROFILES["default"]
    assert {k: plan.sim[k] for k in ("nodes", "slots", "hours", "load")} == {
        "nodes": 7,
        "slots": 3,
        "hours": 0.5,
        "load": 0.4,
    }
    own = FidelityProfile("own", nodes=3, slots=1, hours=0.1, load=0.5, seeds=4)
    plan = plan_fidelity(FidelityConfig(out="o", workloads=["SYN"]), own)
    assert (plan.profile, plan.seeds, plan.sim["nodes"]) == (own, 4, 3)


@pytest.mark.parametrize("seeds", [0, 1])
def test_fewer_than_two_seeds_is_refused_naming_the_flag(seeds):
    with pytest.raises(ValueError, match=f"--seeds must be >= 2.*got {seeds}"):
        plan_fidelity(FidelityConfig(out="o", workloads=["SYN"], seeds=seeds))


def test_unknown_profile_name_is_refused():
    with pytest.raises(ValueError, match="'huge'"):
        plan_fidelity(FidelityConfig(out="o", workloads=["SYN"]), "huge")
