"""The build step that turns sql/ into install and upgrade scripts."""

import re
from pathlib import Path

import assemble
import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_script_starts_with_the_psql_guard():
    script = assemble.assemble("1.2.3", "/opt/am/1.2.3")
    lines = [line for line in script.splitlines() if line and not line.startswith("--")]
    assert lines[0] == assemble.GUARD


def test_placeholders_are_filled_in():
    script = assemble.assemble("1.2.3", "/opt/am/1.2.3")
    assert "'1.2.3'" in script and "/opt/am/1.2.3" in script
    assert "@extversion@" not in script and "@python_dir@" not in script and "@load_python@" not in script


def test_every_python_function_but_the_loader_and_health_loads_the_package_first():
    script = assemble.assemble("1.2.3", "/x")
    bodies = re.findall(
        r"function ([\w.]+)\((?:(?!create or replace function).)*?language plpython3u.*?as \$\$\n(.*?)\n\$\$;",
        script,
        re.S,
    )
    assert len(bodies) > 10
    loading = {name for name, body in bodies if body.startswith(assemble.LOAD_PYTHON + "\n")}
    # The loader itself, and health, which reports a package that does not load instead of failing.
    assert {name for name, _ in bodies} - loading == {"memory_internal._load_python", "memory.health"}


def test_every_incremental_file_runs_through_the_migration_record():
    script = assemble.assemble("1.2.3", "/x")
    names = sorted(path.name for path in (ROOT / "sql" / "incremental").glob("*.sql"))
    recorded = [name for name, _ in assemble.RECORDED.findall(script)]
    assert recorded == names


def test_head_comes_first_and_tail_last():
    script = assemble.assemble("1.2.3", "/x")
    assert script.index("-- sql/head.sql") < script.index("-- sql/incremental/")
    assert script.index("-- sql/idempotent/") < script.index("-- sql/tail.sql")


def test_unknown_placeholder_is_an_error():
    with pytest.raises(assemble.BuildError, match="@nope@"):
        assemble.substitute("select '@nope@'", {"@extversion@": "1"})


def test_incremental_file_may_not_contain_the_quote_tag(tmp_path):
    bad = tmp_path / "001-bad.sql"
    bad.write_text("select $migration_body$ x $migration_body$;")
    with pytest.raises(assemble.BuildError, match="migration_body"):
        assemble.migration_call(bad, "1.0.0")


def _released(tmp_path, name, body):
    incremental = tmp_path / name
    incremental.write_text(body)
    release = tmp_path / "agent_memory--0.1.0.sql"
    release.write_text(assemble.migration_call(incremental, "0.1.0"))
    return incremental, {"0.1.0": release}


def test_released_incremental_file_unchanged_passes(tmp_path):
    incremental, released = _released(tmp_path, "001-a.sql", "create table memory.a ();")
    assemble.check_frozen([incremental], released)


def test_released_incremental_file_changed_fails(tmp_path):
    incremental, released = _released(tmp_path, "001-a.sql", "create table memory.a ();")
    incremental.write_text("create table memory.a (x int);")
    with pytest.raises(assemble.BuildError, match=r"001-a\.sql was released in 0\.1\.0 and has changed"):
        assemble.check_frozen([incremental], released)


def test_released_incremental_file_removed_fails(tmp_path):
    _, released = _released(tmp_path, "001-a.sql", "create table memory.a ();")
    with pytest.raises(assemble.BuildError, match="must not be removed"):
        assemble.check_frozen([], released)


def test_released_versions_are_ordered_numerically(tmp_path):
    for version in ("0.10.0", "0.2.0", "0.9.1"):
        (tmp_path / f"agent_memory--{version}.sql").write_text("")
    (tmp_path / "agent_memory--0.2.0--0.9.1.sql").write_text("")
    assert list(assemble.released_versions(tmp_path)) == ["0.2.0", "0.9.1", "0.10.0"]


def test_the_local_model_is_written_once_in_the_package_and_the_build_copies_it():
    from agent_memory_db import embedder

    assert assemble.local_model() == {"@local_model@": embedder.MODEL_NAME, "@local_dimensions@": "384"}
    script = assemble.assemble("1.2.3", "/x")
    assert f"when 'local' then '{embedder.MODEL_NAME}'" in script
    assert embedder.MODEL_NAME not in "".join(path.read_text() for path in (assemble.SQL / "idempotent").rglob("*.sql"))


def test_the_script_declares_each_subsystems_settings_where_its_file_stands():
    script = assemble.assemble("1.2.3", "/x")
    toml = script.index("-- sql/idempotent/write/012-settings.toml")
    assert script.index("select memory_internal._declare_setting('embedder', '\"local\"', 'string', ") > toml
    assert "\n# " not in script[toml : script.index("-- sql/idempotent/graph/013-settings.toml")]
