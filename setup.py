"""Build the compiled extensions; everything else is in pyproject.toml.

``sim_bridge._fifo_core`` is the compiled event loop, ``sim_bridge._counters_core`` the
node-counter synthesis, ``sim_bridge._tenants_core`` the step rates of co-located tasks,
``sim_bridge._retenant_core`` the re-solve of a node's co-tenants,
``sim_bridge._paths_core`` kernels of the contention paths, ``sim_bridge._progress_core`` the
loops of a speculation scan, ``sim_bridge._heap_core`` the engine's event heap. All are
optional: without a C compiler the package still installs, ``sim_bridge.simulate`` runs every
model on the pure-Python engine and counters, rates, progress, re-solves and the heap come
from the NumPy/Python references.
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
                f"sim_bridge.{name}",
                [f"sim_bridge/{name}.pyx"],
                extra_compile_args=FLAGS,
                optional=True,
            )
            for name in (
                "_fifo_core",
                "_counters_core",
                "_tenants_core",
                "_retenant_core",
                "_paths_core",
                "_progress_core",
                "_heap_core",
            )
        ],
        compiler_directives={"language_level": 3},
    )
)
