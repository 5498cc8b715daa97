"""Pipelines tying the model and the simulator together, and the ``straggler`` CLI."""

from pipelines._io import atomic_write_text, write_summary

__all__ = ["atomic_write_text", "write_summary"]
