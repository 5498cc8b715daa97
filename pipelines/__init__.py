"""Pipelines tying the model and the simulator together, and the ``straggler`` CLI.

Public names: the trace loader and validator, Wrangler's straggler labels, the seed's
time-ordered split protocols (Tables 1 and 2), the data directory resolver and the dataset
fetcher, the FlowBench reader (:mod:`pipelines.flowbench`), the output helpers every command
uses, and the pipelines as a Python API the CLI wraps: each command's settings dataclass
(``CollectConfig``, ``TrainConfig``, ``EvaluateConfig``, ``CompareConfig``,
``FidelityConfig``, ``DemoConfig``, ``SimulateConfig``, ``ReproduceConfig``,
``ReportConfig``) and its function (``collect_trace``, ``train``, ``evaluate``, ``compare``,
``fidelity``, ``demo``, ``simulate``, ``reproduce``, each claiming its output directory as
one output set, as the command does, and ``write_report``), the lower-level entry points they
call, which do not claim it (``collect``, ``run_training``, ``run_evaluate``,
``run_compare``, ``run_reproduce``, ``run_report`` take the same config; ``run_fidelity``),
``build_report`` (``run_report`` with the config's fields as arguments), ``run_demo`` (its
config too), the demo's ``replication_example``, and the cluster sizing of ``simulate
--load`` (``size_cluster``, ``ClusterSize``; the loads it reads: ``offered_load_profile``,
``trace_loads``). They are imported lazily (on first
attribute access) so that ``straggler --help`` does not pay for pandas.

Examples
--------
>>> import pipelines
>>> pipelines.TABLE1_FRACTIONS[0], pipelines.DEFAULT_BETA
(0.01, 1.3)
>>> cfg = pipelines.TrainConfig(traces="runs/trace", out="runs/train", grid="small")
>>> cfg.variant  # pipelines.train(cfg) runs `straggler train --traces runs/trace ...`
'f0nl'
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, tuple[str, str]] = {
    "collect": ("pipelines._collect", "collect"),
    "collect_cells": ("pipelines._collect", "collect_cells"),
    "offered_load": ("pipelines._collect", "offered_load"),
    "scales_for_load": ("pipelines._collect", "scales_for_load"),
    "ClusterSize": ("pipelines._simulate_sizing", "ClusterSize"),
    "size_cluster": ("pipelines._simulate_sizing", "size_cluster"),
    "offered_load_profile": ("pipelines._cluster_load", "offered_load_profile"),
    "trace_loads": ("pipelines._cluster_load", "trace_loads"),
    "CollectConfig": ("pipelines._collect_config", "CollectConfig"),
    "CompareConfig": ("pipelines._compare_config", "CompareConfig"),
    "EvaluateConfig": ("pipelines._evaluate_config", "EvaluateConfig"),
    "FidelityConfig": ("pipelines._fidelity_config", "FidelityConfig"),
    "TrainConfig": ("pipelines._train_config", "TrainConfig"),
    "claimed_output": ("pipelines._api", "claimed_output"),
    "collect_trace": ("pipelines._api", "collect_trace"),
    "compare": ("pipelines._api", "compare"),
    "evaluate": ("pipelines._api", "evaluate"),
    "fidelity": ("pipelines._api", "fidelity"),
    "train": ("pipelines._api", "train"),
    "reproduce": ("pipelines._api", "reproduce"),
    "write_report": ("pipelines._api", "write_report"),
    "replication_example": ("pipelines._replication", "replication_example"),
    "DemoConfig": ("pipelines._demo_config", "DemoConfig"),
    "SimulateConfig": ("pipelines._simulate_config", "SimulateConfig"),
    "ReproduceConfig": ("pipelines._reproduce_config", "ReproduceConfig"),
    "ReportConfig": ("pipelines._report_config", "ReportConfig"),
    "simulate": ("pipelines._api", "simulate"),
    "demo": ("pipelines._api", "demo"),
    "run_compare": ("pipelines._compare", "run_compare"),
    "run_demo": ("pipelines._demo", "run_demo"),
    "run_evaluate": ("pipelines._evaluate", "run_evaluate"),
    "run_reproduce": ("pipelines._reproduce", "run_reproduce"),
    "run_report": ("pipelines.report", "run_report"),
    "FidelityProfile": ("pipelines._fidelity", "FidelityProfile"),
    "run_fidelity": ("pipelines._fidelity", "run_fidelity"),
    "build_report": ("pipelines.report", "build_report"),
    "run_training": ("pipelines._train", "run_training"),
    "DATA_DIR_ENV": ("pipelines._datadir", "DATA_DIR_ENV"),
    "resolve_data_dir": ("pipelines._datadir", "resolve_data_dir"),
    "DEFAULT_BETA": ("pipelines._dataset", "DEFAULT_BETA"),
    "DEFAULT_MIN_TASKS": ("pipelines._dataset", "DEFAULT_MIN_TASKS"),
    "REQUIRED_COLUMNS": ("pipelines._dataset", "REQUIRED_COLUMNS"),
    "LabelledTrace": ("pipelines._dataset", "LabelledTrace"),
    "TraceError": ("pipelines._dataset", "TraceError"),
    "check_classes": ("pipelines._dataset", "check_classes"),
    "counter_columns": ("pipelines._dataset", "counter_columns"),
    "label_stragglers": ("pipelines._dataset", "label_stragglers"),
    "load_trace": ("pipelines._dataset", "load_trace"),
    "trace_hash": ("pipelines._dataset", "trace_hash"),
    "validate_trace": ("pipelines._dataset", "validate_trace"),
    "FlowBenchFormatError": ("pipelines.flowbench", "FlowBenchFormatError"),
    "collect_flowbench": ("pipelines.flowbench", "collect_flowbench"),
    "read_flowbench": ("pipelines.flowbench", "read_flowbench"),
    "ChecksumMismatchError": ("pipelines._fetch", "ChecksumMismatchError"),
    "DownloadError": ("pipelines._fetch", "DownloadError"),
    "DataDirBusyError": ("pipelines._fetch", "DataDirBusyError"),
    "FileCheck": ("pipelines._fetch", "FileCheck"),
    "load_flowbench_manifest": ("pipelines._fetch", "load_flowbench_manifest"),
    "verify_data": ("pipelines._fetch", "verify"),
    "SourceFile": ("pipelines._fetch", "SourceFile"),
    "load_manifest": ("pipelines._fetch", "load_manifest"),
    "check_data": ("pipelines._fetch", "check"),
    "fetch_data": ("pipelines._fetch", "fetch"),
    "atomic_write_text": ("pipelines._io", "atomic_write_text"),
    "write_summary": ("pipelines._io", "write_summary"),
    "binary_metrics": ("pipelines._metrics", "binary_metrics"),
    "choose_threshold": ("pipelines._metrics", "choose_threshold"),
    "fdr_bh": ("pipelines._metrics", "fdr_bh"),
    "holm": ("pipelines._metrics", "holm"),
    "headline": ("pipelines._headline", "headline"),
    "jct_difference_table": ("pipelines._plots", "jct_difference_table"),
    "plot_jct_difference": ("pipelines._plots", "plot_jct_difference"),
    "TABLE1_FRACTIONS": ("pipelines._splits", "TABLE1_FRACTIONS"),
    "DaskNotInstalledError": ("pipelines._sweep", "DaskNotInstalledError"),
    "Engine": ("pipelines._sweep", "Engine"),
    "SweepTask": ("pipelines._sweep", "SweepTask"),
    "run_sweep": ("pipelines._sweep", "run_sweep"),
    "sweep_session": ("pipelines._sweep", "sweep_session"),
    "task_seed": ("pipelines._sweep", "task_seed"),
    "Split": ("pipelines._splits", "Split"),
    "fraction_split": ("pipelines._splits", "fraction_split"),
    "leave_pair_out_splits": ("pipelines._splits", "leave_pair_out_splits"),
    "pair_order": ("pipelines._splits", "pair_order"),
    "table1_splits": ("pipelines._splits", "table1_splits"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'pipelines' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
