"""The local product needs nothing of PostgreSQL: psycopg is imported only
once a shared index is used (`nearsym publish`, the `sharedIndex` setting)."""

from __future__ import annotations

import subprocess
import sys


def test_serving_and_searching_import_no_postgresql_driver() -> None:
    code = (
        "import sys\n"
        "import nearsym.tools.cli, nearsym.lsp.server, nearsym.tools.publish\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool')"
        " or m.startswith('nearsym.index.shared')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
