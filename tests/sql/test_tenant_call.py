"""memory.call(tenant_id, function_name, arguments): one call of the API for a tenant named in it (the call a
Citus cluster routes), as the function called after set memory.tenant_id, for that call only."""

import psycopg
import pytest
from psycopg.types.json import Jsonb

MESSAGES = [
    {"role": "user", "content": "The staging database moved to Frankfurt last week."},
    {"role": "assistant", "content": "Noted: staging is in Frankfurt now."},
]


def call(conn, tenant, function, arguments):
    return [row[0] for row in conn.execute("select memory.call(%s, %s, %s)", (tenant, function, Jsonb(arguments)))]


def test_a_call_is_the_function_called_for_its_tenant_and_leaves_the_sessions_tenant_as_it_was(db, logins):
    app = logins.create()
    app.execute("set memory.tenant_id = 'elsewhere'")
    (committed,) = call(app, "acme", "commit", {"session_id": "s1", "messages": MESSAGES, "enrich": "now"})
    assert committed["created"] is True and committed["turns_added"] == 2
    assert app.execute("select current_setting('memory.tenant_id')").fetchone() == ("elsewhere",)
    assert db.execute("select tenant_id, count(*) from memory.turns group by 1").fetchall() == [("acme", 2)]
    # Arguments of every kind read as their parameters' types: text, an array, a JSON object, a number.
    hits = call(
        app,
        "acme",
        "recall",
        {"query": "staging database", "tiers": ["hot", "warm"], "k": 1, "weights": {"weight_tier": 0.1}},
    )
    app.execute("set memory.tenant_id = 'acme'")
    direct = app.execute(
        "select turn_id, content from memory.recall('staging database', tiers => '{hot,warm}', k => 1,"
        " weights => '{\"weight_tier\": 0.1}')"
    ).fetchall()
    assert [(hit["turn_id"], hit["content"]) for hit in hits] == direct and len(direct) == 1
    # A function that returns nothing: one null, and its work done.
    assert call(app, "acme", "set_summary", {"session_id": "s1", "summary": "Staging moved to Frankfurt."}) == [None]
    assert db.execute("select summary from memory.summaries where tenant_id = 'acme'").fetchone() == (
        "Staging moved to Frankfurt.",
    )


def test_a_role_bound_to_a_tenant_calls_for_it_alone(db, logins):
    bound = logins.create(tenant="acme")
    assert call(bound, "acme", "commit", {"session_id": "s1", "messages": MESSAGES})[0]["turns_added"] == 2
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="acts for tenant acme, not globex"):
        call(bound, "globex", "commit", {"session_id": "s1", "messages": MESSAGES})
    assert db.execute("select distinct tenant_id from memory.turns").fetchall() == [("acme",)]


def test_a_call_has_the_privileges_of_its_caller(logins):
    bound = logins.create(tenant="acme")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for function bind_tenant_role"):
        call(bound, "acme", "bind_tenant_role", {"role_name": "postgres", "tenant_id": "acme"})


@pytest.mark.parametrize(
    ("function", "arguments", "error", "message"),
    [
        ("nonesuch", {}, psycopg.errors.UndefinedFunction, "the API has no function memory.nonesuch"),
        (
            "commit",
            {"session": "s1"},
            psycopg.errors.UndefinedFunction,
            r"no function memory.commit takes the arguments \{session\}",
        ),
        (
            "commit",
            {"messages": MESSAGES},
            psycopg.errors.UndefinedFunction,
            r"no function memory.commit takes the arguments \{messages\}",
        ),
        ("call", {}, psycopg.errors.InvalidParameterValue, "memory.call cannot call itself"),
        ("_add_turns", {}, psycopg.errors.UndefinedFunction, "the API has no function memory._add_turns"),
        ("commit", [], psycopg.errors.InvalidParameterValue, "as a JSON object of names and values, got array"),
    ],
)
def test_a_call_the_api_has_not_is_refused_by_name_and_writes_nothing(db, logins, function, arguments, error, message):
    app = logins.create()
    with pytest.raises(error, match=message) as refused:
        call(app, "acme", function, arguments)
    if "takes the arguments" in message:
        assert "It takes: memory.commit(session_id text, messages json" in refused.value.diag.message_hint
    assert db.execute("select count(*) from memory.sessions").fetchone() == (0,)


def test_a_call_with_a_null_is_null_and_runs_nothing(db, logins):
    app = logins.create()
    assert app.execute("select memory.call(null, 'commit', %s)", (Jsonb({"session_id": "s1"}),)).fetchall() == []
    assert app.execute("select memory.call('acme', 'commit', null)").fetchall() == []
    assert db.execute("select count(*) from memory.sessions").fetchone() == (0,)
