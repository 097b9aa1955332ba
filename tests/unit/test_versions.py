"""The extension, the in-database package and the client are released together under one version."""

from pathlib import Path

import pytest
import tomllib

import agent_memory
import agent_memory_db

ROOT = Path(__file__).resolve().parents[2]


def test_in_database_package_matches_control_file(control_version):
    assert agent_memory_db.__version__ == control_version


def test_client_matches_control_file(control_version):
    pyproject = tomllib.loads((ROOT / "python-client" / "pyproject.toml").read_text())
    assert agent_memory.__version__ == control_version
    assert pyproject["project"]["version"] == control_version


def test_require_version_accepts_its_own_version():
    agent_memory_db.require_version(agent_memory_db.__version__, "/somewhere")


def test_require_version_names_both_versions_and_the_fix():
    with pytest.raises(agent_memory_db.VersionMismatch) as raised:
        agent_memory_db.require_version("9.9.9", "/opt/x")
    message = str(raised.value)
    assert "9.9.9" in message and agent_memory_db.__version__ in message
    assert "/opt/x" in message and "make install" in message
