"""Grouped multi-task SVMs for straggler prediction (Yadwadkar et al.), the Wrangler baseline
and the scheduler-facing predictor."""

from ._grouped import GroupedMTLSVC
from ._structure import VARIANTS
from ._synthetic import make_grouped_classification
from ._wrangler import WranglerSVC

__all__: list[str] = ["VARIANTS", "GroupedMTLSVC", "make_grouped_classification", "WranglerSVC"]
