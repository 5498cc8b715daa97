"""Benchmark: fitting the grouped MTL SVM without the feature map vs the explicit-map LinearSVC.

At 1e5 and 1e6 rows (N=100 nodes, L=8 workloads, d=40 counters; variant f0nl unless
``--variant``) it measures, each in its own subprocess (one BLAS thread):

* ``GroupedMTLSVC(solver="implicit")`` -- trust-region Newton, no feature map;
* ``GroupedMTLSVC(solver="explicit")`` -- CSR block feature map + ``LinearSVC(dual=False)``
  (the named peer);
* ``WranglerSVC`` -- one LinearSVC per pair (800 pairs);

all with ``calibration_cv=None`` (one solve + in-sample Platt, so the times compare the
solvers), plus the default implicit fit with 3-fold cross-fitted calibration, the objective
value of both MTL paths, ``Predictor.predict_proba`` on all rows and one
``straggler_probability`` call. Ratios are printed against the explicit path of the same run.

Time is reported as wall and CPU time (CPU time is the fairer figure on a shared machine).
Memory is the kernel's peak RSS (``VmHWM``; ``ru_maxrss`` where it cannot be reset): the
worker loads the data, resets the high-water mark, then fits, so "above data" is the fit's own
peak and "peak RSS" includes the interpreter, libraries and the data both paths share.

Usage::

    python bench/bench_mtl_fit.py            # 1e5 and 1e6 rows
    python bench/bench_mtl_fit.py --quick    # 1e5 rows only

Writes ``summary.json`` and ``bench_mtl_fit.png`` to ``--out`` (default
``runs/bench_mtl_fit``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_NODES, N_WORKLOADS, N_COUNTERS = 100, 8, 40


def _rss_mb() -> float:
    """Peak resident set size of this process so far (since the last :func:`_reset_peak`)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _current_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    return _rss_mb()


def _reset_peak() -> bool:
    """Reset the kernel's high-water mark (Linux ``clear_refs``); False where unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _make_data(n_rows: int, directory: Path) -> None:
    from mtl import make_grouped_classification

    X, y = make_grouped_classification(n_rows, N_NODES, N_WORKLOADS, N_COUNTERS, seed=0)
    np.save(directory / "counters.npy", X.iloc[:, 2:].to_numpy())
    np.save(directory / "node.npy", X["node"].str[1:].astype(np.int32).to_numpy())
    np.save(directory / "workload.npy", X["workload"].str[1:].astype(np.int32).to_numpy())
    np.save(directory / "y.npy", y)


def _load(directory: Path):
    import pandas as pd

    counters = np.load(directory / "counters.npy")
    X = pd.DataFrame(counters, columns=[f"c_{j}" for j in range(counters.shape[1])])
    del counters
    X.insert(0, "workload", np.load(directory / "workload.npy"))
    X.insert(0, "node", np.load(directory / "node.npy"))
    return X, np.load(directory / "y.npy")


def _worker(method: str, directory: Path, variant: str) -> dict:
    from mtl import GroupedMTLSVC, Predictor, WranglerSVC

    X, y = _load(directory)
    import gc

    gc.collect()
    reset = _reset_peak()
    base = _current_mb() if reset else _rss_mb()
    out: dict = {"method": method, "baseline_rss_mb": base, "peak_reset": reset}
    if method == "implicit":
        est = GroupedMTLSVC(variant=variant, solver="implicit", calibration_cv=None)
    elif method == "explicit":
        est = GroupedMTLSVC(variant=variant, solver="explicit", calibration_cv=None)
    elif method == "implicit_cv3":
        est = GroupedMTLSVC(variant=variant, solver="implicit")
    elif method == "wrangler":
        est = WranglerSVC(calibration_cv=None)
    else:
        raise ValueError(f"unknown method {method!r}")
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(X, y)
    out["fit_s"] = time.perf_counter() - t0
    out["fit_cpu_s"] = time.process_time() - c0
    out["peak_rss_mb"] = _rss_mb()
    out["objective"] = getattr(est, "objective_", None)
    if method == "implicit":
        pred = Predictor.from_estimator(est)
        t0 = time.perf_counter()
        p = pred.predict_proba(X)
        out["predict_proba_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        p_est = est.predict_proba(X)[:, 1]
        out["estimator_predict_proba_s"] = time.perf_counter() - t0
        out["max_abs_diff_vs_estimator"] = float(np.abs(p - p_est).max())
        row = X.iloc[0]
        counters = {c: float(row[c]) for c in pred.feature_names}
        node, wl = row["node"].item(), row["workload"].item()
        calls = []
        for _ in range(2000):
            t0 = time.perf_counter()
            pred.straggler_probability(node, wl, counters)
            calls.append(time.perf_counter() - t0)
        out["straggler_probability_us_median"] = float(np.median(calls) * 1e6)
        out["straggler_probability_us_p99"] = float(np.quantile(calls, 0.99) * 1e6)
    return out


def _measure(method: str, directory: Path, variant: str) -> dict:
    res = subprocess.run(
        [
            sys.executable,
            __file__,
            "--worker",
            method,
            "--data",
            str(directory),
            "--variant",
            variant,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def _plot(results: dict, path: Path, variant: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = list(results)
    methods = ["implicit", "explicit", "wrangler", "implicit_cv3"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    width = 0.2
    for k, m in enumerate(methods):
        xs = np.arange(len(sizes)) + (k - 1.5) * width
        axes[0].bar(xs, [results[s][m]["fit_cpu_s"] for s in sizes], width, label=m)
        axes[1].bar(
            xs,
            [results[s][m]["peak_rss_mb"] - results[s][m]["baseline_rss_mb"] for s in sizes],
            width,
            label=m,
        )
    for ax, title in zip(axes, ["fit CPU time [s]", "peak RSS above data [MB]"], strict=True):
        ax.set_xticks(np.arange(len(sizes)), [f"{int(s):.0e} rows" for s in sizes])
        ax.set_yscale("log")
        ax.set_title(title)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"GroupedMTLSVC {variant}, N={N_NODES}, L={N_WORKLOADS}, d={N_COUNTERS}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1e5 rows only")
    ap.add_argument("--variant", default="f0nl", help="GroupedMTLSVC variant (default f0nl)")
    ap.add_argument("--out", default="runs/bench_mtl_fit", help="output directory")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(args.worker, Path(args.data), args.variant)))
        return 0

    sizes = [100_000] if args.quick else [100_000, 1_000_000]
    methods = ["implicit", "explicit", "wrangler", "implicit_cv3"]
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-mtl-") as tmp:
        for n in sizes:
            d = Path(tmp) / str(n)
            d.mkdir()
            print(
                f"== {n:.0e} rows, N={N_NODES}, L={N_WORKLOADS}, d={N_COUNTERS}, "
                f"variant {args.variant} ==",
                flush=True,
            )
            _make_data(n, d)
            results[n] = {}
            for m in methods:
                r = _measure(m, d, args.variant)
                results[n][m] = r
                print(
                    f"  {m:13s} fit {r['fit_s']:7.2f} s (CPU {r['fit_cpu_s']:7.2f} s)  "
                    f"peak RSS {r['peak_rss_mb']:6.0f} MB "
                    f"(data {r['baseline_rss_mb']:.0f} MB)  objective {r['objective']}",
                    flush=True,
                )
            ref = results[n]["explicit"]
            imp = results[n]["implicit"]
            extra_ref = ref["peak_rss_mb"] - ref["baseline_rss_mb"]
            extra_imp = imp["peak_rss_mb"] - imp["baseline_rss_mb"]
            print(
                f"  speed-up implicit vs explicit LinearSVC: "
                f"wall {ref['fit_s'] / imp['fit_s']:.1f}x"
                f", CPU {ref['fit_cpu_s'] / imp['fit_cpu_s']:.1f}x"
            )
            print(
                f"  peak RSS implicit / explicit: {imp['peak_rss_mb'] / ref['peak_rss_mb']:.3f}"
                f"  (above data: {extra_imp / extra_ref:.3f})"
            )
            rel = (imp["objective"] - ref["objective"]) / ref["objective"]
            print(f"  objective (implicit - explicit) / explicit: {rel:+.2e}")
            wr = results[n]["wrangler"]
            print(
                f"  WranglerSVC fit time / explicit: wall {wr['fit_s'] / ref['fit_s']:.2f}, "
                f"CPU {wr['fit_cpu_s'] / ref['fit_cpu_s']:.2f}"
            )
            print(
                f"  Predictor.predict_proba on {n:.0e} rows: {imp['predict_proba_s']:.3f} s "
                f"(estimator {imp['estimator_predict_proba_s']:.3f} s, max |diff| "
                f"{imp['max_abs_diff_vs_estimator']:.1e})"
            )
            print(
                f"  straggler_probability: median {imp['straggler_probability_us_median']:.1f}"
                f" us, p99 {imp['straggler_probability_us_p99']:.1f} us",
                flush=True,
            )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {"variant": args.variant, "results": {str(k): v for k, v in results.items()}}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    _plot(results, out / "bench_mtl_fit.png", args.variant)
    print(f"wrote {out / 'summary.json'} and {out / 'bench_mtl_fit.png'}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    raise SystemExit(main())
