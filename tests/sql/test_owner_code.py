"""No code of a caller runs as the owner: part of the adversarial isolation suite. An administrator (a
memory_admin login, not a superuser) tries to make recall run a function of its own as the extension's
owner, the way that read the secrets and made it a superuser; a signal whose function may no longer run is
skipped with a note, and recall goes on for every tenant.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Json

SECRET = "sk-owner-" + uuid.uuid4().hex
# What the function would do as the owner: read the secrets, make its author a superuser, and say it ran.
EVIL_BODY = (
    "select coalesce((select length(value) from memory_internal._secrets limit 1), 0)"
    " + length(set_config('evil.ran', 'yes', false))::double precision"
)


@pytest.fixture
def admin(db, logins) -> Iterator[psycopg.Connection]:
    """A memory_admin login that may make schemas in this database, with a tenant's session to recall."""
    db.commit()
    db.autocommit = True
    db.execute("select memory.set_secret('openai_api_key', %s, 'https://api.openai.com')", (SECRET,))
    said = [{"role": "user", "content": "the launch codes are in the blue vault"}]
    db.execute("select set_config('memory.tenant_id', 'acme', false)")
    db.execute("select memory.commit('plans', %s, enrich => 'now')", (Json(said),))
    db.execute("reset memory.tenant_id")
    conn = logins.create(grant="memory_admin")
    db.execute(
        sql.SQL("grant create on database {} to {}").format(
            sql.Identifier(db.info.dbname), sql.Identifier(conn.info.user)
        )
    )
    # A schema of a superuser's, which the owner may use: where a DBA's own signals go.
    db.execute("create schema trusted")
    db.execute("grant usage on schema trusted to memory_owner")
    yield conn
    db.execute(sql.SQL("drop owned by {} cascade").format(sql.Identifier(conn.info.user)))


def evil(conn: psycopg.Connection, schema: str) -> str:
    name = f"{schema}.evil(memory.recall_candidate, jsonb)"
    conn.execute(
        f"create function {schema}.evil(c memory.recall_candidate, s jsonb) returns double precision"
        f" language sql stable as $$ {EVIL_BODY} $$"
    )
    return name


def define(conn: psycopg.Connection, function: str) -> None:
    conn.execute("select memory.define_signal('evil', 'boost', %s, 1, 'runs as the owner')", (function,))


def ran(conn: psycopg.Connection) -> bool:
    return conn.execute("select current_setting('evil.ran', true)").fetchone()[0] == "yes"


def test_an_administrators_function_never_becomes_a_signal(admin, db, logins, capsys):
    db.execute(sql.SQL("grant usage on schema trusted to {}").format(sql.Identifier(admin.info.user)))
    attempts = 0
    # In the administrator's temporary schema, and in a schema of its own.
    admin.execute("create schema mine")
    for function in (evil(admin, "pg_temp"), evil(admin, "mine")):
        for statement in (
            "select memory.define_signal('evil', 'boost', %s, 1, 'x')",
            "insert into memory.signals (name, stage, function, default_weight, measures) values ('evil', 'boost', %s,"
            " 1, 'x')",
        ):
            attempts += 1
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match='signal "evil": '):
                admin.execute(statement, (function,))
    # A superuser's function in a schema the administrator may create in, and one memory_owner may not call.
    db.execute(sql.SQL("grant create on schema trusted to {}").format(sql.Identifier(admin.info.user)))
    attempts += 1
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="lets roles other than superusers create"):
        define(admin, evil(db, "trusted"))
    db.execute(sql.SQL("revoke create on schema trusted from {}").format(sql.Identifier(admin.info.user)))
    db.execute("revoke execute on function trusted.evil(memory.recall_candidate, jsonb) from public")
    attempts += 1
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="memory_owner may not call"):
        define(admin, "trusted.evil(memory.recall_candidate, jsonb)")
    # A row pointing elsewhere later is checked too.
    db.execute("grant execute on function trusted.evil(memory.recall_candidate, jsonb) to public")
    define(admin, "trusted.evil(memory.recall_candidate, jsonb)")  # a superuser's, where only superusers write
    attempts += 1
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match='signal "evil": '):
        admin.execute(
            "update memory.signals set function = 'mine.evil(memory.recall_candidate, jsonb)' where name = 'evil'"
        )
    db.execute("delete from memory.signals where name = 'evil'")
    admin.execute("select * from memory.recall('launch codes')").fetchall()
    db.execute("select * from memory.recall('launch codes')").fetchall()
    assert not ran(admin) and not ran(db)
    assert db.execute("select rolsuper from pg_roles where rolname = %s", (admin.info.user,)).fetchone() == (False,)
    with capsys.disabled():
        print(f"\n  administrator: {attempts} ways to make recall run its code as the owner, 0 taken")


HARMLESS = (
    "create function {schema}.harmless(c memory.recall_candidate, s jsonb) returns double precision"
    " language sql stable as $$ select 0::double precision $$"
)


@pytest.mark.parametrize(
    "schema, refusal",
    [
        ("administrators", "schema administrators is owned by am_test_"),
        ("open_to_all", "schema open_to_all lets roles other than superusers create objects"),
        ("public", None),  # a database owner's who is a superuser: only superusers create in it (PostgreSQL 15)
    ],
)
def test_a_superusers_function_is_a_signal_only_in_a_schema_only_superusers_write(admin, db, schema, refusal):
    if schema == "administrators":
        admin.execute("create schema administrators")
    elif schema == "open_to_all":
        db.execute("create schema open_to_all")
        db.execute("grant create, usage on schema open_to_all to public")
    db.execute(HARMLESS.format(schema=schema))
    function = f"{schema}.harmless(memory.recall_candidate, jsonb)"
    if refusal:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match=refusal):
            define(db, function)
        assert db.execute("select count(*) from memory.signals where name = 'evil'").fetchone() == (0,)
        return
    define(db, function)
    db.execute("select set_config('memory.tenant_id', 'acme', false)")
    components = db.execute("select components from memory.recall('launch codes')").fetchone()[0]
    assert "evil" in components["signals"] and not any("evil" in line for line in components["degraded"])
    db.execute("reset memory.tenant_id")
    db.execute("delete from memory.signals where name = 'evil'")
    db.execute(f"drop function {function}")


def test_an_administrator_never_defines_a_feature(admin, db):
    """A feature's expression runs as the owner in every recall: only a superuser defines one."""
    expression = EVIL_BODY.removeprefix("select ")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for function define_feature"):
        admin.execute("select memory.define_feature('evil', 'turn', 'double precision', %s, 'x')", (expression,))
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for table recall_features"):
        admin.execute(
            "insert into memory.recall_features (name, stage, type, expression, describes)"
            " values ('evil', 'turn', 'double precision', %s, 'x')",
            (expression,),
        )
    admin.execute("set memory.tenant_id = 'acme'")
    assert admin.execute("select count(*) from memory.recall('launch codes')").fetchone() == (1,)
    assert not ran(admin)


@pytest.mark.parametrize("problem", ["owner changed", "temporary schema", "dropped"])
def test_a_signal_that_may_no_longer_run_is_skipped_with_a_note(admin, db, logins, problem):
    define(db, evil(db, "trusted"))
    if problem == "owner changed":  # a superuser hands it to the administrator, who could now change it
        db.execute(
            sql.SQL("alter function trusted.evil(memory.recall_candidate, jsonb) owner to {}").format(
                sql.Identifier(admin.info.user)
            )
        )
    elif problem == "temporary schema":  # a row from before the check (a restore, an upgrade)
        db.execute("alter table memory.signals disable trigger signals_validate")
        db.execute(
            "update memory.signals set function = 'pg_temp_99.evil(memory.recall_candidate, jsonb)' where name = 'evil'"
        )
        db.execute("alter table memory.signals enable trigger signals_validate")
    else:
        db.execute("drop function trusted.evil(memory.recall_candidate, jsonb)")
    acme = logins.create(tenant="acme")
    for conn in (acme, db):  # every tenant, and the owner's own session
        if conn is db:
            db.execute("select set_config('memory.tenant_id', 'acme', false)")
        hits = conn.execute("select content, components from memory.recall('launch codes')").fetchall()
        assert hits[0][0] == "the launch codes are in the blue vault"
        note = [line for line in hits[0][1]["degraded"] if line.startswith("signal evil skipped: ")]
        assert len(note) == 1 and "evil" not in hits[0][1]["signals"]
        assert not ran(conn)
    db.execute("reset memory.tenant_id")


# A tenant's own code, in its own session: what it would do as the owner, and whether it ran as the owner.
TENANT_EVIL = (
    "create function pg_temp.evil() returns boolean language sql volatile as"
    " $$ select set_config('evil.ran', current_user, false) is not null $$"
)


def ran_as(conn: psycopg.Connection) -> str | None:
    return conn.execute("select current_setting('evil.ran', true)").fetchone()[0]


def test_a_prepared_statement_of_the_callers_never_stands_in_for_recalls(admin, db, logins):
    # A tenant may not even name recall's types (schema memory_internal); an administrator may, and tries.
    admin.execute("set memory.tenant_id = 'acme'")
    admin.execute("select count(*) from memory.recall('launch codes')")
    name, statement = admin.execute(
        "select name, statement from pg_prepared_statements where name like 'memory_recall_score_%'"
    ).fetchone()
    admin.execute(f"deallocate {name}")
    admin.execute(TENANT_EVIL)
    # The same text over a parameter of the caller's own type: a domain that runs the caller's code.
    admin.execute("create domain pg_temp.recall as memory_internal._recall_context check (pg_temp.evil())")
    assert "(memory_internal._recall_context)" in statement
    admin.execute(statement.replace("(memory_internal._recall_context)", "(pg_temp.recall)", 1))
    hits = admin.execute("select content from memory.recall('launch codes')").fetchall()
    assert hits and ran_as(admin) in (None, admin.info.user)  # never memory_owner
    # The very same text is the same statement: harmless, whoever prepared it.
    admin.execute(f"deallocate {name}")
    admin.execute(statement)
    assert admin.execute("select count(*) from memory.recall('launch codes')").fetchone()[0] > 0
    assert ran_as(admin) in (None, admin.info.user)


def test_an_import_refuses_a_tenants_relations_in_place_of_its_own(admin, db, logins):
    acme = logins.create(tenant="acme")
    acme.execute(TENANT_EVIL)
    acme.execute(
        "create temporary view _agent_memory_import_records as select 1::bigint as records where pg_temp.evil()"
    )
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="temporary relations named like the import"):
        acme.execute("select * from memory.import_tenant('[]')")
    assert ran_as(acme) is None
