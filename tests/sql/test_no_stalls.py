"""One tenant, or a stranger, cannot stop the others: part of the adversarial isolation suite. The locks the
API takes turns on are rows only its owner can lock, not advisory locks any role may take; the shared
worker passes over a session another transaction holds instead of waiting for it.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from psycopg.types.json import Json

SAID = [{"role": "user", "content": "the release train leaves on Thursday"}]


@pytest.fixture
def tenants(db, logins) -> tuple[psycopg.Connection, psycopg.Connection]:
    """Two bound tenant logins, acme and globex, beside the superuser `db` (autocommit, as the worker runs)."""
    db.commit()
    db.autocommit = True
    return logins.create(tenant="acme"), logins.create(tenant="globex")


def maintained(db: psycopg.Connection) -> str:
    db.execute("call memory.maintain()")
    return db.execute("select status from memory.maintenance_runs order by run_id desc limit 1").fetchone()[0]


def test_a_strangers_advisory_locks_stop_neither_maintenance_nor_remember(db, logins, capsys):
    db.commit()
    db.autocommit = True
    stranger = logins.create(grant=None)  # only CONNECT
    acme = logins.create(tenant="acme")
    # The keys maintenance and remember(key => ...) used to serialize on, and a spread of others.
    keys = stranger.execute(
        "select array[hashtext('agent_memory.maintain')::bigint,"
        " hashtextextended(concat_ws(chr(31), 'acme', 'default', 'deploy.day'), 0)] || array_agg(g::bigint)"
        " from generate_series(1, 2000) as g"
    ).fetchone()[0]
    stranger.execute("select count(pg_advisory_lock(k)) from unnest(%s::bigint[]) as k", (keys,))
    acme.execute("set statement_timeout = '10s'")
    acme.execute("select memory.remember('We deploy on Thursdays.', key => 'deploy.day')")
    acme.execute("select memory.remember('We deploy on Fridays.', key => 'deploy.day')")
    assert maintained(db) == "done"
    held = stranger.execute("select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()")
    with capsys.disabled():
        print(f"\n  stranger holding {held.fetchone()[0]} advisory locks: maintenance done, remember not blocked")


def test_a_tenant_holding_its_session_does_not_stall_the_shared_worker(db, tenants):
    acme, globex = tenants
    for tenant in (acme, globex):
        tenant.execute("select memory.commit('plans', %s)", (Json(SAID),))
    # acme judges its session in a transaction it keeps open: the session's row is locked until it ends.
    acme.autocommit = False
    acme.execute("select memory.give_feedback('helpful', session_id => 'plans')")
    db.execute("set statement_timeout = '20s'")
    started = time.monotonic()
    processed, failed = db.execute("call memory.work(10)").fetchone()
    assert (processed, failed) == (1, 0) and time.monotonic() - started < 10
    jobs = dict(db.execute("select tenant_id, status from memory.jobs"))
    assert jobs == {"acme": "queued", "globex": "done"}
    assert db.execute("select attempts from memory.jobs where tenant_id = 'acme'").fetchone() == (0,)
    acme.commit()
    db.execute("update memory.jobs set run_after = now() where tenant_id = 'acme'")
    assert db.execute("call memory.work(10)").fetchone() == (1, 0)


def test_a_tenants_open_transaction_makes_a_job_wait_at_most_five_seconds(db, tenants):
    # A tenant that keeps its own statistics rows locked (an enrichment in a transaction it leaves open) makes
    # the worker's job of that tenant give up after five seconds and wait for a later run, its attempt not
    # counted; other tenants go on.
    acme, globex = tenants
    acme.execute("select memory.commit('first', %s, enrich => 'now')", (Json(SAID),))  # the model is recorded
    for tenant in (acme, globex):
        tenant.execute("select memory.commit('plans', %s)", (Json(SAID),))
    acme.autocommit = False
    acme.execute("select memory.commit('open', %s, enrich => 'now')", (Json(SAID),))
    result: list[tuple] = []
    worker = threading.Thread(target=lambda: result.append(db.execute("call memory.work(10)").fetchone()))
    started = time.monotonic()
    worker.start()
    worker.join(30)
    elapsed = time.monotonic() - started
    acme.rollback()
    assert not worker.is_alive() and elapsed < 20
    assert result == [(1, 0)]  # globex's job done, acme's put back
    status, attempts, error = db.execute(
        "select status, attempts, last_error from memory.jobs where tenant_id = 'acme'"
    ).fetchone()
    assert (status, attempts) == ("queued", 0) and "lock timeout" in error
    assert db.execute("select status from memory.jobs where tenant_id = 'globex'").fetchone() == ("done",)


@pytest.mark.parametrize("mode", ["row share", "share", "exclusive", "access exclusive"])
def test_a_tenant_role_bound_to_no_tenant_cannot_lock_a_table(db, logins, mode):
    unbound = logins.create(grant="memory_tenant")
    unbound.autocommit = False
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        unbound.execute(f"lock table memory.sessions in {mode} mode")


def test_a_model_recorded_in_an_open_transaction_makes_others_wait_five_seconds_at_most(tenants):
    # The first enrichment with a new embedding model records it in a row every tenant shares; a tenant that
    # keeps that transaction open makes another tenant's enrichment wait for it, at most five seconds.
    acme, globex = tenants
    acme.autocommit = False
    acme.execute("select memory.commit('first', %s, enrich => 'now')", (Json(SAID),))
    started = time.monotonic()
    with pytest.raises(psycopg.errors.LockNotAvailable, match="is being recorded by another transaction; try again"):
        globex.execute("select memory.commit('plans', %s, enrich => 'now')", (Json(SAID),))
    assert time.monotonic() - started < 10
    acme.commit()
    assert globex.execute("select turns_added from memory.commit('plans', %s, enrich => 'now')", (Json(SAID),))


def test_a_tenant_forgetting_in_an_open_transaction_does_not_stall_the_shared_worker(db, tenants):
    acme, globex = tenants
    for tenant in (acme, globex):
        tenant.execute("select memory.commit('plans', %s)", (Json(SAID),))
    acme.autocommit = False
    acme.execute("select memory.forget('plans')")  # its session and its job rows stay locked until it ends
    db.execute("set statement_timeout = '20s'")
    started = time.monotonic()
    assert db.execute("call memory.work(10)").fetchone() == (1, 0)
    assert time.monotonic() - started < 10
    assert db.execute("select status from memory.jobs where tenant_id = 'globex'").fetchone() == ("done",)
    acme.rollback()
