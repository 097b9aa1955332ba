"""The local server's pure parts: paths, URLs, and which directory the command chooses."""

import subprocess
from pathlib import Path

import pytest

from agent_memory.localdb import Home, LocalServer, LocalServerError, find_home


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


def test_a_stop_mode_pg_ctl_does_not_have_is_named(tmp_path):
    with pytest.raises(ValueError, match="smart, fast or immediate, not 'abrupt'"):
        LocalServer(directory=tmp_path / "pg").stop(mode="abrupt")


def _cluster(tmp_path: Path, with_pg_cron: bool) -> tuple[LocalServer, Path]:
    (tmp_path / "postgresql" / "lib").mkdir(parents=True)
    if with_pg_cron:
        (tmp_path / "postgresql" / "lib" / "pg_cron.so").touch()
    server = LocalServer(directory=tmp_path / "pg", bindir=tmp_path / "postgresql" / "bin")
    server.data_dir.mkdir(parents=True)
    conf = server.data_dir / "postgresql.conf"
    # initdb's own lines, then what an earlier version of ours wrote.
    conf.write_text(
        "max_connections = 100\nshared_buffers = 128MB\n#shared_preload_libraries = ''\n"
        "\n# agent-memory local server\nmax_connections = 50\nlisten_addresses = ''\n"
    )
    return server, conf


def test_a_cluster_made_before_a_setting_existed_gets_it_once(tmp_path):
    server, conf = _cluster(tmp_path, with_pg_cron=True)
    server._configure()
    server._configure()
    text = conf.read_text()
    assert text.count("shared_preload_libraries = 'pg_cron'") == 1
    assert text.count("max_connections = 50") == 1
    assert "cron.use_background_workers = on" in text


def test_without_pg_cron_installed_the_server_starts_without_it(tmp_path):
    server, conf = _cluster(tmp_path, with_pg_cron=False)
    server._configure()
    assert "cron" not in conf.read_text().replace("#shared_preload_libraries = ''", "")
    assert "shared_buffers = '1GB'" in conf.read_text()


def test_initdbs_own_lines_do_not_keep_ours_out(tmp_path):
    # initdb writes shared_buffers = 128MB uncommented: ours is appended after it, and wins (the last line does).
    server, conf = _cluster(tmp_path, with_pg_cron=True)
    server._configure()
    text = conf.read_text()
    assert text.index("shared_buffers = '1GB'") > text.index("shared_buffers = 128MB")
    assert text.count("listen_addresses") == 1


def _server_dir(folder: Path) -> Path:
    (folder / ".agent-memory" / "data").mkdir(parents=True)
    return folder / ".agent-memory"


def test_agent_memory_home_wins_over_everything(tmp_path):
    _server_dir(tmp_path)
    home = find_home(tmp_path, {"AGENT_MEMORY_HOME": str(tmp_path / "elsewhere")}, prefix=tmp_path / ".venv")
    assert (home.directory, home.reason) == (tmp_path / "elsewhere", "$AGENT_MEMORY_HOME")


def test_the_nearest_server_directory_above_the_working_directory_is_used(tmp_path):
    outer, inner = _server_dir(tmp_path), _server_dir(tmp_path / "a")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_home(deep, {}, prefix=Path("/usr")).directory == inner
    assert find_home(tmp_path / "b", {}, prefix=Path("/usr")).directory == outer


def test_a_server_directory_others_may_write_or_a_link_is_passed_over(tmp_path):
    planted = _server_dir(tmp_path / "shared")
    planted.chmod(0o777)  # say /tmp/.agent-memory, made by another user
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".agent-memory").symlink_to(_server_dir(tmp_path / "elsewhere"))
    for folder in (tmp_path / "shared" / "work", linked / "work"):
        folder.mkdir()
        assert find_home(folder, {}, prefix=Path("/usr")) == Home(folder / ".agent-memory", "the current directory")


def test_an_agent_memory_folder_without_a_server_is_passed_over(tmp_path):
    (tmp_path / ".agent-memory").mkdir()  # say ~/.agent-memory, which holds only hooks.log
    project = tmp_path / "project"
    home = find_home(tmp_path, {}, prefix=project / ".venv", enterable=lambda folder: True)
    assert home.directory == project / ".agent-memory"


def test_elsewhere_the_project_the_command_is_installed_in_is_used(tmp_path):
    project = tmp_path / "project"
    home = find_home(tmp_path / "cwd", {}, prefix=project / ".venv", enterable=lambda folder: True)
    assert (home.directory, home.reason) == (
        project / ".agent-memory",
        f"the project agent-memory is installed in ({project})",
    )


def test_a_project_postgres_cannot_enter_has_its_server_under_tmp_as_make_does(tmp_path):
    project = tmp_path / "project"
    digest = subprocess.run(
        f"printf '%s' '{project}' | sha256sum | cut -c1-12", shell=True, capture_output=True, text=True, check=True
    ).stdout.strip()  # the Makefile's own command
    home = find_home(tmp_path, {}, prefix=project / ".venv", enterable=lambda folder: False)
    assert home.directory == Path(f"/tmp/agent-memory-{digest}")


def test_outside_a_virtualenv_named_venv_it_is_the_working_directory(tmp_path):
    home = find_home(tmp_path, {}, prefix=Path("/usr"))
    assert (home.directory, home.reason) == (tmp_path / ".agent-memory", "the current directory")
