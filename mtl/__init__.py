"""Grouped multi-task SVMs for straggler prediction (Yadwadkar et al.), the Wrangler baseline
and the scheduler-facing predictor."""

__all__: list[str] = []
