"""ALTER EXTENSION agent_memory UPDATE from every released version gives what a fresh install gives."""

import subprocess
import sys
from pathlib import Path

import pytest
from psycopg import sql
from psycopg.types.json import Json

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).with_name("agent-memory"))
RELEASED = sorted(
    path.name.removeprefix("agent_memory--").removesuffix(".sql")
    for path in (ROOT / "extension" / "released").glob("agent_memory--*.sql")
)

# Everything a user or DBA can see of the extension: functions with their bodies and settings, tables
# and views with their columns, indexes, constraints, triggers, and every comment.
CATALOG = """
select 'function ' || p.oid::regprocedure || ' ' || pg_get_functiondef(p.oid)
       || coalesce(' -- ' || obj_description(p.oid, 'pg_proc'), '')
from pg_proc p where p.pronamespace = 'memory'::regnamespace and p.prokind <> 'a'
union all
select 'relation ' || c.relname || ' ' || c.relkind::text || coalesce(' -- ' || obj_description(c.oid, 'pg_class'), '')
       || coalesce(' ' || pg_get_viewdef(c.oid) , '')
from pg_class c where c.relnamespace = 'memory'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'S')
union all
select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
       || case when a.attnotnull then ' not null' else '' end
       || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
       || coalesce(' -- ' || col_description(c.oid, a.attnum), '')
from pg_class c
join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
where c.relnamespace = 'memory'::regnamespace and c.relkind in ('r', 'p', 'v', 'm')
union all
select 'index ' || pg_get_indexdef(i.indexrelid)
from pg_index i join pg_class c on c.oid = i.indrelid where c.relnamespace = 'memory'::regnamespace
union all
select 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
from pg_constraint where connamespace = 'memory'::regnamespace
union all
select 'trigger ' || pg_get_triggerdef(t.oid)
from pg_trigger t join pg_class c on c.oid = t.tgrelid
where c.relnamespace = 'memory'::regnamespace and not t.tgisinternal
union all
select 'type ' || t.typname from pg_type t
where t.typnamespace = 'memory'::regnamespace and t.typtype in ('c', 'e', 'd') and t.typrelid = 0
union all
select 'member ' || pg_describe_object(d.classid, d.objid, d.objsubid)
from pg_depend d join pg_extension e on e.oid = d.refobjid
where e.extname = 'agent_memory' and d.deptype = 'e'
union all
select 'config-dump ' || unnest(extconfig)::regclass::text from pg_extension where extname = 'agent_memory'
order by 1
"""


def catalog(conn) -> list[str]:
    return [row[0] for row in conn.execute(CATALOG).fetchall()]


def install(conn, version: str) -> None:
    conn.execute(sql.SQL("create extension agent_memory version {} cascade").format(sql.Literal(version)))


def test_a_release_exists_to_upgrade_from():
    assert RELEASED, "extension/released/ holds no released install script"


@pytest.mark.parametrize("old_version", RELEASED)
def test_upgrade_matches_a_fresh_install(db, bare_db, old_version):
    install(bare_db, old_version)
    bare_db.execute("alter extension agent_memory update")
    assert (
        bare_db.execute("select memory.version()").fetchone()[0] == db.execute("select memory.version()").fetchone()[0]
    )
    upgraded, fresh = catalog(bare_db), catalog(db)
    assert [line for line in fresh if line not in upgraded] == []
    assert [line for line in upgraded if line not in fresh] == []


@pytest.mark.parametrize("old_version", RELEASED)
def test_upgrade_keeps_settings(bare_db, old_version):
    install(bare_db, old_version)
    bare_db.execute("insert into memory.config (key, value) values ('embedder', '\"none\"')")
    bare_db.execute("alter extension agent_memory update")
    assert bare_db.execute("select memory.setting('embedder')").fetchone()[0] == "none"


@pytest.mark.parametrize("old_version", RELEASED)
def test_upgrade_records_only_new_incremental_files(bare_db, old_version):
    install(bare_db, old_version)
    # Releases before 0.3.0 kept the record in schema memory.
    schema = "memory" if old_version < "0.3.0" else "memory_internal"
    before = dict(bare_db.execute(f"select name, applied_in_version from {schema}._migration").fetchall())
    bare_db.execute("alter extension agent_memory update")
    after = dict(bare_db.execute("select name, applied_in_version from memory_internal._migration").fetchall())
    assert {name: after[name] for name in before} == before
    names = sorted(path.name for path in (ROOT / "sql" / "incremental").glob("*.sql"))
    assert sorted(after) == names


@pytest.mark.parametrize("old_version", ["0.2.0"])
def test_upgrade_makes_remembered_facts_memories(bare_db, old_version):
    install(bare_db, old_version)
    bare_db.execute("select memory.remember('Never deploy on Fridays.', 'rule', 'ops')")
    bare_db.execute("alter extension agent_memory update")
    memories = bare_db.execute("select agent_id, kind, content, status from memory.memory_items").fetchall()
    assert memories == [("ops", "rule", "Never deploy on Fridays.", "active")]
    again = bare_db.execute("select outcome from memory.remember('Never deploy on Fridays.', 'rule', 'ops')")
    assert again.fetchone() == ("unchanged",)


@pytest.mark.parametrize("old_version", [version for version in RELEASED if version >= "0.3.0"])
def test_upgrade_keeps_what_was_committed_remembered_and_judged(bare_db, old_version):
    """What a release's own API wrote (without enrichment: the released functions load the Python package of
    their own version) is read by this version's API after the upgrade."""
    install(bare_db, old_version)
    bare_db.execute("insert into memory.config (key, value) values ('embedder', '\"none\"'), ('enrich', '\"none\"')")
    bare_db.execute(
        """select memory.commit('s1', '[{"role": "user", "content": "The staging database moved to Frankfurt."}]',
                                agent_id => 'ops')"""
    )
    turn = bare_db.execute("select turn_id from memory.turns").fetchone()[0]
    bare_db.execute("select memory.give_feedback('helpful', turn_id => %s)", (turn,))
    bare_db.execute("alter extension agent_memory update")
    bare_db.execute("select memory.enrich('s1', 'ops')")
    hits = bare_db.execute("select turn_id, agent_id from memory.recall('staging database Frankfurt')").fetchall()
    assert hits == [(turn, "ops")]
    assert bare_db.execute("select trust from memory.turns").fetchone()[0] > 1


@pytest.mark.parametrize("old_version", [version for version in RELEASED if version >= "0.3.0"])
def test_upgrade_marks_the_words_of_cold_sessions_cold(bare_db, old_version):
    """Chunks and summaries written before 0.4.0 (here by hand: the released enrichment loads its own version's
    package) say after the upgrade whether their session is cold, and recall leaves the cold one out."""
    install(bare_db, old_version)
    bare_db.execute("insert into memory.config (key, value) values ('embedder', '\"none\"'), ('enrich', '\"none\"')")
    for session, text in (("s1", "The staging database moved to Frankfurt."), ("s2", "The staging cache is in Paris.")):
        bare_db.execute("select memory.commit(%s, %s)", (session, Json([{"role": "user", "content": text}])))
    bare_db.execute(
        """insert into memory.chunks (tenant_id, turn_id, chunk_no, session_key, agent_id, text, text_sha256, tsv,
                                     length)
           select t.tenant_id, t.turn_id, 0, t.session_key, t.agent_id, t.content,
                  sha256(convert_to(t.content, 'UTF8')), to_tsvector('english', t.content), 4
           from memory.turns as t"""
    )
    bare_db.execute(
        """insert into memory.summaries (tenant_id, session_key, method, summary, tsv)
           select t.tenant_id, t.session_key, 'caller', t.content, to_tsvector('english', t.content)
           from memory.turns as t"""
    )
    bare_db.execute("update memory.sessions set tier = 'cold' where session_id = 's1'")
    bare_db.execute("alter extension agent_memory update")
    for table in ("chunks", "summaries"):
        flags = bare_db.execute(
            f"select s.session_id, x.cold from memory.{table} as x join memory.sessions as s"
            " using (tenant_id, session_key) order by 1"
        ).fetchall()
        assert flags == [("s1", True), ("s2", False)], table
    recalled = "select distinct session_id from memory.recall('staging', tiers => %s) order by 1"
    assert bare_db.execute(recalled, (None,)).fetchall() == [("s2",)]
    assert bare_db.execute(recalled, (["hot", "warm", "cold"],)).fetchall() == [("s1",), ("s2",)]


def test_an_older_install_is_seen_and_upgraded_from_the_outside(db, bare_db):
    """`db status` and `db upgrade --check` say what an update would apply and change nothing; `db upgrade` applies
    it; health() says it from 0.4.0 on (an install of 0.3.0 has the health of 0.3.0)."""
    info = bare_db.info
    url = f"postgresql://{info.user}@/{info.dbname}?host={info.host}&port={info.port}"
    current = db.execute("select memory.version()").fetchone()[0]
    old = RELEASED[-1]
    install(bare_db, old)
    bare_db.commit()

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([CLI, "--dsn", url, "db", *args], capture_output=True, text=True)

    pending = (
        f"agent_memory {old} is installed in database {info.dbname} and {current} is on disk:"
        " `agent-memory db upgrade` (alter extension agent_memory update, after creating the extensions it requires)"
        f" applies {old} -> {current}"
    )
    checked = cli("upgrade", "--check")
    assert (checked.returncode, checked.stdout.strip()) == (1, pending)
    assert bare_db.execute("select extversion from pg_extension where extname = 'agent_memory'").fetchone()[0] == old
    upgraded = cli("upgrade")
    assert (upgraded.returncode, upgraded.stdout.strip()) == (
        0,
        f"agent_memory upgraded in database {info.dbname}: {old} -> {current}",
    )
    again = cli("upgrade", "--check")
    assert (again.returncode, again.stdout.strip()) == (
        0,
        f"agent_memory {current} is installed in database {info.dbname}, the version on disk",
    )
    health = bare_db.execute("select problem, available_version, update_path from memory.health()").fetchone()
    assert health == (None, current, None)


def test_upgrade_creates_the_extensions_the_version_on_disk_requires(bare_db):
    """0.3.0 did not require btree_gin, and ALTER EXTENSION ... UPDATE does not create what the new version
    requires: `db upgrade` does, first."""
    info = bare_db.info
    url = f"postgresql://{info.user}@/{info.dbname}?host={info.host}&port={info.port}"
    install(bare_db, "0.3.0")
    # As 0.3.0 was installed before this control file asked for btree_gin (the install above made it).
    bare_db.execute(
        "delete from pg_depend where classid = 'pg_extension'::regclass and objid = ("
        "select oid from pg_extension where extname = 'agent_memory') and refobjid = ("
        "select oid from pg_extension where extname = 'btree_gin')"
    )
    bare_db.execute("drop extension btree_gin")
    bare_db.commit()
    upgraded = subprocess.run([CLI, "--dsn", url, "db", "upgrade"], capture_output=True, text=True)
    assert upgraded.returncode == 0, upgraded.stderr
    assert bare_db.execute("select 1 from pg_extension where extname = 'btree_gin'").fetchone() == (1,)
    index = bare_db.execute("select pg_get_indexdef('memory.chunks_tsv'::regclass)").fetchone()[0]
    assert "(tenant_id, tsv)" in index


def test_health_names_an_update_to_apply(db):
    """The installed version set back in the catalog stands for an older install under a newer control file
    (the install of an older release has that release's health, which does not say it)."""
    current = db.execute("select memory.version()").fetchone()[0]
    old = RELEASED[-1]
    db.execute("update pg_extension set extversion = %s where extname = 'agent_memory'", (old,))
    row = db.execute("select problem, available_version, update_path from memory.health()").fetchone()
    assert row == (
        f"agent_memory {old} is installed and {current} is on the server's disk: alter extension agent_memory"
        f" update (agent-memory db upgrade) applies {old} -> {current}",
        current,
        f"{old}--{current}",
    )


def test_check_goes_with_upgrade_only(dsn):
    refused = subprocess.run([CLI, "--dsn", dsn, "db", "status", "--check"], capture_output=True, text=True)
    assert refused.returncode != 0
    assert "--check goes with db upgrade" in refused.stderr
