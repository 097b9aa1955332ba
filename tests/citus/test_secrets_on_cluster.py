"""Secrets and API keys on a Citus cluster. A superuser stores a secret through the coordinator, and it is on
every node, where the owner's code on the tenant's worker sends it to its origin and nowhere else: no attempt of a
bound login, through the coordinator or connected to any worker, gets it to a listener of its own. An
administrator, who may not write the secrets itself, is told who may. The HTTP server's API keys are the
coordinator's, where the server connects: an administrator makes one, the server's login looks it up (and marks
it used) and it is revoked there, with no connection to another node."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg
import pytest
from cluster import COORDINATOR, NODES, WORKERS, CitusNode, tenants_on
from exfiltration import attempt, exfiltration_attempts
from http_stub import Stub
from psycopg import sql
from psycopg.types.json import Jsonb

SECRET = "sk-cluster-" + uuid.uuid4().hex
SAID = [{"role": "user", "content": "The rerank service runs beside the staging database in Frankfurt."}]


@pytest.fixture
def tenant(coordinator) -> tuple[str, CitusNode]:
    """A tenant with an enriched session, and the worker that holds it."""
    worker = WORKERS[0]
    (name,) = tenants_on(coordinator, worker, 1, "secret")
    commit = {"session_id": "infra", "messages": SAID, "enrich": "now"}
    coordinator.execute("select memory.call(%s, 'commit', %s)", (name, Jsonb(commit)))
    return name, worker


@pytest.fixture
def bound(coordinator, admin, tenant) -> Iterator[str]:
    """A login bound to the tenant (by the administrator, through the coordinator)."""
    login = f"am_secret_{uuid.uuid4().hex[:8]}"
    coordinator.execute(sql.SQL("create role {} login").format(sql.Identifier(login)))
    coordinator.execute(sql.SQL("grant memory_tenant to {}").format(sql.Identifier(login)))
    with COORDINATOR.connect(user=admin) as conn:
        conn.execute("select memory.bind_tenant_role(%s, %s)", (login, tenant[0]))
    yield login
    coordinator.execute("delete from memory.tenant_roles where role_name = %s", (login,))
    coordinator.execute(sql.SQL("drop role {}").format(sql.Identifier(login)))


@pytest.fixture
def secrets(coordinator) -> Iterator[None]:
    """The owner's keys for OpenAI and Cohere, stored by the superuser through the coordinator."""
    coordinator.execute("select memory.set_secret('openai_api_key', %s, 'https://api.openai.com/v1')", (SECRET,))
    coordinator.execute("select memory.set_secret('rerank_api_key', %s, 'https://api.cohere.com')", (SECRET,))
    yield
    coordinator.execute("delete from memory_internal._secrets where name in ('openai_api_key', 'rerank_api_key')")


def test_a_superuser_stores_a_secret_on_every_node_and_the_tenants_worker_sends_it_to_its_origin(
    coordinator, admin, tenant
):
    name, _ = tenant
    with (
        COORDINATOR.connect(user=admin) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="on a Citus cluster a superuser stores secrets"),
    ):
        conn.execute("select memory.set_secret('rerank_api_key', 'sk-admin', 'https://api.cohere.com')")
    with Stub() as reranker:
        coordinator.execute("select memory.set_secret('rerank_api_key', %s, %s)", (SECRET, reranker.base_url))
        try:
            for node in NODES:
                with node.connect() as conn:
                    stored = conn.execute(
                        "select origin from memory_internal._secrets where name = 'rerank_api_key'"
                    ).fetchone()
                assert stored == (f"{urlsplit(reranker.base_url).scheme}://{urlsplit(reranker.base_url).netloc}",)
            with COORDINATOR.connect(user=admin) as conn:  # the administrator's settings for the tenant
                conn.execute(
                    "insert into memory.config (tenant_id, key, value) values (%s, 'rerank', '\"http\"'),"
                    " (%s, 'rerank_url', %s)",
                    (name, name, Jsonb(reranker.rerank_url)),
                )
            hits = coordinator.execute("select memory.call(%s, 'recall', %s)", (name, Jsonb({"query": "rerank"})))
            assert "Frankfurt" in hits.fetchone()[0]["content"]
            assert [auth for _, _, auth in reranker.requests] == [f"Bearer {SECRET}"]
        finally:
            coordinator.execute("delete from memory.config where tenant_id = %s", (name,))
            coordinator.execute("delete from memory_internal._secrets where name = 'rerank_api_key'")


def test_no_secret_reaches_a_listener_from_a_bound_login_on_any_node(coordinator, tenant, bound, secrets, capsys):
    name, worker = tenant
    # The login calls the API on the tenant's worker, and through the coordinator: what it is refused below is
    # refused for what the attempt asks.
    with worker.connect(user=bound) as conn:
        assert "Frankfurt" in conn.execute("select content from memory.recall('rerank')").fetchone()[0]
    with COORDINATOR.connect(user=bound) as conn:
        hits = conn.execute("select memory.call(%s, 'recall', %s)", (name, Jsonb({"query": "rerank"})))
        assert "Frankfurt" in hits.fetchone()[0]["content"]
    secret_tables = coordinator.execute(
        "select shard_name(s.logicalrelid, s.shardid) from pg_dist_shard as s"
        " where s.logicalrelid = 'memory_internal._secrets'::regclass"
    ).fetchall()
    with Stub() as listener:
        attempts = exfiltration_attempts(listener.base_url)
        attempts += [(f"select * from {table}", ()) for (table,) in secret_tables]
        answers = []
        for node in (COORDINATOR, *WORKERS):
            with node.connect(user=bound) as conn:
                answers += [attempt(conn, query, params) for query, params in attempts]
        with COORDINATOR.connect(user=bound) as conn:  # the calls a cluster routes, with the endpoints in them
            for weights in (
                {"rerank": "http", "rerank_url": listener.rerank_url},
                {"openai_base_url": listener.base_url, "embedder": "openai"},
            ):
                call = {"query": "rerank", "weights": weights}
                answers.append(attempt(conn, "select memory.call(%s, 'recall', %s)", (name, Jsonb(call))))
        received = [auth for _, _, auth in listener.requests if auth and SECRET in auth]
    assert received == []
    assert listener.requests == []
    assert all(SECRET not in repr(rows) for rows in answers)
    with capsys.disabled():
        print(f"\n  {len(answers)} secret-exfiltration attempts on 3 nodes: {len(received)} secrets received")


def test_the_http_servers_keys_are_the_coordinators_made_used_and_revoked_there(coordinator, admin, tenant, bound):
    name, _ = tenant
    server = f"am_http_{uuid.uuid4().hex[:8]}"
    coordinator.execute(sql.SQL("create role {} login in role memory_http").format(sql.Identifier(server)))
    coordinator.execute(sql.SQL("grant {} to memory_http").format(sql.Identifier(bound)))
    try:
        with COORDINATOR.connect(user=admin) as conn:
            key_id, key = conn.execute(
                "select * from memory.create_api_key(%s, %s, 'cluster')", (name, bound)
            ).fetchone()
        with COORDINATOR.connect(user=server) as conn:
            found = conn.execute("select tenant_id, role_name::text from memory.authenticate_api_key(%s)", (key,))
            assert found.fetchall() == [(name, bound)]
        with COORDINATOR.connect(user=admin) as conn:
            (used,) = conn.execute(
                "select last_used_at is not null from memory.list_api_keys(%s) where key_id = %s", (name, key_id)
            ).fetchone()
            assert used
            conn.execute("select memory.revoke_api_key(%s)", (key_id,))
        with COORDINATOR.connect(user=server) as conn:
            assert conn.execute("select * from memory.authenticate_api_key(%s)", (key,)).fetchall() == []
        for node in WORKERS:  # a worker's keys are its own: none, and none is made there
            with node.connect() as conn:
                assert conn.execute("select count(*) from memory_internal.api_keys").fetchone() == (0,)
            with (
                node.connect(user=admin) as conn,
                pytest.raises(psycopg.errors.FeatureNotSupported, match="API keys are the coordinator's"),
            ):
                conn.execute("select * from memory.create_api_key(%s, %s, 'worker')", (name, bound))
    finally:
        coordinator.execute(sql.SQL("revoke {} from memory_http").format(sql.Identifier(bound)))
        coordinator.execute("delete from memory_internal.api_keys where role_name = %s", (bound,))
        coordinator.execute(sql.SQL("drop role {}").format(sql.Identifier(server)))


def stored_with_workers_logging(coordinator: psycopg.Connection, secret: str, quiet: bool) -> list[bool]:
    """Stores a secret while every worker logs each modification (log_statement = 'mod'); whether each worker's
    log then holds it. quiet: as SCALING.md says to, with the workers' logging turned off for the transaction."""
    for worker in WORKERS:
        with worker.connect() as conn:
            conn.execute("alter system set log_statement = 'mod'")
            conn.execute("select pg_reload_conf()")
    try:
        with COORDINATOR.connect() as conn:  # (a session of its own: new connections to the workers)
            conn.autocommit = False
            if quiet:
                conn.execute("set citus.propagate_set_commands = 'local'")
                conn.execute("set local log_statement = 'none'")
            conn.execute("select memory.set_secret('quiet_api_key', %s, 'https://api.example.com')", (secret,))
            conn.commit()
    finally:
        for worker in WORKERS:
            with worker.connect() as conn:
                conn.execute("alter system reset log_statement")
                conn.execute("select pg_reload_conf()")
        coordinator.execute("delete from memory_internal._secrets where name = 'quiet_api_key'")
    return [secret in worker.log_file.read_text(errors="replace") for worker in WORKERS]


def test_a_secret_stored_as_the_docs_say_reaches_no_workers_log(coordinator):
    assert stored_with_workers_logging(coordinator, "sk-logged-" + uuid.uuid4().hex, quiet=False) == [True, True]
    assert stored_with_workers_logging(coordinator, "sk-quiet-" + uuid.uuid4().hex, quiet=True) == [False, False]
