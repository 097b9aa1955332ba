"""Cold out of the indexes: chunks, their vectors and session vectors say whether their item is cold, in step with
the tiers whatever moves them, and a recall that leaves cold out reads only the indexes of what is not cold."""

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

TOPICS = [
    "The cat knocked the blue vase off the shelf again.",
    "Payroll runs on the last Thursday of every month.",
    "The train to Porto leaves at seven in the morning.",
    "The greenhouse tomatoes need watering twice a day in July.",
    "Standup moved to half past nine from next week.",
]
NO_PROMOTION = Jsonb({"tier_promote_on_recall": False})
EVERY_TIER = ["hot", "warm", "cold"]
# The graphs of what is cold and of what is not; the full-text indexes of what is cold. (Which index the planner
# takes for the full-text lists of a tenant this small is its choice: it reads the tenant's few rows by key.)
COLD_INDEXES = [
    "chunks_tsv_cold",
    "summaries_tsv_cold",
    "chunk_embeddings_hnsw_cold_6136536182",
    "session_embeddings_hnsw_cold_6136536182",
]
WARM_GRAPHS = ["chunk_embeddings_hnsw_6136536182", "session_embeddings_hnsw_6136536182"]


def commit(conn, session, text):
    conn.execute("select memory.commit(%s, %s, enrich => 'now')", (session, Json([{"role": "user", "content": text}])))


def write(db, statement, params=None):
    db.execute(statement, params)
    db.commit()


def out_of_step(db, tenant):
    """Rows whose cold flag disagrees with their item's tier, and how many rows are flagged cold."""
    (wrong,) = db.execute(
        """
        select (select count(*) from memory.chunks as c where c.tenant_id = %(t)s
                    and c.cold <> memory_internal._turn_is_cold(c.tenant_id, c.session_key, c.turn_id))
             + (select count(*) from memory.chunk_embeddings as e
                join memory.chunks as c using (tenant_id, turn_id, chunk_no)
                where e.tenant_id = %(t)s and e.cold <> c.cold)
             + (select count(*) from memory.session_embeddings as e
                join memory.sessions as s using (tenant_id, session_key)
                where e.tenant_id = %(t)s and e.cold <> (s.tier = 'cold'))
             + (select count(*) from memory.summaries as m
                join memory.sessions as s using (tenant_id, session_key)
                where m.tenant_id = %(t)s and m.cold <> (s.tier = 'cold'))
        """,
        {"t": tenant},
    ).fetchone()
    (flagged,) = db.execute(
        "select (select count(*) from memory.chunks where tenant_id = %(t)s and cold)"
        " + (select count(*) from memory.chunk_embeddings where tenant_id = %(t)s and cold)"
        " + (select count(*) from memory.session_embeddings where tenant_id = %(t)s and cold)"
        " + (select count(*) from memory.summaries where tenant_id = %(t)s and cold)",
        {"t": tenant},
    ).fetchone()
    return wrong, flagged


@pytest.fixture
def big(db, logins):
    """Tenant big, searched approximately (threshold three chunks), every vector in the graphs, s3 cold."""
    db.execute("insert into memory.config (tenant_id, key, value) values ('big', 'exact_search_max_chunks', '3')")
    db.commit()
    conn = logins.create(tenant="big")
    for number, text in enumerate(TOPICS):
        commit(conn, f"s{number}", text)
    db.execute("call memory.maintain()")
    db.execute("update memory.sessions set tier = 'cold' where tenant_id = 'big' and session_id = 's3'")
    db.commit()
    db.execute("call memory.maintain()")  # s3's vectors, out of the graphs since it went cold, join the cold ones
    db.commit()
    return conn


def test_the_cold_flags_follow_every_move_of_a_tier(db, big):
    # A session gone cold: its chunk, chunk vector, session vector and summary.
    assert out_of_step(db, "big") == (0, 4)
    # A cold memory flags its own words, and a hot one brought back does not.
    (memory,) = big.execute(
        "select memory_id from memory.remember('The tomatoes like the south window.', enrich => 'now')"
    ).fetchone()
    write(db, "update memory.memories set tier = 'cold' where memory_id = %s", (memory,))
    assert out_of_step(db, "big") == (0, 6)
    big.execute("select memory.give_feedback('helpful', memory_id => %s)", (memory,))
    assert out_of_step(db, "big") == (0, 4)
    # A session enriched again while cold writes its words and summary cold.
    db.execute("select set_config('memory.tenant_id', 'big', true)")  # as the worker would, in big
    for table in ("chunks", "summaries"):
        db.execute(
            f"delete from memory.{table} where tenant_id = 'big' and session_key ="
            " (select session_key from memory.sessions where tenant_id = 'big' and session_id = 's3')"
        )
    write(
        db,
        "select memory_internal._enrich_session('big', session_key, false) from memory.sessions"
        " where tenant_id = 'big' and session_id = 's3'",
    )
    assert out_of_step(db, "big") == (0, 4)
    # Recall over every tier brings what it returns back to hot, and a commit brings its session back.
    assert big.execute(
        "select session_id from memory.recall('greenhouse tomatoes', k => 1, tiers => %s)", (EVERY_TIER,)
    ).fetchone() == ("s3",)
    assert out_of_step(db, "big") == (0, 0)
    statistics = "select array_agg(xmin::text order by agent_id) from memory.corpus where tenant_id = 'big'"
    (before,) = db.execute(statistics).fetchone()
    write(db, "update memory.sessions set tier = 'cold' where tenant_id = 'big' and session_id = 's1'")
    assert out_of_step(db, "big") == (0, 4)
    assert db.execute(statistics).fetchone() == (before,)  # a flag is no change to count (nor a lock to take)
    big.execute("select memory.set_summary('s1', 'The signing token, renewed.')")  # the caller's own, cold too
    assert out_of_step(db, "big") == (0, 4)
    commit(big, "s1", "The signing token is renewed every ninety days now.")
    assert out_of_step(db, "big") == (0, 0)
    # Maintenance moving a tenant's sessions down to cold.
    write(db, "select memory_internal._move_tiers('big', now() + interval '400 days')")
    wrong, flagged = out_of_step(db, "big")
    assert wrong == 0 and flagged >= 20


def index_scans(conn, indexes):
    return {
        name: conn.execute("select pg_stat_get_xact_numscans(%s::regclass)", (f"memory.{name}",)).fetchone()[0]
        for name in indexes
    }


def test_a_recall_without_cold_reads_only_the_indexes_of_what_is_not_cold(big):
    # Each recall and the counts of its index scans in one transaction: a backend's counts are flushed at the end
    # of a transaction (at most once a second), and pg_stat_get_xact_numscans reads those not flushed yet.
    query = "select session_id from memory.recall('greenhouse tomatoes watering', weights => %s, tiers => %s)"
    with big.transaction():
        found = [row[0] for row in big.execute(query, (NO_PROMOTION, None))]
        assert "s3" not in found
        assert index_scans(big, COLD_INDEXES) == dict.fromkeys(COLD_INDEXES, 0)
        assert all(scans > 0 for scans in index_scans(big, WARM_GRAPHS).values())
    with big.transaction():
        assert big.execute(query, (NO_PROMOTION, EVERY_TIER)).fetchone() == ("s3",)
        assert all(scans > 0 for scans in index_scans(big, COLD_INDEXES[2:] + WARM_GRAPHS).values())


def test_maintenance_leaves_a_tenants_moves_whose_words_are_held_to_the_next_run(db, big, dsn):
    db.execute(
        "update memory.sessions set updated_at = now() - interval '400 days'"
        " where tenant_id = 'big' and session_id = 's0'"
    )
    db.commit()
    with psycopg.connect(dsn) as holder:  # as enrichment writing s0's chunks would
        holder.execute(
            "select from memory.chunks where tenant_id = 'big' and session_key ="
            " (select session_key from memory.sessions where tenant_id = 'big' and session_id = 's0') for update"
        )
        db.execute("call memory.maintain()")
        (moved,) = db.execute(
            "select actions -> 'tiers_moved' -> 'big' from memory.maintenance_runs order by run_id desc limit 1"
        ).fetchone()
        assert "lock timeout" in moved["skipped"]
        tier = "select tier from memory.sessions where tenant_id = 'big' and session_id = 's0'"
        assert db.execute(tier).fetchone() == ("hot",)
        db.commit()
    db.execute("call memory.maintain()")
    assert db.execute(tier).fetchone() == ("cold",)
    assert out_of_step(db, "big") == (0, 8)
    # The move put no vector in a graph: s0's wait outside them (scanned exactly) for the next run's graph step.
    graphs = """
        select (select array_agg(e.in_graph) from memory.chunk_embeddings as e join memory.chunks as c
                using (tenant_id, turn_id, chunk_no) where c.tenant_id = 'big' and c.session_key = s.session_key)
               || (select array_agg(e.in_graph) from memory.session_embeddings as e
                   where e.tenant_id = 'big' and e.session_key = s.session_key)
        from memory.sessions as s where s.tenant_id = 'big' and s.session_id = 's0'
    """
    assert db.execute(graphs).fetchone() == ([False, False],)
    db.commit()
    # Scanned exactly meanwhile, on their side: found over every tier, and not by default.
    cat = "select session_id from memory.recall('cat knocked the blue vase', weights => %s, tiers => %s)"
    assert big.execute(cat, (NO_PROMOTION, EVERY_TIER)).fetchone() == ("s0",)
    assert "s0" not in [row[0] for row in big.execute(cat, (NO_PROMOTION, None))]
    db.execute("call memory.maintain()")
    assert db.execute(graphs).fetchone() == ([True, True],)
