"""Build the compiled event loop (``sim_bridge._fifo_core``); everything else is in pyproject.toml.

The extension is optional: without a C compiler the package still installs and
``sim_bridge.simulate`` runs every model on the pure-Python engine.
"""

import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

# no fused multiply-add contraction: the compiled loop must round exactly as CPython does
FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]

setup(
    ext_modules=cythonize(
        [
            Extension(
                "sim_bridge._fifo_core",
                ["sim_bridge/_fifo_core.pyx"],
                extra_compile_args=FLAGS,
                optional=True,
            )
        ],
        compiler_directives={"language_level": 3},
    )
)
