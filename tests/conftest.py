"""Shared test setup: every server and index a test starts keeps its on-disk
cache under a temporary folder, never in the user's cache directory."""

import os
import tempfile

os.environ.setdefault("NEARSYM_CACHE_DIR", tempfile.mkdtemp(prefix="nearsym-test-cache-"))
