"""pg_dump and pg_restore of a database with memory in it: both restores succeed, the restored database
holds the same rows and answers recall the same, and commits go on after it."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import SERVER
from psycopg import sql
from psycopg.types.json import Json

QUERIES = ["deploy pipeline canary", "who likes tea", "database backup failed"]


def tables(conn: psycopg.Connection) -> list[str]:
    return [
        name
        for (name,) in conn.execute(
            "select c.oid::regclass::text from pg_class as c"
            " where c.relnamespace = 'memory'::regnamespace and c.relkind = 'r' order by 1"
        )
    ]


def snapshot(conn: psycopg.Connection) -> dict:
    """Row counts of every table, and the answers to some queries (turn ids and scores)."""
    counts = {name: conn.execute(f"select count(*) from {name}").fetchone()[0] for name in tables(conn)}
    answers = {
        query: conn.execute(
            "select turn_id, round(score::numeric, 6) from memory.recall(%s, k => 5)", (query,)
        ).fetchall()
        for query in QUERIES
    }
    lexicon = conn.execute("select sum(chunks), count(*) from memory.lexicon").fetchone()
    return {"counts": counts, "answers": answers, "lexicon": lexicon}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(SERVER.bindir / args[0]),
            "-h",
            str(SERVER.socket_dir),
            "-p",
            str(SERVER.port),
            "-U",
            "postgres",
            *args[1:],
        ],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def dumped(db, tmp_path) -> Iterator[tuple[dict, Path, list[str]]]:
    """A database with two tenants' enriched sessions, feedback, a remembered fact and a signal of its
    own that reads a feature of its own, dumped (custom format); its snapshot, the dump, and a list to name
    databases to drop."""
    db.commit()
    db.autocommit = True
    for tenant in ("acme", "globex"):
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        for n, text in enumerate(
            [
                "the deploy pipeline needs a canary stage",
                "the database backup failed on friday",
                "rollback worked after an hour",
            ]
        ):
            db.execute(
                "select memory.commit(%s, %s, enrich => 'now')",
                (
                    f"s{n}",
                    Json([{"role": "user", "content": text, "name": "ann"}, {"role": "assistant", "content": "ok"}]),
                ),
            )
        db.execute("select memory.remember(%s, 'preference')", (f"{tenant}: ann likes tea",))
    db.execute("reset memory.tenant_id")
    db.execute("select memory.commit('d', %s)", (Json([{"role": "user", "content": "the default tenant speaks"}]),))
    turn = db.execute("select min(turn_id) from memory.turns where tenant_id = 'default'").fetchone()[0]
    db.execute("select * from memory.give_feedback('helpful', turn_id => %s)", (turn,))
    db.execute("select memory.commit('gone', %s)", (Json([{"role": "user", "content": "soon forgotten"}]),))
    db.execute("select * from memory.forget('gone')")  # a tombstone and a forgotten session to carry over
    db.execute("select memory.define_feature('opening', 'chunk', 'boolean', 't.position = 0', 'A session''s first.')")
    db.execute(
        "create function public.signal_early(c memory.recall_candidate, s jsonb) returns double precision"
        " language sql immutable as 'select case when (c).opening then 1 else 0 end'"
    )
    db.execute(
        "select memory.define_signal('early', 'boost', 'public.signal_early(memory.recall_candidate, jsonb)', 0.1,"
        " 'The first turn of a session.')"
    )
    dump = tmp_path / "memory.dump"
    done = run("pg_dump", "-Fc", "-f", str(dump), db.info.dbname)
    assert done.returncode == 0, done.stderr
    made: list[str] = []
    try:
        yield snapshot(db), dump, made
    finally:
        with psycopg.connect(SERVER.url(), autocommit=True) as admin:
            for name in made:
                admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


@pytest.mark.parametrize("options", [[], ["--single-transaction", "--exit-on-error"]], ids=["plain", "single"])
def test_a_dump_restores_to_the_same_memory_and_commits_go_on(dumped, options, capsys):
    before, dump, made = dumped
    name = f"am_restore_{uuid.uuid4().hex[:8]}"
    made.append(name)
    with psycopg.connect(SERVER.url(), autocommit=True) as admin:
        admin.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    done = run("pg_restore", "-d", name, *options, str(dump))
    assert (done.returncode, done.stderr) == (0, "")
    with psycopg.connect(SERVER.url(name), autocommit=True) as restored:
        assert snapshot(restored) == before
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="session gone of agent default"):
            restored.execute("select memory.commit('gone', %s)", (Json([{"role": "user", "content": "back"}]),))
        for n in range(1000):
            restored.execute(
                "select memory.commit(%s, %s, enrich => 'none')",
                (f"after-{n}", Json([{"role": "user", "content": f"commit {n} after the restore"}])),
            )
        assert (
            restored.execute("select count(*) from memory.sessions where session_id like 'after-%'").fetchone()[0]
            == 1000
        )
    with capsys.disabled():
        print(f"\n  pg_restore {' '.join(options) or '(plain)'}: same rows and answers, then 1000 commits")


def test_every_sequence_is_dumped_and_no_derived_table_is(db):
    registered = dict(
        db.execute(
            "select c::regclass::text, coalesce(w, '') from pg_extension as e,"
            " unnest(e.extconfig, e.extcondition) as u (c, w) where e.extname = 'agent_memory'"
        ).fetchall()
    )
    sequences = [
        name
        for (name,) in db.execute(
            "select oid::regclass::text from pg_class where relnamespace = 'memory'::regnamespace and relkind = 'S'"
        )
    ]
    assert sequences and all(registered.get(name) == "" for name in sequences)
    assert {name: registered[name] for name in ("memory.speakers", "memory.lexicon", "memory.corpus")} == {
        "memory.speakers": "where false",
        "memory.lexicon": "where false",
        "memory.corpus": "where false",
    }
