"""The C part of nearsym: one optional extension (see
server/nearsym/extract/_scan.c). Where it cannot be built (no compiler),
the install goes on and nearsym runs its Python scans instead. Everything
else about the package is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "nearsym.extract._scan",
            ["server/nearsym/extract/_scan.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
