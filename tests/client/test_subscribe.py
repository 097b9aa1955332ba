"""What arrives, as a tenant-bound application sees it: Memory.subscribe and AsyncMemory.subscribe yield the
tenant's commits and shared memories as their transactions commit, `agent-memory watch --shared` prints them a
line each, and `agent-memory share` and `remember --shared` share a memory."""

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
from psycopg import sql

from agent_memory import AsyncMemory, Memory
from agent_memory.results import Notification

CLI = str(Path(sys.executable).parent / "agent-memory")


def listening(db, count=1):
    """Waits until `count` sessions of the server are listening on a channel (their last statement a LISTEN)."""
    for _ in range(100):
        (found,) = db.execute(
            "select count(*) from pg_stat_activity where datname = current_database() and query ilike 'listen %%'"
        ).fetchone()
        db.commit()
        if found >= count:
            return
        time.sleep(0.1)
    raise AssertionError("no subscriber started listening")


def listen(db, dsn, seconds, **options):
    """Memory.subscribe in a thread for `seconds`, once it listens; what it yielded is in the returned list once
    joined."""
    got: list[Notification] = []

    def run():
        with Memory(dsn) as memory:
            got.extend(memory.subscribe(timeout=seconds, **options))

    thread = threading.Thread(target=run)
    thread.start()
    listening(db)
    return thread, got


def test_an_agent_hears_its_own_commits_and_what_the_others_share(db, tenant_dsn):
    thread, got = listen(db, tenant_dsn, 4, agent_id="coder")
    with Memory(tenant_dsn) as memory:
        shared = memory.remember("Releases are tagged on main", agent_id="planner", enrich="none", shared=True)
        memory.remember("planner's own note", agent_id="planner", enrich="none")
        memory.commit("s1", [{"role": "user", "content": "hi"}], agent_id="coder", enrich="none")
        memory.commit("s2", [{"role": "user", "content": "hi"}], agent_id="planner", enrich="none")
        assert memory.share(shared.memory_id, shared=False).shared is False
    thread.join()
    assert got == [
        Notification("memory", "planner", True, memory_id=shared.memory_id, kind="fact", outcome="created"),
        Notification("session", "coder", False, session_id="s1", turns=1),
        Notification("memory", "planner", False, memory_id=shared.memory_id, kind="fact", outcome="unshared"),
    ]


def test_async_subscribe_yields_the_same(db, tenant_dsn):
    async def main():
        async with AsyncMemory(tenant_dsn) as listener, AsyncMemory(tenant_dsn) as writer:
            events = listener.subscribe(shared_only=True, timeout=3)
            first = asyncio.ensure_future(events.__anext__())
            await asyncio.to_thread(listening, db)
            # A payload some other role sends on the channel is skipped, not the end of the subscription.
            async with await psycopg.AsyncConnection.connect(tenant_dsn, autocommit=True) as other:
                (channel,) = await (await other.execute("select memory.notification_channel()")).fetchone()
                await other.execute(sql.SQL("notify {}, 'not an event'").format(sql.Identifier(channel)))
            kept = await writer.remember("Builds run on ci-large", agent_id="planner", enrich="none", shared=True)
            event = await first
            await events.aclose()
            return kept, event

    kept, event = asyncio.run(main())
    assert event == Notification("memory", "planner", True, memory_id=kept.memory_id, kind="fact", outcome="created")


def test_watch_shared_prints_what_the_fleet_shares(db, tenant_dsn):
    env = {**os.environ, "DATABASE_URL": tenant_dsn}
    # Until its three events have come (a fixed window of a few seconds was too short on a busy machine for the
    # five commands that make them); --seconds only bounds a failure.
    watch = subprocess.Popen(
        [CLI, "watch", "--shared", "--agent-id", "coder", "--seconds", "120"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    listening(db)

    def cli(*args):
        done = subprocess.run([CLI, *args], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    kept = json.loads(cli("--json", "remember", "Staging is on port 6543", "--agent-id", "planner", "--shared"))
    other = json.loads(cli("--json", "remember", "Only mine", "--agent-id", "planner"))
    cli("remember", "coder shares too", "--agent-id", "coder", "--shared")
    assert cli("share", str(other["memory_id"])) == f"memory {other['memory_id']}: shared with every agent\n"
    assert cli("share", str(other["memory_id"]), "--unshare") == f"memory {other['memory_id']}: planner's alone\n"
    assert watch.stdout is not None
    lines = [watch.stdout.readline().rstrip("\n") for _ in range(3)]
    watch.terminate()  # what it printed after the three comes out below, and is none
    rest, _ = watch.communicate(timeout=30)
    assert lines + rest.splitlines() == [
        f"planner: memory {kept['memory_id']} (fact) created (shared)",
        f"planner: memory {other['memory_id']} (fact) shared (shared)",
        f"planner: memory {other['memory_id']} (fact) unshared",
    ]
