"""Shared test setup: every server and index a test starts keeps its on-disk
cache under a temporary folder, never in the user's cache directory, and
tests that share something costly run on one pytest-xdist worker."""

import os
import tempfile

import pytest
from hypothesis import settings

# How long one example takes is not a property of the code under test, and a
# shared machine's timings vary: no property test fails on a deadline.
settings.register_profile("nearsym", deadline=None)
settings.load_profile("nearsym")

os.environ.setdefault("NEARSYM_CACHE_DIR", tempfile.mkdtemp(prefix="nearsym-test-cache-"))
# Under pytest-xdist the workers inherit the folder the controller chose:
# each worker keeps its caches in a folder of its own below it, so two
# servers started on the same tree (a fixture indexed in place) by two
# workers never write one cache file at once.
if worker := os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["NEARSYM_CACHE_DIR"] = os.path.join(os.environ["NEARSYM_CACHE_DIR"], worker)


def _worker_group(item: pytest.Item) -> str | None:
    """The xdist group of a test that uses a costly shared fixture of ours.

    A session-scoped fixture (`postgres`, the editors' `vsix`) is made once
    per worker: its tests share a group named after it, so it is made once.
    A module-scoped one (a published database, an installed code-server) is
    made once per module and worker: its module's tests share a group named
    after the module. Fixtures of plugins (pytest-asyncio's loop policy) are
    cheap and do not count."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    session, module = [], []
    for name in info.names_closure:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if not fixturedef.baseid.startswith("tests"):
                continue
            if fixturedef.scope == "session":
                session.append(name)
            elif fixturedef.scope in ("package", "module", "class"):
                module.append(item.nodeid.split("::", 1)[0])
    if session:
        return sorted(session)[0]
    return module[0] if module else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with a costly shared fixture `xdist_group` (see
    `_worker_group`); `--dist loadgroup` (the pytest options in
    pyproject.toml) keeps each group on one worker. A test marked by hand
    keeps its own group.

    The scheduler reads a test's group from the `@group` end of its node
    id, which xdist's worker writes to `Item._nodeid`. pytest 9.2 keeps the
    id in `Item._id` instead, so xdist 3.8's line has no effect there (every
    group would be spread over the workers): here the worker writes it."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None and (group := _worker_group(item)):
            item.add_marker(pytest.mark.xdist_group(group))
    if not getattr(config.option, "loadgroup", False):  # set in xdist's workers only
        return
    for item in items:
        groups = sorted(
            {
                str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                for m in item.iter_markers("xdist_group")
            }
        )
        if groups and "@" not in item.nodeid and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


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
