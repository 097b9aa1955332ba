"""A PostgreSQL cluster of the project's own, in a local directory, on its own port and socket.

It is the embedded default that `make demo` and the tests use. The server listens only on a Unix
socket inside the directory (mode 0700), so trust authentication reaches nobody but its owner.
Run by root, the cluster belongs to the `postgres` user, since PostgreSQL refuses to run as root.
find_home says which directory the command uses, from any working directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping
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
    # pg_cron schedules `call memory.maintain()`; its jobs run as background workers (no connection over
    # TCP, which this server does not listen on), its metadata lives in the postgres database.
    "shared_preload_libraries": "'pg_cron'",
    "cron.database_name": "'postgres'",
    "cron.use_background_workers": "on",
    "max_worker_processes": "16",
}

CONF_MARKER = "# agent-memory local server"  # what follows it in postgresql.conf is ours

HOME_NAME = ".agent-memory"
HOME_RULE = (
    "$AGENT_MEMORY_HOME if set; else the nearest .agent-memory/ holding a server in the current directory or"
    " a parent; else the .agent-memory/ of the project agent-memory is installed in (<project>/.venv), or"
    " /tmp/agent-memory-<hash of the project folder> when root runs it from a folder the postgres user cannot"
    " enter, as make does; else ./.agent-memory"
)


class LocalServerError(RuntimeError):
    """The local server could not be created, started or stopped."""


@dataclass(frozen=True)
class Home:
    """The local server's directory and why it was chosen (for messages)."""

    directory: Path
    reason: str


def postgres_can_enter(folder: Path) -> bool:
    """Whether the server's OS user can reach a folder: always when we are not root (the server is ours)."""
    if os.geteuid() != 0:
        return True
    try:
        entered = subprocess.run(["runuser", "-u", "postgres", "--", "test", "-x", str(folder)], capture_output=True)
        return entered.returncode == 0
    except OSError:  # no runuser
        return False


def project_home(project: Path, enterable: Callable[[Path], bool]) -> Path:
    """Where the Makefile keeps a project's server: <project>/.agent-memory, or, when the postgres user
    cannot enter the project folder, /tmp/agent-memory-<first 12 hex digits of sha256 of its path>."""
    if enterable(project):
        return project / HOME_NAME
    return Path("/tmp") / f"agent-memory-{hashlib.sha256(str(project).encode()).hexdigest()[:12]}"


def trusted(directory: Path) -> bool:
    """Whether a server directory found above the working directory may be used: a real directory (not a
    link) owned by this user (or, for root, by postgres, whose server it is), writable by no one else.
    Another user's folder could otherwise hand us their server, which would receive our conversations."""
    try:
        status = directory.lstat()
    except OSError:
        return False
    owners = {os.geteuid()}
    if os.geteuid() == 0:
        with contextlib.suppress(KeyError):
            owners.add(pwd.getpwnam("postgres").pw_uid)
    return stat.S_ISDIR(status.st_mode) and status.st_uid in owners and not status.st_mode & 0o022


def find_home(
    cwd: Path,
    environ: Mapping[str, str],
    prefix: Path = Path(sys.prefix),
    enterable: Callable[[Path], bool] = postgres_can_enter,
) -> Home:
    """The local server's directory by HOME_RULE, wherever the command runs."""
    if environ.get("AGENT_MEMORY_HOME"):
        return Home((cwd / environ["AGENT_MEMORY_HOME"]).resolve(), "$AGENT_MEMORY_HOME")
    for folder in (cwd, *cwd.parents):
        if (folder / HOME_NAME / "data").is_dir() and trusted(folder / HOME_NAME):
            return Home(folder / HOME_NAME, "the nearest .agent-memory/ with a server")
    project = prefix.resolve().parent
    if prefix.resolve().name == ".venv":
        return Home(project_home(project, enterable), f"the project agent-memory is installed in ({project})")
    return Home(cwd / HOME_NAME, "the current directory")


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
        if self.directory.is_symlink() or (self.directory.exists() and not trusted(self.directory)):
            raise LocalServerError(
                f"{self.directory} is a link, belongs to another user or is writable by others: choose another --dir"
            )
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        owner = self._owner()
        if owner:
            entry = pwd.getpwnam(owner)
            for path in (self.directory, self.socket_dir):
                os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
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
        self._configure({"unix_socket_directories": f"'{self.socket_dir}'"})

    def _configure(self, extra: Mapping[str, str] | None = None) -> None:
        """Appends to postgresql.conf the server settings it does not set yet: all of them for a new cluster,
        those added since for one an earlier version made (read at its next start). Only what follows our
        marker counts as set: initdb's own lines (shared_buffers = 128MB, max_connections = 100) are what ours
        override, a later line winning."""
        conf = self.data_dir / "postgresql.conf"
        text = conf.read_text()
        ours = "".join(text.split(CONF_MARKER)[1:])
        present = set(re.findall(r"^\s*([\w.]+)\s*=", ours, re.MULTILINE))
        wanted = {**SERVER_SETTINGS, **(extra or {})}
        if not (self.bindir.parent / "lib" / "pg_cron.so").exists():  # not installed: run without it
            wanted = {name: value for name, value in wanted.items() if "cron" not in name + value}
        lines = [f"{name} = {value}" for name, value in wanted.items() if name not in present]
        if lines:
            conf.write_text(text + f"\n{CONF_MARKER}\n" + "\n".join(lines) + "\n")

    def running(self) -> bool:
        if not self.initialized():
            return False
        return self._run("pg_ctl", "status", "-D", str(self.data_dir), check=False).returncode == 0

    def start(self) -> bool:
        """Creates the cluster if needed and starts it; False when it was already running."""
        self.init()
        if self.running():
            return False
        self._configure()
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

    def stop(self, mode: str = "fast") -> bool:
        """Stops the server (pg_ctl's mode: fast, or smart, or immediate as a crash does); False when it was not
        running."""
        if mode not in ("smart", "fast", "immediate"):
            raise ValueError(f"agent_memory: a server stops smart, fast or immediate, not {mode!r}")
        if not self.running():
            return False
        self._run("pg_ctl", "stop", "-w", "-m", mode, "-D", str(self.data_dir))
        return True
