"""Which vectors the HNSW graphs hold: a tenant's join them once it has more chunks than exact search
serves (exact_search_max_chunks), earlier ones with them; approximate search still finds the rest."""

import pytest
from psycopg.types.json import Json, Jsonb

TOPICS = [
    "My dog Biscuit learned to fetch the newspaper this week.",
    "The billing service crashed because the signing token expired.",
    "We booked flights to Lisbon for the twelfth of June.",
    "The greenhouse tomatoes need watering twice a day in July.",
    "Our quarterly report is due to the board on Friday.",
]


def commit(conn, session, text):
    conn.execute(
        "select memory.commit(%s, %s, enrich => 'now')",
        (session, Json([{"role": "user", "content": text}])),
    )


def graph_rows(conn, table):
    return dict(conn.execute(f"select in_graph, count(*) from memory.{table} group by in_graph").fetchall())


def nearest(conn, query, **weights):
    rows = conn.execute(
        "select turn_id from memory.recall(%s, k => 3, weights => %s)", (query, Jsonb(weights))
    ).fetchall()
    return [r[0] for r in rows]


def prepare_vector_list(db, model, dimensions, cold):
    """Prepares `nearest`, the chunk vector list recall runs for a model (graph and outside it), seqscan off."""
    statement = db.execute(
        "select memory_internal._nearest_sql('chunk_embeddings', array['turn_id', 'chunk_no'], %s, %s, false,"
        " null, %s)",
        (model, dimensions, cold),
    ).fetchone()[0]
    db.execute("set enable_seqscan = off")
    parameters = "vector, text, text, timestamptz, timestamptz, text, bigint[], integer"
    db.execute(f"prepare nearest ({parameters}) as {statement}")


@pytest.fixture
def tenants(db, logins):
    """Tenant big, whose threshold is three chunks, and tenant small with the default (20,000)."""
    db.execute("insert into memory.config (tenant_id, key, value) values ('big', 'exact_search_max_chunks', '3')")
    db.commit()
    return logins.create(tenant="big"), logins.create(tenant="small")


def test_a_small_tenants_vectors_stay_out_of_the_graph(tenants):
    _, small = tenants
    for number, text in enumerate(TOPICS):
        commit(small, f"s{number}", text)
    assert graph_rows(small, "chunk_embeddings") == {False: 5}
    assert graph_rows(small, "session_embeddings") == {False: 5}


def test_past_the_threshold_new_vectors_join_the_graph_and_maintenance_adds_the_earlier(tenants, db):
    big, small = tenants
    commit(big, "s0", TOPICS[0])
    commit(small, "s0", TOPICS[0])
    assert graph_rows(big, "chunk_embeddings") == {False: 1}
    for number, text in enumerate(TOPICS[1:], start=1):
        commit(big, f"s{number}", text)
    assert graph_rows(big, "chunk_embeddings")[True] >= 1  # the last is written into the graph
    outside = graph_rows(big, "chunk_embeddings")[False]
    db.execute("call memory.maintain()")
    assert db.execute("select actions -> 'graph_joined' from memory.maintenance_runs").fetchone()[0] == {"big": outside}
    db.commit()
    assert graph_rows(big, "chunk_embeddings") == {True: 5}
    assert graph_rows(big, "session_embeddings") == {True: 5}
    assert graph_rows(small, "chunk_embeddings") == {False: 1}


def test_approximate_search_finds_vectors_in_and_outside_the_graph(tenants, db):
    big, _ = tenants
    for number, text in enumerate(TOPICS):
        commit(big, f"s{number}", text)
    db.execute("call memory.maintain()")
    # A vector written while the tenant's threshold is higher stay outside the graph.
    db.execute("update memory.config set value = '1000' where tenant_id = 'big'")
    db.commit()
    commit(big, "late", "The vet said the puppy needs a rabies shot next month.")
    assert graph_rows(big, "chunk_embeddings") == {True: 5, False: 1}
    exact = nearest(big, "when is the puppy due for its rabies shot", exact_search_max_chunks=1000)
    approximate = nearest(big, "when is the puppy due for its rabies shot", exact_search_max_chunks=0)
    assert approximate == exact
    late = big.execute(
        "select t.turn_id from memory.turns as t join memory.sessions as s using (tenant_id, session_key)"
        " where s.session_id = 'late'"
    ).fetchone()[0]
    assert approximate[0] == late


@pytest.mark.parametrize("cold", [False, True])
def test_approximate_search_reads_the_graph_and_the_rows_outside_it(tenants, db, cold):
    big, _ = tenants
    for number, text in enumerate(TOPICS):
        commit(big, f"s{number}", text)
    prepare_vector_list(db, "all-MiniLM-L6-v2", 384, cold)
    plan = "\n".join(
        r[0]
        for r in db.execute(
            "explain (costs off) execute nearest((memory.embed(array['dog']))[1], 'big', null, null, null, null,"
            " null, 3)"
        )
    )
    # The graph of what is not cold always, that of what is cold only when asked for.
    assert "using chunk_embeddings_hnsw_6136536182 " in plan
    assert ("chunk_embeddings_hnsw_cold_" in plan) == cold
    assert "chunk_embeddings_outside_graph" in plan


def test_the_client_embedders_vectors_have_their_graphs_too(tenants, db):
    # Callers' vectors (embedder client) join HNSW graphs as the local model's do: without them, recall sorted
    # every vector of a tenant grown past exact_search_max_chunks.
    big, _ = tenants
    db.execute("insert into memory.config (key, value) values ('embedder', '\"client\"'), ('client_dimensions', '3')")
    db.commit()
    for number, vector in enumerate([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]]):
        big.execute(
            "select memory.commit(%s, %s, enrich => 'now')",
            (f"s{number}", Json([{"role": "user", "content": TOPICS[number], "embedding": vector}])),
        )
    db.execute("call memory.maintain()")
    db.commit()
    assert graph_rows(big, "chunk_embeddings") == {True: 5}
    graphs = [row[0] for row in db.execute("select index_name from memory_internal._vector_indexes('client')")]
    assert all(db.execute("select to_regclass('memory.' || %s)", (name,)).fetchone()[0] for name in graphs)
    prepare_vector_list(db, "client", 3, False)
    plan = "\n".join(
        r[0]
        for r in db.execute("explain (costs off) execute nearest('[1,0,0.1]', 'big', null, null, null, null, null, 3)")
    )
    graph = next(name for name in graphs if "chunk_embeddings_hnsw_" in name and "_cold_" not in name)
    assert f"using {graph} " in plan
    (found,) = db.execute("execute nearest('[1,0,0.1]', 'big', null, null, null, null, null, 1)").fetchone()[:1]
    first = big.execute(
        "select t.turn_id from memory.turns as t join memory.sessions as s using (tenant_id, session_key)"
        " where s.session_id = 's0'"
    ).fetchone()[0]
    assert found == [first]


def test_a_model_of_more_dimensions_than_a_graph_holds_is_searched_exactly(tenants, db):
    # pgvector's HNSW holds halfvec of at most 4,000 dimensions: such a model gets no graph (making one would fail
    # every enrichment), and recall reads its vectors exactly whatever the tenant's size.
    big, _ = tenants
    db.execute(
        "insert into memory.config (key, value) values ('embedder', '\"client\"'), ('client_dimensions', '4001')"
    )
    db.commit()

    def vector(axis):
        return [1.0 if i == axis else 0.01 for i in range(4001)]

    for number in range(5):
        big.execute(
            "select memory.commit(%s, %s, enrich => 'now')",
            (f"s{number}", Json([{"role": "user", "content": TOPICS[number], "embedding": vector(number)}])),
        )
    graphs = [row[0] for row in db.execute("select index_name from memory_internal._vector_indexes('client')")]
    assert [db.execute("select to_regclass('memory.' || %s)", (name,)).fetchone()[0] for name in graphs] == [None] * 4
    hits = big.execute(
        "select session_id from memory.recall('zzqx', k => 1, query_vector => %s::vector)",
        ("[" + ",".join(map(str, vector(3))) + "]",),
    ).fetchall()
    assert hits == [("s3",)]


def test_a_big_tenant_gets_a_graph_of_its_own_that_its_recall_reads(tenants, db, logins):
    """Tenants holding tenant_graph_min_chunks chunks get HNSW graphs of their own, built by statements an
    administrator runs (create index concurrently cannot run in a function), and dropped below half of it."""
    big, _ = tenants
    crowd = logins.create(tenant="crowd")
    db.execute(
        "insert into memory.config (tenant_id, key, value) values ('', 'embedder', '\"client\"'),"
        " ('', 'client_dimensions', '3'), ('', 'tenant_graph_min_chunks', '10'),"
        " ('crowd', 'exact_search_max_chunks', '3')"
    )
    db.commit()
    for conn, sessions in ((big, 12), (crowd, 40)):
        for number in range(sessions):
            conn.execute(
                "select memory.commit(%s, %s, enrich => 'now')",
                (
                    f"s{number}",
                    Json(
                        [
                            {
                                "role": "user",
                                "content": f"Note {number}: the deploy moved to Tuesday.",
                                "embedding": [1, number, 2],
                            }
                        ]
                    ),
                ),
            )
    db.execute("call memory.maintain()")
    db.commit()
    due = "select tenant_id, model, action, chunks from memory.tenant_graph_statements() order by 1"
    assert db.execute(due).fetchall() == [("big", "client", "create", 12), ("crowd", "client", "create", 40)]
    maintained = "select actions -> 'tenant_graphs_due' from memory.maintenance_runs order by run_id desc limit 1"
    assert db.execute(maintained).fetchone() == (2,)
    db.commit()
    db.autocommit = True
    for (statement,) in db.execute("select statement from memory.tenant_graph_statements()").fetchall():
        db.execute(statement)
    assert db.execute(due).fetchall() == []
    name = db.execute("select memory_internal._tenant_graph_name('client', 'big')").fetchone()[0]
    definition = db.execute("select indexdef from pg_indexes where indexname = %s", (name,)).fetchone()[0]
    assert "USING hnsw" in definition and "(tenant_id = 'big'::text)" in definition and "(NOT cold)" in definition

    def scans():
        db.execute("select pg_stat_force_next_flush()")  # this backend's counts, reported as it goes idle
        return db.execute("select idx_scan from pg_stat_user_indexes where indexrelname = %s", (name,)).fetchone()[0]

    before = scans()
    db.execute("select set_config('memory.tenant_id', 'big', false)")
    db.execute("set enable_seqscan = off")  # a dozen rows: the planner would read them all
    hits = db.execute("select count(*) from memory.recall('deploy', k => 3, query_vector => '[1,5,2]')").fetchone()[0]
    assert hits == 3 and scans() == before + 1

    # A build that failed (or is under way) leaves an invalid index: dropped, then built again.
    db.execute("update pg_index set indisvalid = false where indexrelid = ('memory.' || %s)::regclass", (name,))
    redo = db.execute("select tenant_id, action from memory.tenant_graph_statements()").fetchall()
    assert redo == [("big", "drop invalid"), ("big", "create")]
    for (statement,) in db.execute("select statement from memory.tenant_graph_statements()").fetchall():
        db.execute(statement)
    assert db.execute(
        "select indisvalid from pg_index where indexrelid = ('memory.' || %s)::regclass", (name,)
    ).fetchone()
    assert db.execute(due).fetchall() == []

    db.execute("update memory.config set value = '100' where key = 'tenant_graph_min_chunks'")
    dropped = db.execute("select tenant_id, action, statement from memory.tenant_graph_statements()").fetchall()
    assert [(tenant, action) for tenant, action, _ in dropped] == [(None, "drop"), (None, "drop")]
    for _, _, statement in dropped:
        db.execute(statement)
    assert db.execute("select to_regclass('memory.' || %s)", (name,)).fetchone()[0] is None


def test_only_an_administrator_lists_the_tenant_graphs(tenants):
    big, _ = tenants
    with pytest.raises(Exception, match=r"permission denied|memory_admin"):
        big.execute("select * from memory.tenant_graph_statements()")
