"""Shared test setup: every server and index a test starts keeps its on-disk
cache under a temporary folder, never in the user's cache directory."""

import os
import tempfile

import pytest
from hypothesis import settings

# How long one example takes is not a property of the code under test, and a
# shared machine's timings vary: no property test fails on a deadline.
settings.register_profile("nearsym", deadline=None)
settings.load_profile("nearsym")

os.environ.setdefault("NEARSYM_CACHE_DIR", tempfile.mkdtemp(prefix="nearsym-test-cache-"))


@pytest.fixture(scope="session")
def postgres():  # type: ignore[no-untyped-def]
    """A throwaway PostgreSQL cluster for the session (`tests/pgcluster.py`).

    Skipped when PostgreSQL or psycopg is not installed here; under CI
    (`CI` set) their absence fails instead, so a green CI has run these."""
    from tests.pgcluster import Cluster, binaries

    found = binaries()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        found = None
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL or psycopg is missing on CI (.ci/run installs them)")
        pytest.skip("PostgreSQL binaries or psycopg not installed")
    cluster = Cluster(found)
    try:
        yield cluster
    finally:
        cluster.close()
