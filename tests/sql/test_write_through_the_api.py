"""Tenants and applications write only through the API: part of the adversarial isolation suite, run as real
logins (a role bound to acme, an application role, a role with only CONNECT) against a database holding
acme and globex. Every table, lock mode, row lock, sequence and internal function is tried; each attempt
must be refused, and the suite prints how many it made.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import psycopg
import pytest
from conftest import Logins
from psycopg import sql
from psycopg.types.json import Json

LOCK_MODES = [
    "access share",
    "row share",
    "row exclusive",
    "share update exclusive",
    "share",
    "share row exclusive",
    "exclusive",
    "access exclusive",
]
ROW_LOCKS = ["for update", "for no key update", "for share", "for key share"]


@pytest.fixture
def tenants(db) -> Iterator[psycopg.Connection]:
    """acme and globex, each with a session, a queued job, a remembered fact, a retention policy and a tombstone."""
    db.commit()
    db.autocommit = True
    for tenant in ("acme", "globex"):
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        said = [{"role": "user", "content": f"{tenant} deploys on Fridays"}]
        db.execute("select memory.commit('plans', %s)", (Json(said),))
        db.execute("select memory.remember(%s, key => 'deploy.day')", (f"{tenant} deploys on Fridays",))
        db.execute("select memory.commit('gone', %s)", (Json(said),))
        db.execute("select memory.forget('gone')")
        db.execute("select memory.set_retention('sessions', max_age => '365 days')")
    db.execute("reset memory.tenant_id")
    yield db


def tables(db: psycopg.Connection) -> list[tuple[str, str]]:
    """Every table of the extension, with one of its columns."""
    return db.execute(
        """
        select c.oid::regclass::text, (select a.attname from pg_attribute as a
                                        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
                                            and a.attidentity = '' and a.attgenerated = ''
                                        order by a.attnum limit 1)
        from pg_class as c
        where c.relnamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace) and c.relkind = 'r'
        order by 1
        """
    ).fetchall()


def internal_calls(db: psycopg.Connection) -> list[str]:
    """A call of every function and procedure of memory_internal, with null arguments of its types."""
    rows = db.execute(
        """
        select p.prokind = 'p', p.oid::regproc::text,
               coalesce((select string_agg(format('null::%s', t::regtype), ', ' order by n)
                         from unnest(p.proargtypes) with ordinality as a (t, n)), '')
        from pg_proc as p
        where p.pronamespace = 'memory_internal'::regnamespace and p.prorettype <> 'trigger'::regtype
        order by 2
        """
    ).fetchall()
    return [f"{'call' if procedure else 'select'} {name}({args})" for procedure, name, args in rows]


def write_attempts(db: psycopg.Connection) -> list[str]:
    """Every way to write, lock or take over a table, a sequence or an internal function without the API."""
    attempts = []
    for table, column in tables(db):
        attempts += [
            f"insert into {table} default values",
            f"update {table} set {column} = {column}",
            f"delete from {table}",
            f"truncate {table}",
            f"alter table {table} disable row level security",
            f"create index on {table} ({column})",
            *[f"select from {table} {lock}" for lock in ROW_LOCKS],
            *[f"lock table {table} in {mode} mode" for mode in LOCK_MODES[1:]],
        ]
    for (sequence,) in db.execute(
        "select c.oid::regclass::text from pg_class as c where c.relkind = 'S'"
        " and c.relnamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace)"
    ):
        attempts += [f"select nextval('{sequence}')", f"select setval('{sequence}', 1)", f"select * from {sequence}"]
    # The attacks of issue 26 by name: identity squatting, counters near the float limit, a forged
    # tombstone, a forgotten session taken back, caller text run by the scoring statement.
    attempts += [
        "insert into memory.jobs (job_id, tenant_id, kind, session_key) overriding system value"
        " select g, 'globex', 'embed', null from generate_series(nextval('memory.jobs_job_id_seq'), 100) as g",
        "insert into memory.metric_counts (tenant_id, metric, label, backend, value) values ('acme', 'recalls', '', 1,"
        " 1e308), ('acme', 'recalls', '', 2, 1e308)",
        "insert into memory.tombstones (tenant_id, selector, removed) values ('acme', '{}', '{}')",
        *internal_calls(db),
    ]
    return attempts


def refused(conn: psycopg.Connection, statement: str) -> bool:
    """Whether PostgreSQL refused the statement for want of a privilege (nothing else counts)."""
    try:
        with conn.transaction():
            conn.execute(statement)
    except psycopg.errors.InsufficientPrivilege:
        return True
    return False


COUNTS = (
    "select (select count(*) from memory.jobs), (select max(value) from memory.metric_counts),"
    " (select count(*) from memory.tombstones), (select count(*) from memory.forgotten_sessions),"
    " (select count(*) from memory.turns), (select count(*) from memory.memories)"
)


def unchanged(db: psycopg.Connection, before: tuple) -> None:
    """What the attempts would have changed is as it was, and every tenant still commits and is maintained."""
    assert db.execute(COUNTS).fetchone() == before
    for tenant in ("acme", "globex"):
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        said = [{"role": "user", "content": "still here"}]
        assert db.execute("select turns_added from memory.commit('after', %s)", (Json(said),)).fetchone() == (1,)
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="was forgotten"):
            db.execute("select memory.commit('gone', %s)", (Json(said),))
    db.execute("call memory.maintain()")
    assert db.execute("select status from memory.maintenance_runs order by run_id desc limit 1").fetchone() == ("done",)


CALLERS = {
    "tenant-bound role": {"tenant": "acme"},
    "application role": {},
    "tenant role bound to no tenant": {"grant": "memory_tenant"},
    "role with only CONNECT": {"grant": None},
}


@pytest.mark.parametrize("who", CALLERS)
def test_no_table_sequence_or_internal_function_can_be_written_locked_or_called(tenants, logins, who, capsys):
    caller = logins.create(**CALLERS[who])
    attempts = write_attempts(tenants)
    before = tenants.execute(COUNTS).fetchone()
    accepted = [statement for statement in attempts if not refused(caller, statement)]
    assert accepted == []
    unchanged(tenants, before)
    with capsys.disabled():
        print(f"\n  {who}: {len(attempts)} writes, locks and internal calls, {len(accepted)} accepted")


READERS = ["_memory_items"]


def test_a_tenant_role_may_read_and_call_the_api_and_nothing_more(db):
    """The grants themselves, as the catalog has them."""
    granted = db.execute(
        """
        select r.rolname, c.oid::regclass::text, p.privilege
        from pg_class as c
        cross join unnest(array['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) as p (privilege)
        cross join (values ('memory_tenant'), ('memory_app')) as r (rolname)
        where c.relnamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace) and c.relkind in ('r', 'v')
            and has_table_privilege(r.rolname, c.oid, p.privilege)
        union all
        select r.rolname, p.oid::regprocedure::text, 'EXECUTE'
        from pg_proc as p cross join (values ('memory_tenant'), ('memory_app')) as r (rolname)
        where p.pronamespace = 'memory_internal'::regnamespace and has_function_privilege(r.rolname, p.oid, 'execute')
            and p.oid::regprocedure::text not like all(%s)
        union all
        select r.rolname, c.oid::regclass::text, 'USAGE'
        from pg_class as c cross join (values ('memory_tenant'), ('memory_app')) as r (rolname)
        where c.relkind = 'S' and c.relnamespace = 'memory'::regnamespace
            and has_sequence_privilege(r.rolname, c.oid, 'usage')
        """,
        ([f"memory_internal.{name}(%" for name in READERS],),
    ).fetchall()
    assert granted == []
    # What the view memory.memory_items reads as its reader: a reader (stable, as the caller, under row-level
    # security) that no role of a tenant can name (it may not use schema memory_internal).
    readers = db.execute(
        """
        select p.proname, p.provolatile, p.prosecdef from pg_proc as p
        where p.pronamespace = 'memory_internal'::regnamespace
            and has_function_privilege('memory_tenant', p.oid, 'execute')
        order by 1
        """
    ).fetchall()
    assert readers == [(name, "s", False) for name in sorted(READERS)]
    assert not db.execute("select has_schema_privilege('memory_tenant', 'memory_internal', 'usage')").fetchone()[0]
    admin_writes = db.execute(
        """
        select distinct c.relname from pg_class as c
        where c.relnamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace) and c.relkind = 'r'
            and (has_table_privilege('memory_admin', c.oid, 'insert')
                 or has_table_privilege('memory_admin', c.oid, 'update')
                 or has_table_privilege('memory_admin', c.oid, 'delete'))
        order by 1
        """
    ).fetchall()
    assert admin_writes == [("config",), ("signals",), ("tenant_roles",)]
    admin_internals = db.execute(
        "select p.proname from pg_proc as p where p.pronamespace = 'memory_internal'::regnamespace"
        " and has_function_privilege('memory_admin', p.oid, 'execute') order by 1"
    ).fetchall()
    assert admin_internals == [
        ("_analyze_grown_tenants",),
        ("_claim_jobs",),
        ("_embed_ahead",),
        ("_memory_items",),
        ("_work_on",),
    ]


def test_the_api_runs_as_memory_owner_and_takes_no_tenant_from_its_caller(db):
    """Every function of schema memory but the few pure ones, current_tenant, call (which calls another as its
    caller), bind_tenant_role (which writes what its caller may) and define_feature (a superuser's) runs as
    memory_owner, a bare role."""
    invoker = db.execute(
        """
        select p.oid::regprocedure::text from pg_proc as p
        where p.pronamespace = 'memory'::regnamespace and not p.prosecdef order by 1
        """
    ).fetchall()
    assert [name for (name,) in invoker] == [
        "memory.bind_tenant_role(regrole,text)",
        "memory.call(text,text,jsonb)",
        "memory.current_tenant()",
        "memory.decayed_importance(double precision,timestamp with time zone,timestamp with time zone,jsonb)",
        "memory.define_feature(text,text,regtype,text,text)",
        "memory.memory_holds(text,timestamp with time zone,timestamp with time zone,timestamp with time zone)",
        "memory.metric_definitions()",
        "memory.query_intent(text)",
        "memory.recall_duration_buckets()",
        "memory.version()",
        "memory.work(integer,integer,integer)",
    ]
    others = db.execute(
        """
        select p.oid::regprocedure::text, p.proowner::regrole::text from pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace)
            and p.proowner <> 'memory_owner'::regrole
        union all
        select c.oid::regclass::text, c.relowner::regrole::text from pg_class as c
        where c.relnamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace) and c.relkind in ('r', 'v')
            and c.relowner <> 'memory_owner'::regrole
        order by 1
        """
    ).fetchall()
    # The two that must see every tenant's chunks, recall's full-text lists (whose match must use its index) and
    # the planner's estimate of a tenant belong to memory_observer; nothing runs as a superuser.
    assert others == [
        ("memory_internal._any_chunks()", "memory_observer"),
        ("memory_internal._chunks_lacking(text)", "memory_observer"),
        (
            "memory_internal._full_text_candidates(text,text,timestamp with time zone,timestamp with time zone,"
            "text,memory_internal._recall_query,jsonb,text[])",
            "memory_observer",
        ),
        (
            "memory_internal._planned_chunks(text)",
            "memory_observer",
        ),
        (
            "memory_internal._summary_candidates(text,text,text,memory_internal._recall_query,jsonb,text[])",
            "memory_observer",
        ),
    ]
    roles = db.execute(
        "select rolname, rolcanlogin, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb,"
        " exists (select from pg_auth_members where roleid = r.oid or member = r.oid)"
        " from pg_roles as r where rolname in ('memory_owner', 'memory_observer') order by 1"
    ).fetchall()
    assert roles == [
        ("memory_observer", False, False, True, False, False, False),
        ("memory_owner", False, False, False, False, False, False),
    ]
    observer_reads = db.execute(
        "select c.relname from pg_class as c where c.relnamespace in ('memory'::regnamespace,"
        " 'memory_internal'::regnamespace) and c.relkind in ('r', 'v')"
        " and has_table_privilege('memory_observer', c.oid, 'select') order by 1"
    ).fetchall()
    assert observer_reads == [
        ("chunk_embeddings",),
        ("chunks",),
        ("memories",),
        ("sessions",),
        ("summaries",),
        ("turns",),
    ]
    observer_runs = db.execute(
        "select p.oid::regprocedure::text from pg_proc as p where p.pronamespace in ('memory'::regnamespace,"
        " 'memory_internal'::regnamespace) and has_function_privilege('memory_observer', p.oid, 'execute')"
        " and p.proowner <> 'memory_observer'::regrole order by 1"
    ).fetchall()
    assert [name.split("(")[0] for (name,) in observer_runs] == [
        "memory_internal._bm25_term",
        "memory_internal._chunk_bm25",
        "memory_internal._tool_name",
        "memory_internal._tool_result_call",
        "memory_internal._turn_filter_sql",
        "memory_internal._visible_to",
    ]
    # Only the administrator's bindings, API keys and big tenants' graphs name a tenant: the one they are for, not
    # one they act in (authenticate_api_key answers the HTTP server the tenant of a key); and memory.call, which
    # acts in the tenant it names only when memory.current_tenant() then says it (tests/sql/test_tenant_call.py).
    arguments = db.execute(
        """
        select p.oid::regprocedure::text from pg_proc as p
        where p.pronamespace = 'memory'::regnamespace and 'tenant_id' = any(p.proargnames)
            and p.proname not in ('bind_tenant_role', 'create_api_key', 'list_api_keys', 'authenticate_api_key',
                                  'tenant_graph_statements', 'call')
        """
    ).fetchall()
    assert arguments == []


def test_an_extension_or_predefined_role_cannot_be_bound_to_a_tenant(db):
    roles = ("memory_tenant", "memory_app", "memory_admin", "memory_owner", "memory_observer", "pg_read_all_data")
    for role in roles:
        for statement in (
            "select memory.bind_tenant_role(%s, 'acme')",
            "insert into memory.tenant_roles (role_name, tenant_id) values (%s, 'acme')",  # memory_admin may write it
        ):
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="agent_memory's or PostgreSQL's own roles"):
                db.execute(statement, (role,))
            db.rollback()


def test_a_memory_owner_someone_else_controls_stops_the_install(bare_db, logins: Logins):
    bare_db.commit()
    bare_db.autocommit = True
    member = logins.create(grant=None)
    bare_db.execute(sql.SQL("grant memory_owner to {}").format(sql.Identifier(member.info.user)))
    try:
        with pytest.raises(psycopg.errors.RaiseException, match="role memory_owner exists and can log in"):
            bare_db.execute("create extension agent_memory cascade")
    finally:
        bare_db.execute(sql.SQL("revoke memory_owner from {}").format(sql.Identifier(member.info.user)))


def ids_told_apart(conn: psycopg.Connection, statement: str, foreign: int, missing: int) -> bool:
    """Whether a statement answers differently for another tenant's id than for an id nobody has."""

    def answer(number: int) -> str:
        try:
            with conn.transaction():
                return repr(conn.execute(statement, (number,)).fetchall())
        except psycopg.Error as error:
            return f"{type(error).__name__}: {error.diag.message_primary}"

    return answer(foreign).replace(str(foreign), "N") != answer(missing).replace(str(missing), "N")


def test_errors_never_tell_whether_another_tenants_id_exists(tenants, logins, capsys):
    acme = logins.create(tenant="acme")
    turn, memory, job, policy = tenants.execute(
        "select (select max(turn_id) from memory.turns where tenant_id = 'globex'),"
        " (select max(memory_id) from memory.memories where tenant_id = 'globex'),"
        " (select max(job_id) from memory.jobs where tenant_id = 'globex'),"
        " (select max(policy_id) from memory.retention_policies where tenant_id = 'globex')"
    ).fetchone()
    calls = [
        ("select * from memory.give_feedback('unhelpful', turn_id => %s)", turn),
        ("select * from memory.give_feedback('stale', memory_id => %s)", memory),
        ("select * from memory.resolve(%s)", memory),
        ("select * from memory.retract(%s)", memory),
        ("select * from memory.approve(%s)", memory),
        ("select * from memory.remember('x', evidence => array[%s]::bigint[])", turn),
        ("select * from memory.drop_retention(%s)", policy),
        ("select * from memory.jobs where job_id = %s", job),
        ("select * from memory.turns where turn_id = %s", turn),
    ]
    told = [statement for statement, foreign in calls if ids_told_apart(acme, statement, foreign, foreign + 10**9)]
    assert told == []
    hidden = acme.execute(
        "select count(*) from pg_sequences where schemaname = 'memory' and last_value is not null"
    ).fetchone()
    assert hidden == (0,)
    with capsys.disabled():
        print(f"\n  {len(calls)} id probes: {len(told)} told another tenant's id from a missing one")


def test_an_error_names_the_privilege_not_the_rows(tenants, logins):
    acme = logins.create(tenant="acme")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match=re.escape("permission denied for table jobs")):
        acme.execute("insert into memory.jobs (tenant_id, kind) values ('acme', 'embed')")
