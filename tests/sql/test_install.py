"""Installing, dropping and re-creating the extension, and what a DBA sees in the catalog."""

import subprocess
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_installed_version_is_the_control_files(db, control_version):
    assert db.execute("select memory.version()").fetchone()[0] == control_version
    assert db.execute("select extversion from pg_extension where extname = 'agent_memory'").fetchone()[0] == (
        control_version
    )


def test_every_function_has_a_comment(db):
    missing = db.execute(
        """
        select p.oid::regprocedure::text from pg_proc p
        where p.pronamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace)
          and obj_description(p.oid, 'pg_proc') is null
        """
    ).fetchall()
    assert missing == []


def test_every_public_table_view_and_column_has_a_comment(db):
    missing = db.execute(
        """
        select c.relname || coalesce('.' || a.attname, '') from pg_class c
        left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
                                 and c.relkind in ('r', 'p')
        where c.relnamespace = 'memory'::regnamespace and c.relkind in ('r', 'p', 'v', 'm')
          and c.relname not like '\\_%'
          and (case when a.attname is null then obj_description(c.oid, 'pg_class')
                    else col_description(c.oid, a.attnum) end) is null
        """
    ).fetchall()
    assert missing == []


def test_every_function_has_a_pinned_search_path(db):
    # Procedures cannot commit with a SET clause; theirs qualify every name instead. Expressions that
    # recall inlines into its queries (the signals among them), those commit inlines per message, and
    # _setting_definitions, which memory.setting() filters by key, cannot have one either; they may only be
    # language sql, not volatile.
    unpinned = db.execute(
        """
        select p.oid::regprocedure::text from pg_proc p join pg_language l on l.oid = p.prolang
        where p.pronamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace) and p.prokind <> 'p'
          and not ((p.proname in ('_bm25_term', '_chunk_bm25', '_memory_items', '_visible_to',
                                    '_setting_definitions', '_message_problem', '_message_text', '_message_sha256')
                    or exists (select from memory.signals s where to_regprocedure(s.function) = p.oid))
                   and l.lanname = 'sql' and p.provolatile <> 'v')
          and not exists (select 1 from unnest(p.proconfig) c where c like 'search_path=pg_catalog, %pg_temp')
        """
    ).fetchall()
    assert unpinned == []


def test_create_extension_cascade_installs_requirements(bare_db):
    bare_db.execute("create extension agent_memory cascade")
    installed = {row[0] for row in bare_db.execute("select extname from pg_extension").fetchall()}
    assert {"agent_memory", "vector", "plpython3u", "btree_gin"} <= installed


def test_every_gin_index_of_a_tenant_keyed_table_leads_with_the_tenant(db):
    """An index of every tenant's words or tags answers a match with every tenant's rows; led by tenant_id (with
    btree_gin), its scan reads the tenant's postings only."""
    rows = db.execute(
        """
        select i.indexrelid::regclass::text, a.attname
        from pg_index as i
        inner join pg_class as c on c.oid = i.indexrelid
        inner join pg_am as m on m.oid = c.relam and m.amname = 'gin'
        inner join pg_attribute as a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
        where exists (select from pg_attribute as t where t.attrelid = i.indrelid and t.attname = 'tenant_id')
            and (select relnamespace from pg_class where oid = i.indrelid) = 'memory'::regnamespace
        """
    ).fetchall()
    assert len(rows) >= 7
    assert [(index, first) for index, first in rows if first != "tenant_id"] == []


def test_drop_extension_removes_every_object_and_it_can_be_created_again(bare_db):
    bare_db.execute("create extension agent_memory cascade")
    bare_db.execute("insert into memory.config (key, value) values ('embedder', '\"none\"')")
    bare_db.execute("drop extension agent_memory")
    # The schema named in the control file is created before the extension and so outlives it, empty.
    left = bare_db.execute(
        "select (select count(*) from pg_class where relnamespace = 'memory'::regnamespace)"
        " + (select count(*) from pg_proc where pronamespace = 'memory'::regnamespace)"
        " + (select count(*) from pg_type where typnamespace = 'memory'::regnamespace)"
    ).fetchone()[0]
    assert left == 0
    assert bare_db.execute("select to_regnamespace('memory_internal')").fetchone()[0] is None  # the extension's
    bare_db.execute("create extension agent_memory")
    assert bare_db.execute("select memory.setting('embedder')").fetchone()[0] == "local"


def test_schema_is_fixed_and_cannot_be_relocated(bare_db):
    bare_db.execute("create extension agent_memory cascade")
    relocatable = bare_db.execute("select extrelocatable from pg_extension where extname = 'agent_memory'")
    assert relocatable.fetchone()[0] is False


def test_install_script_refuses_to_run_in_psql(bare_db, control_version):
    script = ROOT / "extension" / "build" / f"agent_memory--{control_version}.sql"
    info = bare_db.info
    result = subprocess.run(
        ["psql", "-X", "-h", info.host, "-p", str(info.port), "-U", info.user, "-d", info.dbname, "-f", str(script)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert 'Use "CREATE EXTENSION agent_memory" to load this file.' in result.stdout
    assert bare_db.execute("select to_regnamespace('memory')").fetchone()[0] is None


def test_each_incremental_file_is_recorded_once(db):
    names = sorted(path.name for path in (ROOT / "sql" / "incremental").glob("*.sql"))
    recorded = [row[0] for row in db.execute("select name from memory_internal._migration order by name").fetchall()]
    assert recorded == names


def test_reapplying_a_recorded_migration_changes_nothing(db):
    name, sha = db.execute("select name, sha256 from memory_internal._migration order by name limit 1").fetchone()
    db.execute(
        "select memory_internal._apply_migration(%s, %s, '0.0.0', 'create table memory.should_not_exist ()')",
        (name, sha),
    )
    assert db.execute("select to_regclass('memory.should_not_exist')").fetchone()[0] is None


def test_a_changed_released_migration_is_refused(db):
    name = db.execute("select name from memory_internal._migration order by name limit 1").fetchone()[0]
    with pytest.raises(psycopg.errors.RaiseException, match=f"incremental file {name} changed"):
        db.execute("select memory_internal._apply_migration(%s, %s, '0.0.0', 'select 1')", (name, "0" * 64))


def test_no_table_has_a_column_pg_upgrade_refuses(db):
    # pg_upgrade refuses user tables with reg* columns other than regclass, regrole and regtype (their oids
    # are not kept); the signal registry keeps its functions as signatures in text.
    refused = db.execute(
        """
        select a.attrelid::regclass::text, a.attname from pg_attribute as a
        inner join pg_class as c on a.attrelid = c.oid
        where c.relnamespace = 'memory'::regnamespace and c.relkind = 'r' and not a.attisdropped
            and a.atttypid::regtype::text like 'reg%'
            and a.atttypid::regtype::text not in ('regclass', 'regrole', 'regtype')
        """
    ).fetchall()
    assert refused == []
