"""memory.health(): what is installed and whether the embedder works."""


def health(db):
    cur = db.execute("select * from memory.health()")
    names = [column.name for column in cur.description]
    return dict(zip(names, cur.fetchone(), strict=True))


def test_reports_versions_and_a_working_local_embedder(db):
    row = health(db)
    assert row["extension_version"] == db.execute("select memory.version()").fetchone()[0]
    assert row["pgvector_version"].startswith("0.8")
    assert row["python_package_version"] == row["extension_version"]
    assert row["python_version"].startswith("3.")
    assert (row["embedder"], row["embedder_loads"], row["embedder_dimensions"], row["problem"]) == (
        "local",
        True,
        384,
        None,
    )


def test_with_no_embedder_configured_nothing_is_loaded(db):
    db.execute("set memory.embedder = 'none'")
    row = health(db)
    assert (row["embedder"], row["embedder_loads"], row["problem"]) == ("none", None, None)


def test_reports_a_python_version_mismatch_instead_of_failing(db):
    # A backend that loaded another release's package must be told to reconnect.
    db.execute("do $$ begin perform memory_internal._load_python(); end $$")
    db.execute(
        "create function pg_temp.pretend_other_release() returns void language plpython3u "
        "as $$ GD['agent_memory_version'] = '0.0.1' $$"
    )
    db.execute("select pg_temp.pretend_other_release()")
    row = health(db)
    assert row["embedder_loads"] is False
    assert "loaded Python package 0.0.1" in row["problem"] and "reconnect" in row["problem"]
