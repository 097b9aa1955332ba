"""Tenants isolated by the database, and secrets kept from callers: an adversarial suite run as real
logins — a role bound to tenant acme (memory_tenant), an application role (memory_app) and a role with no grant —
against a database holding tenants acme and globex. Every attempt counts; the suite prints how many
it made and asserts 0 foreign rows returned, 0 foreign rows changed, 0 secrets received.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from conftest import SERVER, Logins
from exfiltration import attempt, exfiltration_attempts
from http_stub import Stub
from psycopg import sql
from psycopg.types.json import Json, Jsonb

SECRET = "sk-owner-" + uuid.uuid4().hex
TENANT_TABLES = [
    "sessions",
    "turns",
    "speakers",
    "chunks",
    "lexicon",
    "corpus",
    "chunk_embeddings",
    "summaries",
    "session_embeddings",
    "jobs",
    "feedback",
    "memories",
    "memory_merges",
    "memory_supersessions",
    "memory_evidence",
    "tombstones",
    "forgotten_sessions",
    "metric_counts",
    "retention_policies",
    "archives",
]


@pytest.fixture
def two_tenants(db, logins) -> Iterator[tuple[psycopg.Connection, Logins, dict]]:
    """acme and globex, each with one enriched session (local embedder), committed; globex's ids."""
    db.commit()
    db.autocommit = True
    for tenant in ("acme", "globex"):
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        messages = [
            {"role": "user", "content": f"{tenant} keeps the launch codes in the blue vault"},
            {"role": "assistant", "content": f"Noted: the {tenant} launch codes are in the blue vault."},
        ]
        db.execute("select memory.commit('plans', %s, enrich => 'now')", (Json(messages),))
        said = [{"role": "user", "content": f"{tenant} orders tea every morning"}]
        db.execute("select memory.commit('drinks', %s)", (Json(said),))
        db.execute(
            "select memory.remember(%s, evidence => array(select t.turn_id from memory.turns as t"
            " join memory.sessions as s using (tenant_id, session_key)"
            " where t.tenant_id = memory.current_tenant() and s.session_id = 'drinks'))",
            (f"{tenant} prefers tea",),
        )
        db.execute("select memory.remember(%s)", (f"{tenant} prefers to drink tea",))  # merged: a paraphrase
        db.execute("select memory.commit('gone', %s)", (Json(messages),))
        db.execute("select memory.forget('gone')")  # a tombstone and a forgotten session
        db.execute("select memory.commit('old', %s)", (Json(messages),))
        db.execute("update memory.sessions set updated_at = now() - interval '400 days' where session_id = 'old'")
        db.execute("select memory.set_retention('sessions', max_age => '365 days')")
    db.execute("reset memory.tenant_id")
    db.execute("call memory.maintain()")  # each tenant's session 'old' goes to an archive
    globex = db.execute("select min(turn_id), count(*) from memory.turns where tenant_id = 'globex'").fetchone()
    counts = {
        table: db.execute(f"select count(*) from memory.{table} where tenant_id = 'globex'").fetchone()[0]
        for table in TENANT_TABLES
    }
    memory = db.execute("select min(memory_id) from memory.memories where tenant_id = 'globex'").fetchone()[0]
    archive, policy = db.execute(
        "select a.archive_id, p.policy_id from memory.archives as a, memory.retention_policies as p"
        " where a.tenant_id = 'globex' and p.tenant_id = 'globex'"
    ).fetchone()
    yield (
        db,
        logins,
        {
            "turn": globex[0],
            "turns": globex[1],
            "memory": memory,
            "archive": archive,
            "policy": policy,
            "counts": counts,
        },
    )


def foreign(rows: list[tuple], marker: str = "globex") -> int:
    return sum(marker in repr(row) for row in rows)


def globex_unchanged(db: psycopg.Connection, before: dict) -> None:
    after = {
        table: db.execute(f"select count(*) from memory.{table} where tenant_id = 'globex'").fetchone()[0]
        for table in TENANT_TABLES
    }
    assert after == before["counts"]
    trust, content = db.execute(
        "select trust, content from memory.turns where turn_id = %s", (before["turn"],)
    ).fetchone()
    assert (trust, content) == (1, "globex keeps the launch codes in the blue vault")
    status = db.execute("select status from memory.memories where memory_id = %s", (before["memory"],)).fetchone()
    assert status == ("active",)
    moved = db.execute(
        "select count(*) from memory.sessions where tenant_id = 'globex' and (tier <> 'hot' or used_at is not null)"
    ).fetchone()
    assert moved == (0,)
    kept = db.execute("select count(*) from memory.archives where tenant_id = 'globex' and data is not null").fetchone()
    assert kept == (1,)


def reads(conn: psycopg.Connection, turn: int) -> list[tuple[str, tuple]]:
    """Every way to read a tenant's rows: tables, views and the public functions."""
    return [
        *[(f"select * from memory.{t}", ()) for t in TENANT_TABLES],
        ("select * from memory.turns where tenant_id = 'globex'", ()),
        ("select * from memory.turns where turn_id = %s", (turn,)),
        ("select * from memory.queue_status", ()),
        ("select * from memory.feedback_summary", ()),
        ("select * from memory.memory_items", ()),
        ("select * from memory.tool_executions", ()),
        ("select * from memory.tier_items", ()),
        ("select * from memory.metrics", ()),
        ("select * from memory.tier_moves(now() + interval '1000 days')", ()),
        ("select * from memory.rules_and_preferences", ()),
        ("select * from memory.list_memories(search => 'tea', status => 'active')", ()),
        ("select * from memory.list_memories(agent_id => 'default', as_of => now())", ()),
        ("select * from memory.recall('launch codes vault', k => 50)", ()),
        ("select * from memory.recall('globex launch codes', k => 50, level => 'session')", ()),
        ("select * from memory.recall('globex launch codes', k => 50, tiers => '{hot,warm,cold}')", ()),
        ("select * from memory.explain_recall('globex launch codes vault')", ()),
        ("select * from memory.export()", ()),
        ("select * from memory.export('default', 'plans')", ()),
        ("select * from memory.export_tenant()", ()),
        ("select * from memory.export_tenant('default')", ()),
        ("select * from memory.retention_preview(now() + interval '1000 days')", ()),
        ("select * from memory.list_archives()", ()),
        ("select memory.archive(a) from generate_series(1, 5) as a", ()),
        ("select * from memory.bootstrap()", ()),
        ("select memory.query('turns mentioning launch codes') -> 'rows'", ()),
        ("select memory.query('memories of any status by agent default') -> 'rows'", ()),
        ("select memory.query('sessions since 2000', agent_id => 'default') -> 'rows'", ()),
        ("select * from memory.context_for_task('launch codes')", ()),
        # crafted filters: every agent, all of time, the other tenant's session and agent names
        (
            "select * from memory.recall('launch codes', k => 50, agent_id => 'default', since => '-infinity',"
            " until => 'infinity', source => null, weights => '{\"weight_lexical\": 5}')",
            (),
        ),
        ("select * from memory.explain_recall('globex', agent_id => 'default')", ()),
        ("select * from memory.context_for_task('globex launch codes', agent_id => 'default', k => 50)", ()),
        ("select * from memory.bootstrap('default', sessions => 100)", ()),
        ("select * from memory.stats('default')", ()),
        ("select * from memory.stats()", ()),
        ("select memory.current_tenant()", ()),
    ]


def writes(turn: int, memory: int, archive: int, policy: int) -> list[tuple[str, tuple]]:
    """Every way to change another tenant's rows."""
    return [
        ("select memory.drop_archive(%s)", (archive,)),
        ("select memory.drop_retention(%s)", (policy,)),
        ("update memory.archives set data = null where tenant_id = 'globex'", ()),
        ("delete from memory.retention_policies where tenant_id = 'globex'", ()),
        ("select memory_internal._apply_retention('globex', now() + interval '1000 days')", ()),
        (
            "select * from memory.import_tenant(%s)",
            (
                Jsonb(
                    [
                        {
                            "record": "session",
                            "tenant_id": "globex",
                            "session_id": "plans",
                            "messages": [{"role": "user", "content": "x"}],
                        }
                    ]
                ),
            ),
        ),
        ("select * from memory.give_feedback('unhelpful', turn_id => %s)", (turn,)),
        ("select * from memory.give_feedback('helpful', turn_id => %s)", (turn,)),
        ("select * from memory.forget('plans')", ()),
        ("select * from memory.forget_entity('globex')", ()),
        ("select * from memory.retract(%s)", (memory,)),
        ("select * from memory.resolve(%s)", (memory,)),
        ("select * from memory.approve(%s)", (memory,)),
        ("select * from memory.give_feedback('incorrect', memory_id => %s, judged_by => 'a')", (memory,)),
        ("select * from memory.give_feedback('incorrect', memory_id => %s, judged_by => 'b')", (memory,)),
        ("select * from memory.give_feedback('stale', memory_id => %s)", (memory,)),
        ("update memory.memory_merges set content = 'owned' where tenant_id = 'globex'", ()),
        ("delete from memory.memory_evidence where tenant_id = 'globex'", ()),
        ("insert into memory.memory_evidence values ('globex', %s, %s)", (memory, turn + 1)),
        ("select memory_internal._add_evidence('globex', %s, array[%s]::bigint[])", (memory, turn + 1)),
        ("update memory.memories set status = 'retracted' where tenant_id = 'globex'", ()),
        ("update memory.sessions set tier = 'cold' where tenant_id = 'globex'", ()),
        ("update memory.metric_counts set value = 1e9 where tenant_id = 'globex'", ()),
        ("select memory_internal._move_tiers('globex', now() + interval '1000 days')", ()),
        ("delete from memory.forgotten_sessions where tenant_id = 'globex'", ()),
        ("insert into memory.tombstones (tenant_id, selector, removed) values ('globex', '{}', '{}')", ()),
        ("update memory.turns set content = 'owned', trust = 0.05 where tenant_id = 'globex'", ()),
        ("delete from memory.turns where tenant_id = 'globex'", ()),
        ("delete from memory.sessions where tenant_id = 'globex'", ()),
        ("update memory.sessions set tenant_id = 'acme' where tenant_id = 'globex'", ()),
        ("update memory.turns set tenant_id = 'globex' where tenant_id = 'acme'", ()),
        (
            "insert into memory.sessions (tenant_id, agent_id, session_id) values ('globex', 'default', 'planted')",
            (),
        ),
        ("insert into memory.tenant_roles values (current_user, 'globex')", ()),
        ("select memory.bind_tenant_role(current_user::regrole, 'globex')", ()),
        ("insert into memory.config values ('text_search_config', '\"simple\"')", ()),
        ("update memory.signals set default_weight = 0", ()),
        ("delete from memory.signals", ()),
        ("select memory.set_secret('openai_api_key', 'sk-mine', 'http://127.0.0.1:9')", ()),
    ]


TENANT_SWITCHES = [
    "set memory.tenant_id = 'globex'",
    "select set_config('memory.tenant_id', 'globex', false)",
    "set role memory_tenant",  # a bound login that takes up the group role it was granted
]


def test_a_role_bound_to_a_tenant_sees_and_changes_only_its_own(two_tenants, capsys):
    db, logins, globex = two_tenants
    acme = logins.create(tenant="acme")
    own = "select content from memory.recall('launch codes vault', k => 1)"
    assert acme.execute(own).fetchall() == [("acme keeps the launch codes in the blue vault",)]
    attempts = returned = 0
    for switch in ["", *TENANT_SWITCHES]:
        if switch:
            acme.execute(switch)
        for query, params in reads(acme, globex["turn"]):
            attempts += 1
            returned += foreign(attempt(acme, query, params))
        assert acme.execute("select memory.current_tenant()").fetchone()[0] == "acme"
        for query, params in writes(
            globex["turn"], globex["memory"], globex["archive"], globex["policy"]
        ):  # forget('plans') forgets acme's own session
            attempts += 1
            attempt(acme, query, params)
    globex_unchanged(db, globex)
    assert returned == 0
    with capsys.disabled():
        print(f"\n  tenant-bound role: {attempts} cross-tenant attempts, 0 foreign rows returned, 0 changed")


def test_an_application_role_sees_the_tenant_it_chose_and_only_that(two_tenants, capsys):
    db, logins, globex = two_tenants
    app = logins.create()
    app.execute("set memory.tenant_id = 'acme'")
    attempts = returned = 0
    for query, params in reads(app, globex["turn"]):
        attempts += 1
        returned += foreign(attempt(app, query, params))
    for query, params in writes(globex["turn"], globex["memory"], globex["archive"], globex["policy"]):
        attempts += 1
        attempt(app, query, params)
    globex_unchanged(db, globex)
    assert returned == 0
    # switching is what it may do: then it sees globex, and no longer acme
    app.execute("set memory.tenant_id = 'globex'")
    rows = app.execute("select content from memory.turns order by turn_id").fetchall()
    assert rows and all("globex" in content for (content,) in rows)
    with capsys.disabled():
        print(f"\n  application role: {attempts} cross-tenant attempts, 0 foreign rows returned, 0 changed")


def test_an_application_role_commits_enriches_and_recalls_with_vectors(two_tenants):
    _, logins, _ = two_tenants
    app = logins.create()
    app.execute("set memory.tenant_id = 'initech'")
    app.execute(
        "select memory.commit('s', %s, enrich => 'now')",
        (Json([{"role": "user", "content": "the staging database moved to a larger disk"}]),),
    )
    hit = app.execute(
        "select content, components -> 'signals' -> 'dense' ->> 'value' from memory.recall('storage upgrade', k => 1)"
    ).fetchone()
    assert hit[0] == "the staging database moved to a larger disk"
    assert float(hit[1]) > 0.2  # the local model's vectors, used without any secret


def test_a_role_without_a_memory_role_is_refused(two_tenants):
    _, logins, _ = two_tenants
    stranger = logins.create(grant=None)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        stranger.execute("select * from memory.recall('launch codes')")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        stranger.execute("select * from memory.turns")


def test_a_bound_role_whose_name_needs_quotes_is_bound(two_tenants):
    _, logins, _ = two_tenants
    quoted = logins.create(tenant="acme", name=f"Am-Test-{uuid.uuid4().hex[:6]}")
    quoted.execute("set memory.tenant_id = 'globex'")
    assert quoted.execute("select memory.current_tenant()").fetchone()[0] == "acme"
    assert foreign(quoted.execute("select * from memory.turns").fetchall()) == 0


def test_a_tenant_role_bound_in_no_tenant_of_this_database_is_refused(two_tenants):
    # Roles are the cluster's; a binding is one database's. Unbound here, it may not choose a tenant.
    _, logins, _ = two_tenants
    elsewhere = logins.create(grant="memory_tenant")
    elsewhere.execute("set memory.tenant_id = 'globex'")
    with pytest.raises(psycopg.errors.RaiseException, match="has no tenant"):
        elsewhere.execute("select * from memory.turns")


def test_a_vector_that_would_break_the_shared_index_is_refused_whoever_writes_it(two_tenants):
    db, logins, _ = two_tenants
    acme = logins.create(tenant="acme")
    plant = (
        "insert into memory.chunk_embeddings (tenant_id, turn_id, chunk_no, model, text_sha256, embedding)"
        " select tenant_id, turn_id, chunk_no, 'text-embedding-3-small', text_sha256, '[1,2,3]'"
        " from memory.chunk_embeddings limit 1"
    )
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        acme.execute(plant)  # a tenant writes no table at all
    # The API's own writes are held to the model too: a model nobody registered, or a vector of another length.
    with pytest.raises(psycopg.errors.ForeignKeyViolation, match="chunk_embeddings_model_fkey"):
        db.execute(plant)
    db.execute("insert into memory.embedding_models (model, provider, dimensions) values ('client', 'client', 8)")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="has 3 dimensions; the model has 8"):
        db.execute(plant.replace("'text-embedding-3-small'", "'client'"))


def test_a_role_granted_the_tables_but_no_tenant_is_refused_by_name(two_tenants):
    db, logins, _ = two_tenants
    stranger = logins.create(grant=None)
    name = stranger.info.user
    db.execute(sql.SQL("grant usage on schema memory, memory_internal to {}").format(sql.Identifier(name)))
    db.execute(sql.SQL("grant select on all tables in schema memory to {}").format(sql.Identifier(name)))
    db.execute(
        sql.SQL("grant execute on all functions in schema memory, memory_internal to {}").format(sql.Identifier(name))
    )
    try:
        with pytest.raises(psycopg.errors.RaiseException, match=f"role {name} has no tenant"):
            stranger.execute("select * from memory.turns")
    finally:
        db.execute(sql.SQL("drop owned by {}").format(sql.Identifier(name)))


@pytest.fixture
def owner_secret(two_tenants) -> Iterator[tuple[psycopg.Connection, Logins]]:
    """The owner's OpenAI key, stored for api.openai.com."""
    db, logins, _ = two_tenants
    db.execute("select memory.set_secret('openai_api_key', %s, 'https://api.openai.com/v1')", (SECRET,))
    db.execute("select memory.set_secret('rerank_api_key', %s, 'https://api.cohere.com')", (SECRET,))
    yield db, logins


@pytest.mark.parametrize("bound", [True, False], ids=["tenant-bound role", "application role"])
def test_no_secret_reaches_a_listener_whatever_the_caller_sets(owner_secret, bound, capsys):
    _, logins = owner_secret
    caller = logins.create(tenant="acme" if bound else None)
    with Stub() as listener:
        attempts = exfiltration_attempts(listener.base_url)
        answers = [attempt(caller, query, params) for query, params in attempts]
        received = [auth for _, _, auth in listener.requests if auth and SECRET in auth]
    assert received == []
    assert listener.requests == []  # nor anything else: the endpoints are the administrator's
    assert all(SECRET not in repr(rows) and "root:" not in repr(rows) for rows in answers)
    with capsys.disabled():
        print(f"\n  {len(attempts)} secret-exfiltration attempts: {len(received)} secrets received")


def test_a_key_goes_only_to_its_origin_even_from_the_owners_session(owner_secret):
    db, _ = owner_secret
    with Stub() as listener:
        db.execute("set memory.embedder = 'openai'")
        db.execute(sql.SQL("set memory.openai_base_url = {}").format(listener.base_url))
        with pytest.raises(psycopg.errors.InternalError_, match=r"is stored for https://api\.openai\.com"):
            db.execute("select memory.embed(array['hello'])")
        db.execute("set memory.openai_base_url = 'file:///etc/passwd#'")
        with pytest.raises(psycopg.errors.InternalError_, match="scheme 'file' is not allowed") as refused:
            db.execute("select memory.embed(array['hello'])")
        assert "root:" not in str(refused.value)
        assert listener.requests == []


def test_a_session_setting_of_the_administrators_is_refused_by_name(two_tenants):
    _, logins, _ = two_tenants
    app = logins.create()
    app.execute("set memory.openai_base_url = 'http://127.0.0.1:9/v1'")
    with pytest.raises(psycopg.errors.RaiseException, match='setting "openai_base_url" is the administrator'):
        app.execute("select * from memory.recall('hello')")
    app.execute("reset memory.openai_base_url")
    with pytest.raises(psycopg.errors.RaiseException, match='setting "rerank_url" is the administrator'):
        app.execute("select * from memory.recall('hello', weights => %s)", (Jsonb({"rerank_url": "http://x"}),))


def test_an_admin_stores_secrets_writes_settings_and_binds_roles(two_tenants):
    db, logins, _ = two_tenants
    admin = logins.create(grant=None)
    db.execute(sql.SQL("grant memory_admin to {}").format(sql.Identifier(admin.info.user)))
    admin.execute("select memory.set_secret('openai_api_key', 'sk-admin', 'https://api.openai.com')")
    admin.execute("insert into memory.config values ('bm25_k1', '1.2')")
    admin.execute("delete from memory.config where key = 'bm25_k1'")
    bound = logins.create()
    admin.execute("select memory.bind_tenant_role(%s, 'acme')", (bound.info.user,))
    assert bound.execute("select memory.current_tenant()").fetchone()[0] == "acme"
    # every tenant's rows, for maintenance and the worker
    tenants = {t for (t,) in admin.execute("select distinct tenant_id from memory.turns")}
    assert {"acme", "globex"} <= tenants
    assert db.execute("select origin from memory_internal._secrets where name = 'openai_api_key'").fetchone()[0] == (
        "https://api.openai.com"
    )


def test_every_tenant_keyed_table_has_forced_row_level_security(db):
    rows = db.execute(
        """
        select c.relname, c.relrowsecurity, c.relforcerowsecurity,
               exists (select from pg_policy as p where p.polrelid = c.oid)
        from pg_class as c
        inner join pg_attribute as a on a.attrelid = c.oid and a.attname = 'tenant_id'
        where c.relnamespace = 'memory'::regnamespace and c.relkind = 'r'
        """
    ).fetchall()
    assert {name for name, *_ in rows} >= set(TENANT_TABLES)
    assert [(name, rls, forced, policy) for name, rls, forced, policy in rows if not (rls and forced and policy)] == []


def test_no_function_is_executable_by_public_and_no_view_runs_as_its_owner(db):
    public = db.execute(
        """
        select p.oid::regprocedure::text from pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace)
            and has_function_privilege('public', p.oid, 'execute')
        """
    ).fetchall()
    assert public == []
    owners = db.execute(
        """
        select c.relname from pg_class as c
        where c.relnamespace = 'memory'::regnamespace and c.relkind = 'v'
            and not coalesce('security_invoker=true' = any(c.reloptions), false)
        """
    ).fetchall()
    assert owners == []


@pytest.mark.parametrize(
    ("call", "error"),
    [
        ("select memory.set_secret('Bad Name', 'k', 'https://x.example')", "secret name must be lower-case letters"),
        ("select memory.set_secret('k', '', 'https://x.example')", "secret k needs a value"),
        ("select memory.set_secret('k', 'v', 'ftp://x.example')", "needs the http or https URL it is for, got ftp"),
        ("select memory.set_secret('k', 'v', 'file:///etc/passwd')", "needs the http or https URL it is for"),
        ("select memory.bind_tenant_role('postgres', '')", "tenant_id must be 1 to 200 characters"),
        ("select memory.bind_tenant_role('no_such_role_here', 'acme')", 'role "no_such_role_here" does not exist'),
        (
            "insert into memory.config (tenant_id, key, value) values (repeat('t', 201), 'bm25_k1', '1')",
            "memory.config tenant_id must be empty (every tenant) or at most 200 characters",
        ),
    ],
)
def test_bad_administration_input_is_refused_by_name(db, call, error):
    with pytest.raises(psycopg.Error, match=re.escape(error)):
        db.execute(call)
    db.rollback()
    stored = "select count(*) from memory_internal._secrets where name <> 'notification_key'"
    assert db.execute(stored).fetchone()[0] == 0
    assert db.execute("select count(*) from memory.tenant_roles").fetchone()[0] == 0


def told(conn: psycopg.Connection, query: str, params: tuple = ()) -> str:
    """Everything a statement tells its caller: the rows, or the whole error (message, detail, hint, context)."""
    try:
        with conn.transaction():
            cursor = conn.execute(query, params)
            return repr(cursor.fetchall() if cursor.description else [])
    except psycopg.Error as error:
        d = error.diag
        return " | ".join(str(x) for x in (d.message_primary, d.message_detail, d.message_hint, d.context) if x)


def test_an_endpoints_words_never_reach_a_tenant(db, logins, capsys):
    """A provider's error body may echo the key, masked: tenants see the status, the server log the body."""
    db.commit()
    db.autocommit = True
    acme = logins.create(tenant="acme")
    echoed = "Incorrect API key provided: sk-own***" + uuid.uuid4().hex[:8]
    said = Json([{"role": "user", "content": "the launch codes are in the blue vault"}])
    with Stub() as endpoint:
        settings = {
            "embedder": "openai",
            "openai_base_url": endpoint.base_url,
            "openai_embedding_model": "stub-embed",
            "openai_embedding_dimensions": endpoint.dimensions,
            "http_retries": 0,
            "rerank": "http",
            "rerank_url": endpoint.rerank_url,
        }
        for key, value in settings.items():
            db.execute("insert into memory.config (key, value) values (%s, %s)", (key, Jsonb(value)))
        db.execute("select memory.set_secret('openai_api_key', %s)", (SECRET,))
        db.execute("select memory.set_secret('rerank_api_key', %s)", (SECRET,))
        acme.execute("select memory.commit('plans', %s, enrich => 'now')", (said,))
        endpoint.fail_message = echoed
        logged_before = SERVER.log_file.stat().st_size
        answers = []
        for failures, query in (
            ([401], "select memory.commit('more', %s, enrich => 'now')"),
            ([401], "select memory.embed(array['launch codes'])"),
            ([401, 401], "select components from memory.recall('launch codes')"),
            ([401], "select memory.remember('The vault is blue.')"),
        ):
            endpoint.fail_next = failures
            answers.append(told(acme, query, (said,) if "%s" in query else ()))
        acme.execute("select memory.commit('queued', %s)", (said,))
        endpoint.fail_next = [401]
        db.execute("call memory.work(10)")
        answers += [told(acme, "select last_error from memory.jobs"), told(acme, "select * from memory.queue_status")]
    assert "401 Unauthorized" in answers[0] and "401 Unauthorized" in answers[2]  # the status is told
    reached = [answer for answer in answers if echoed in answer or SECRET in answer]
    assert reached == []
    with SERVER.log_file.open("rb") as log:
        log.seek(logged_before)
        assert echoed in log.read().decode(errors="replace")
    with capsys.disabled():
        print(f"\n  {len(answers)} endpoint failures seen by a tenant: {len(reached)} carried the endpoint's words")
