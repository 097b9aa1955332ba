"""A PostgreSQL cluster of the project's own, in a local directory, on its own port and socket.

It is the embedded default that `make demo` and the tests use. The server listens only on a Unix
socket inside the directory (mode 0700), so trust authentication reaches nobody but its owner.
Run by root, the cluster belongs to the `postgres` user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PORT = 55432
DEFAULT_BINDIR = Path("/usr/lib/postgresql/15/bin")
SOCKET_PATH_MAX = 107  # sun_path limit on Linux, less the terminating NUL
SERVER_SETTINGS = {
    "listen_addresses": "''",
    "unix_socket_permissions": "0700",
    "shared_buffers": "'1GB'",  # holds 100k turns' vectors, HNSW index and full text
    "max_connections": "50",
    "log_min_messages": "warning",
}


class LocalServerError(RuntimeError):
    """The local server could not be created, started or stopped."""


@dataclass(frozen=True)
class LocalServer:
    directory: Path
    port: int = DEFAULT_PORT
    bindir: Path = DEFAULT_BINDIR

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def socket_dir(self) -> Path:
        return self.directory / "run"

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    def url(self, dbname: str = "postgres") -> str:
        """A libpq URI for the server (host is the socket directory)."""
        return f"postgresql://postgres@/{dbname}?host={self.socket_dir}&port={self.port}"

    def _owner(self) -> str | None:
        """The OS user the server runs as: postgres when we are root, else ourselves (None)."""
        return "postgres" if os.geteuid() == 0 else None

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / args[0]), *args[1:]]
        owner = self._owner()
        if owner:
            command = ["runuser", "-u", owner, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True)
        if check and result.returncode != 0:
            raise LocalServerError(f"{' '.join(command)} failed:\n{result.stderr or result.stdout}")
        return result

    def _prepare_directory(self) -> None:
        socket = self.socket_dir / f".s.PGSQL.{self.port}"
        if len(str(socket)) > SOCKET_PATH_MAX:
            raise LocalServerError(f"socket path {socket} is longer than {SOCKET_PATH_MAX} bytes; use a shorter --dir")
        if not (self.bindir / "initdb").exists():
            raise LocalServerError(f"PostgreSQL binaries not found in {self.bindir}; run `make provision`")
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        owner = self._owner()
        if owner:
            entry = pwd.getpwnam(owner)
            for path in (self.directory, self.socket_dir):
                os.chown(path, entry.pw_uid, entry.pw_gid)
            reachable = subprocess.run(["runuser", "-u", owner, "--", "test", "-w", str(self.socket_dir)])
            if reachable.returncode != 0:
                raise LocalServerError(
                    f"user {owner} cannot reach {self.directory}: "
                    f"every directory above it must be searchable by {owner}"
                )
        self.directory.chmod(0o700)
        self.socket_dir.chmod(0o700)

    def initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").exists()

    def init(self) -> None:
        self._prepare_directory()
        if self.initialized():
            return
        self._run(
            "initdb",
            "-D",
            str(self.data_dir),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        lines = [f"{name} = {value}" for name, value in SERVER_SETTINGS.items()]
        lines.append(f"unix_socket_directories = '{self.socket_dir}'")
        conf = self.data_dir / "postgresql.conf"
        conf.write_text(conf.read_text() + "\n# agent-memory local server\n" + "\n".join(lines) + "\n")

    def running(self) -> bool:
        if not self.initialized():
            return False
        return self._run("pg_ctl", "status", "-D", str(self.data_dir), check=False).returncode == 0

    def start(self) -> bool:
        """Creates the cluster if needed and starts it; False when it was already running."""
        self.init()
        if self.running():
            return False
        owner = self._owner()
        if owner:
            self.log_file.touch()
            shutil.chown(self.log_file, owner)
        self._run(
            "pg_ctl",
            "start",
            "-w",
            "-t",
            "60",
            "-D",
            str(self.data_dir),
            "-l",
            str(self.log_file),
            "-o",
            f"-p {self.port}",
        )
        return True

    def stop(self) -> bool:
        """Stops the server (fast shutdown); False when it was not running."""
        if not self.running():
            return False
        self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data_dir))
        return True
