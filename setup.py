"""The C parts of nearsym: two optional extensions, the extraction's byte
scans (server/nearsym/extract/_scan.c) and the name alignment
(server/nearsym/core/_align.c). Where they cannot be built (no compiler),
the install goes on and nearsym runs the Python and numpy code they speed
up instead. Everything else about the package is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "nearsym.extract._scan",
            ["server/nearsym/extract/_scan.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "nearsym.core._align",
            ["server/nearsym/core/_align.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ]
)
