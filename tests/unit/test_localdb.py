"""The local server's pure parts: paths and URLs."""

from pathlib import Path

import pytest

from agent_memory.localdb import LocalServer, LocalServerError


def test_url_points_at_the_socket_directory_and_port():
    server = LocalServer(directory=Path("/srv/am"), port=6000)
    assert server.url("mem") == "postgresql://postgres@/mem?host=/srv/am/run&port=6000"


def test_socket_path_over_the_kernel_limit_is_refused(tmp_path):
    server = LocalServer(directory=tmp_path / ("d" * 120))
    with pytest.raises(LocalServerError, match="longer than 107 bytes"):
        server.init()


def test_missing_postgresql_binaries_are_named(tmp_path):
    server = LocalServer(directory=tmp_path / "pg", bindir=tmp_path / "nowhere")
    with pytest.raises(LocalServerError, match="make provision"):
        server.init()
