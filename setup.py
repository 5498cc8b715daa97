"""Build the compiled extensions; everything else is in pyproject.toml.

``sim_bridge._attempt_core`` is the attempts' class with its numbers as C fields,
``sim_bridge._lifecycle_core`` the attempt lifecycle's compiled parts (close, launch solve),
``sim_bridge._fifo_core`` the compiled event loop, ``sim_bridge._counters_core`` the
node-counter synthesis, ``sim_bridge._tenants_core`` the step rates of co-located tasks,
``sim_bridge._retenant_core`` the re-solve of a node's co-tenants,
``sim_bridge._paths_core`` kernels of the contention paths, ``sim_bridge._progress_core`` the
loops of a speculation scan, ``sim_bridge._heap_core`` the engine's event heap,
``sim_bridge._libm_core`` the C library's ``exp``, ``log``, ``cos`` and ``pow`` over arrays
(``sim_bridge._portable_math``), ``sim_bridge._normals_core`` NumPy's normal stream drawn
from marked positions (compiled against NumPy's headers and linked with its
``libnpyrandom``, which NumPy ships for this; skipped when NumPy is not importable at build
time). All are optional: without a C compiler
the package still installs, ``sim_bridge.simulate`` runs every model on the pure-Python engine
and counters, rates, progress, re-solves, the heap and the path parts come from the
NumPy/Python references (and those four functions from :mod:`math`, the same values).
"""

import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

# no fused multiply-add contraction: the compiled loop must round exactly as CPython does
FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]


def _normals_core() -> list[Extension]:
    """The extension that draws NumPy's normals in C, when NumPy and its ``libnpyrandom``
    are there to build against (``numpy/random/lib``, shipped in NumPy's wheels)."""
    try:
        import numpy
    except ImportError:
        return []
    lib = Path(numpy.__file__).parent / "random" / "lib"
    if not lib.is_dir():
        return []
    return [
        Extension(
            "sim_bridge._normals_core",
            ["sim_bridge/_normals_core.pyx"],
            include_dirs=[numpy.get_include()],
            library_dirs=[str(lib)],
            libraries=["npyrandom"] + ([] if sys.platform == "win32" else ["m"]),
            extra_compile_args=FLAGS,
            optional=True,
        )
    ]


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
                "_attempt_core",
                "_lifecycle_core",
                "_fifo_core",
                "_counters_core",
                "_tenants_core",
                "_retenant_core",
                "_paths_core",
                "_progress_core",
                "_heap_core",
                "_libm_core",
            )
        ]
        + _normals_core(),
        compiler_directives={"language_level": 3},
    )
)
