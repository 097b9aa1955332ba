"""API keys: who may call `agent-memory serve`, as which role and tenant, and how much (size and rate); the
key functions of the SQL API as the roles that call them."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from psycopg import sql

from agent_memory import cli
from agent_memory.http.service import AdministratorLogin, Limits, Service

SAID = {"messages": [{"role": "user", "content": "The staging password rotates monthly."}], "enrich": "none"}


def stored_sessions(db) -> int:
    return db.execute("select count(*) from memory.sessions").fetchone()[0]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer amk_" + "0" * 64}, {"Authorization": "Basic dXNlcjpwYXNz"}, {"X-API-Key": "x"}],
    ids=["none", "unknown", "other scheme", "unknown x-api-key"],
)
def test_a_request_without_a_good_key_gets_401_and_writes_nothing(served, headers):
    with served.client(**headers) as client:
        answer = client.post("/v1/sessions/s/messages", json=SAID)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"
    assert answer.json()["error"] in ("no_api_key", "bad_api_key")
    assert answer.json()["detail"].startswith("agent_memory: ")
    assert stored_sessions(served.db) == 0


def test_a_revoked_or_expired_key_gets_401_from_the_next_request(served):
    key = served.key("acme")
    key_id = served.db.execute("select max(key_id) from memory.list_api_keys()").fetchone()[0]
    with served.client(key) as client:
        assert client.get("/v1/stats").status_code == 200
        assert served.db.execute("select memory.revoke_api_key(%s)", (key_id,)).fetchone()[0]
        assert client.get("/v1/stats").status_code == 401
    past = datetime.now(timezone.utc) - timedelta(seconds=1)
    with served.client(served.key("acme", expires_at=past)) as client:
        assert client.get("/v1/stats").json()["error"] == "bad_api_key"
    listed = served.db.execute(
        "select revoked_at, last_used_at from memory.list_api_keys() where key_id = %s", (key_id,)
    ).fetchone()
    assert listed[0] is not None and listed[1] is not None


def test_mem0s_token_scheme_and_x_api_key_are_taken(served):
    key = served.key("acme")
    for headers in ({"Authorization": f"Token {key}"}, {"X-API-Key": key}):
        with served.client(**headers) as client:
            assert client.get("/v1/whoami").json()["tenant_id"] == "acme"


def test_a_body_over_the_keys_size_gets_413_whether_announced_or_chunked(served):
    key = served.key("acme", max_request_bytes=1000)
    big = {"messages": [{"role": "user", "content": "x" * 2000}]}
    with served.client(key) as client:
        answer = client.post("/v1/sessions/big/messages", json=big)
        assert answer.status_code == 413
        assert "1000 bytes" in answer.json()["detail"]

        def chunks():
            yield b'{"messages": [{"role": "user", "content": "'
            for _ in range(20):
                yield b"y" * 100
            yield b'"}]}'

        chunked = client.post(
            "/v1/sessions/big/messages", content=chunks(), headers={"content-type": "application/json"}
        )
        assert chunked.status_code == 413
        assert client.post("/v1/sessions/small/messages", json=SAID).status_code == 200
    assert stored_sessions(served.db) == 1


def test_more_requests_than_the_keys_rate_get_429_with_retry_after(served):
    key = served.key("acme", requests_per_minute=3)
    with served.client(key) as client:
        assert [client.get("/v1/stats").status_code for _ in range(3)] == [200, 200, 200]
        refused = client.get("/v1/stats")
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused.headers["retry-after"]) <= 20
    with served.client(served.key("acme")) as other:  # the limit is the key's, not the tenant's
        assert other.get("/v1/stats").status_code == 200


def test_a_read_only_key_reads_and_may_not_write(served):
    with served.client(served.key("acme", may_write=False)) as client:
        assert client.get("/v1/memories").status_code == 200
        refused = client.post("/v1/memories", json={"content": "Tea at four"})
        assert refused.status_code == 403
        assert refused.json()["error"] == "read_only_key"
        assert client.get("/v1/whoami").json()["may_write"] is False
    assert served.db.execute("select count(*) from memory.memories").fetchone()[0] == 0


def test_a_key_of_an_app_role_names_its_tenant_per_request(served):
    served.logins.create(grant="memory_app")
    app_role = served.logins.names[-1]
    served.db.execute(sql.SQL("grant {} to memory_http").format(sql.Identifier(app_role)))
    key = served.key(None, role=app_role)
    with served.client(key) as client:
        assert client.get("/v1/stats").json()["error"] == "no_tenant"
        committed = client.post("/v1/sessions/s/messages", json=SAID, headers={"X-Agent-Memory-Tenant": "globex"})
        assert committed.status_code == 200
        assert client.get("/v1/whoami", headers={"X-Agent-Memory-Tenant": "globex"}).json()["tenant_id"] == "globex"
    assert served.db.execute("select tenant_id from memory.sessions").fetchall() == [("globex",)]
    with served.client(served.key("acme")) as bound:
        refused = bound.get("/v1/stats", headers={"X-Agent-Memory-Tenant": "globex"})
    assert refused.status_code == 403
    assert refused.json()["error"] == "wrong_tenant"


def test_a_role_the_server_may_no_longer_take_is_a_503_that_says_what_to_grant(served):
    key = served.key("acme")
    role = served.role("acme")
    served.db.execute(sql.SQL("revoke {} from memory_http").format(sql.Identifier(role)))
    with served.client(key) as client:
        answer = client.get("/v1/stats")
    assert answer.status_code == 503
    assert f"grant {role} to memory_http" in answer.json()["detail"]


def test_create_api_key_refuses_roles_a_key_must_not_take(served):
    db = served.db
    role = served.role("acme")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="bound to tenant acme, not globex"):
        db.execute("select memory.create_api_key('globex', quote_ident(%s)::regrole)", (role,))
    served.logins.create(grant="memory_tenant")
    unbound = served.logins.names[-1]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="bound to no tenant"):
        db.execute("select memory.create_api_key('acme', quote_ident(%s)::regrole)", (unbound,))
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="needs a memory_app role"):
        db.execute("select memory.create_api_key(null, quote_ident(%s)::regrole)", (unbound,))
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="administers agent_memory"):
        db.execute("select memory.create_api_key('acme', 'postgres')")
    served.logins.create(tenant="acme")
    not_granted = served.logins.names[-1]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=f"grant {not_granted} to memory_http"):
        db.execute("select memory.create_api_key('acme', quote_ident(%s)::regrole)", (not_granted,))
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="must be positive"):
        db.execute("select memory.create_api_key('acme', quote_ident(%s)::regrole, requests_per_minute => 0)", (role,))
    with pytest.raises(psycopg.errors.NoDataFound, match="no API key 12345"):
        db.execute("select memory.revoke_api_key(12345)")
    assert db.execute("select count(*) from memory.list_api_keys()").fetchone()[0] == 0


def test_only_administrators_make_keys_and_only_the_server_looks_them_up(served, logins):
    key = served.key("acme")
    with served.client(key) as client:
        assert client.post("/v1/sessions/s/messages", json=SAID).status_code == 200
    tenant = logins.create(tenant="acme")
    for call in (
        "select memory.create_api_key('acme', current_user::regrole)",
        "select memory.list_api_keys()",
        "select memory.revoke_api_key(1)",
        f"select memory.authenticate_api_key('{key}')",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            tenant.execute(call)
    server = logins.create(grant="memory_http")
    assert server.execute("select role_name from memory.authenticate_api_key(%s)", (key,)).fetchone()[0]
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        server.execute("select memory.list_api_keys()")
    with pytest.raises(psycopg.errors.RaiseException, match="has no tenant"):  # the server's own login reads nothing
        server.execute("select count(*) from memory.turns")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        server.execute("select * from memory_internal.api_keys")


def test_keys_cli_makes_the_role_binds_it_and_revokes(served, capsys):
    tenant = "cli-" + uuid.uuid4().hex[:8]
    dsn = f"postgresql://postgres@/{served.db.info.dbname}?host={served.db.info.host}&port={served.db.info.port}"
    try:
        assert cli.main(["--dsn", dsn, "--tenant", tenant, "keys", "create", "--label", "ci", "--read-only"]) == 0
        key = capsys.readouterr().out.strip().splitlines()[-1]
        assert key.startswith("amk_")
        with served.client(key) as client:
            assert client.get("/v1/whoami").json() == {
                "tenant_id": tenant,
                "role": f"http_cli_{tenant[4:]}_" + __import__("hashlib").sha256(tenant.encode()).hexdigest()[:8],
                "key_id": 1,
                "may_write": False,
            }
        assert cli.main(["--dsn", dsn, "keys", "list"]) == 0
        assert "ci" in capsys.readouterr().out
        assert cli.main(["--dsn", dsn, "keys", "revoke", "1"]) == 0
        with served.client(key) as client:
            assert client.get("/v1/whoami").status_code == 401
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            for (role,) in conn.execute("select role_name from memory.tenant_roles where tenant_id = %s", (tenant,)):
                conn.execute("delete from memory.tenant_roles where role_name = %s", (role,))
                conn.execute(sql.SQL("drop role {}").format(sql.Identifier(role)))


def test_a_login_that_administers_may_not_serve_keys(served, dsn):
    """Row-level security lets a superuser or a memory_admin login see every tenant whatever role it takes: such
    a login is refused before it serves a key, by the server at start and by the database."""
    service = Service.connect(dsn, Limits())

    async def start() -> None:
        await service.pool.open()
        try:
            await service.refuse_an_administrator()
        finally:
            await service.pool.close()

    with pytest.raises(AdministratorLogin, match="logged in as postgres, who administers agent_memory"):
        asyncio.run(start())
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="administers agent_memory"):
        served.db.execute("select memory.authenticate_api_key(%s)", (served.key("acme"),))
