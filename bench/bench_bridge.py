"""Decision cost of the predictor-informed placement inside the simulator.

Peer measured in the same run: the same simulation (same workloads, cluster, seed and
speculation policy) with FIFO placement and no predictor. Goal (issue 6): a
predictor-informed run takes at most 1.5x the wall time of the run without a predictor.

The predictor is a real ``mtl.Predictor`` (GroupedMTLSVC f0,n,l) trained on a trace the
simulator collects here first. Besides the ratio, the run prints where the extra time goes:
reading node counters through ``SimView.node_counters`` (the engine synthesises ~30
sysstat-like readings per call) vs scoring them with the predictor.

Run: ``.venv/bin/python bench/bench_bridge.py [--nodes 50] [--hours 1] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np


def _best(fn, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--workloads", default="FB2009,FB2010,ALI2017")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--speculation", default="late")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--load", type=float, default=0.7, help="nominal offered load (straggler collect --load)"
    )
    args = ap.parse_args()

    import mtl
    import sim_bridge
    from pipelines._collect import collect, scales_for_load
    from pipelines._compare import TRAIN_C
    from pipelines._dataset import check_classes, label_stragglers, load_trace

    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    tmp = tempfile.mkdtemp(prefix="bench-bridge-")
    size = {"nodes": args.nodes, "hours": args.hours, "data_dir": args.data_dir}
    scales = scales_for_load(names, args.load, slots=2, seed=0, **size)
    collect(tmp, names, seed=0, scales=scales, **size)
    lt = check_classes(label_stragglers(load_trace(tmp)), on_single_class="drop")
    model = mtl.GroupedMTLSVC(variant="f0nl", C=TRAIN_C).fit(lt.X, lt.y)
    pred = mtl.Predictor.from_estimator(model)

    wls = [
        sim_bridge.load_workload(w, args.data_dir, hours=args.hours, scale=scales[w], seed=7 + k)
        for k, w in enumerate(names)
    ]
    kw = dict(nodes=args.nodes, seed=7, cluster_seed=0, progress=False, record_counters=False)

    def base():
        sim_bridge.simulate(wls, args.speculation, "fifo", **kw)

    holder = {}

    def informed():
        pol = sim_bridge.PredictorPlacement(pred)
        holder["r"] = sim_bridge.simulate(wls, args.speculation, pol, **kw)
        holder["pol"] = pol

    t_base = _best(base, args.repeat)
    t_pred = _best(informed, args.repeat)
    st = holder["pol"].stats_
    r = holder["r"]

    # where the extra time goes: one counter read, one scoring, measured in isolation
    view_cost = _counter_read_cost(wls, args, kw)
    row = {f: 1.0 for f in pred.feature_names}
    t0 = time.perf_counter()
    for _ in range(2000):
        pred.straggler_probability("n0001", names[0], row)
    score_cost = (time.perf_counter() - t0) / 2000

    print(
        f"workloads {names}, {args.nodes} nodes, {args.hours} h, {r.summary['jobs']} jobs, "
        f"{r.summary['attempts']} attempts, speculation {args.speculation}"
    )
    print(f"without predictor (fifo)      : {t_base:8.3f} s")
    print(f"predictor-informed (mtl f0nl) : {t_pred:8.3f} s")
    print(f"ratio informed / fifo         : {t_pred / t_base:8.2f}x   (goal <= 1.5x)")
    print(
        f"decisions: {st['launches']} launches, {st['refused']} refusals, "
        f"{st['forced']} forced, {st['scored']} scored, {st['reads']} counter reads"
    )
    print(
        f"one SimView.node_counters read: {view_cost * 1e3:8.3f} ms "
        f"-> {st['reads'] * view_cost:.3f} s of the run"
    )
    print(
        f"one straggler_probability     : {score_cost * 1e6:8.1f} us "
        f"-> {st['scored'] * score_cost:.3f} s of the run"
    )
    rest = t_pred - st["reads"] * view_cost
    print(
        "ratio without the counter synthesis (derived: informed - reads x read cost): "
        f"{rest / t_base:.2f}x"
    )


def _counter_read_cost(wls, args, kw) -> float:
    """Time of ``view.node_counters`` on a live view (a placement that reads every free
    node once per pass, then behaves as FIFO)."""
    import sim_bridge
    from sim_bridge.policies import FIFOPlacement

    spent = [0.0, 0]

    class Reader(FIFOPlacement):
        name = "_bench_reader"

        def assign(self, view, free):
            t0 = time.perf_counter()
            for node in free:
                view.node_counters(node)
                spent[1] += 1
            spent[0] += time.perf_counter() - t0
            return super().assign(view, free)

    sim_bridge.simulate(wls[:1], args.speculation, Reader(), **{**kw, "seed": 8})
    return spent[0] / max(spent[1], 1)


if __name__ == "__main__":
    main()
