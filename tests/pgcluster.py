"""A throwaway PostgreSQL cluster for the tests and the shared-index bench.

`initdb` in a temporary folder, listening only on a Unix socket in that
folder (no TCP port), run as an unprivileged user: PostgreSQL refuses to
run as root, and the tests run as root on CI, so the cluster's files belong
to `nobody` and its processes start through `runuser`. The superuser
`postgres` logs in without a password over the socket (trust); the role the
tests use, `nearsym`, needs its password (scram-sha-256), so a wrong one is
refused as it would be on a team's server.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

PASSWORD = "nearsym-test"
USER = "nearsym"
DATABASE = "nearsym"


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian's layout), or
    the folder of `initdb` on PATH, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _version(path: str) -> int:
    try:
        return int(Path(path).parent.parent.name)
    except ValueError:
        return 0


class Cluster:
    """One cluster: `start()`, `stop()`, `url()`; `close()` removes it."""

    def __init__(self, bin_dir: Path, owner: str = "nobody") -> None:
        self.bin = bin_dir
        self.owner = owner
        self.base = Path(tempfile.mkdtemp(prefix="nearsym-pg-"))
        self.data = self.base / "data"
        self.socket = self.base / "run"
        self.socket.mkdir()
        as_root = os.geteuid() == 0
        if as_root:
            shutil.chown(self.base, owner)
            shutil.chown(self.socket, owner)
            self.base.chmod(0o755)
        pwfile = self.base / "pw"
        pwfile.write_text("unused\n")
        if as_root:
            shutil.chown(pwfile, owner)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=reject",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        hba = self.data / "pg_hba.conf"
        hba.write_text("local all postgres trust\nlocal all all scram-sha-256\n")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                "listen_addresses = ''\n"
                f"unix_socket_directories = '{self.socket}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                "shared_buffers = 256MB\nmaintenance_work_mem = 256MB\n"
                "max_connections = 60\n"
            )
        self.start()
        self.psql(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")
        self.psql(f"CREATE DATABASE {DATABASE} OWNER {USER}")
        # pg_trgm is not trusted for a plain owner before PostgreSQL 13;
        # create it as the superuser so every version behaves the same.
        self.psql("CREATE EXTENSION IF NOT EXISTS pg_trgm;", database=DATABASE)

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", self.owner, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.base)
        if check and done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)}: {done.stderr.strip()}")
        return done

    def start(self) -> None:
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.base / "log"), "-w", "-t", "60", "start"
        )

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def running(self) -> bool:
        return self._run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0

    def psql(self, sql: str, database: str = "postgres") -> str:
        done = self._run(
            "psql",
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            str(self.socket),
            "-U",
            "postgres",
            "-d",
            database,
            "-At",
            "-c",
            sql,
        )
        return done.stdout

    def url(self, password: str = PASSWORD, database: str = DATABASE) -> str:
        """A libpq URL for the test role over the Unix socket."""
        return f"postgresql://{USER}:{password}@/{database}?host={self.socket}"

    def create_database(self, name: str) -> str:
        """A fresh database owned by the test role, with pg_trgm; its URL."""
        self.psql(f"CREATE DATABASE {name} OWNER {USER}")
        self.psql("CREATE EXTENSION IF NOT EXISTS pg_trgm;", database=name)
        return self.url(database=name)

    def close(self) -> None:
        self.stop()
        deadline = time.monotonic() + 10
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(self.base, ignore_errors=True)
