-- Maintenance: `call memory.maintain()` does what memory needs done now and then, for every tenant, and
-- records each run in memory.maintenance_runs. Safe to run at any time and as often as wanted: a run
-- that finds another running records that it was skipped, and a run with nothing to do changes nothing.
-- Schedule it with pg_cron (docs/operations.md):
--   select cron.schedule('agent-memory-maintain', '*/10 * * * *', 'call memory.maintain()');

-- The embedding models the stored configuration chooses: for every tenant, and for each tenant that has
-- settings of its own.
create or replace function memory_internal._configured_models() returns setof text
language sql
stable
as $$
    select distinct m.model
    from (select '' as tenant_id union select c.tenant_id from memory.config as c) as t
    cross join lateral memory_internal._embedding_model(memory_internal._configured_settings(t.tenant_id)) as m
$$;

comment on function memory_internal._configured_models() is
'Internal: the embedding models memory.config chooses, for every tenant and for each tenant with settings '
'of its own (session settings left out).';

-- Whether the ready models no configuration uses are due to retire: every configured model is complete (while one
-- is still being built, recall needs the ones before it) and some other is ready.
create or replace function memory_internal._retirement_due(configured text[]) returns boolean
language sql
stable
as $$
    select exists (select from memory.embedding_models as m where m.model = any(configured))
        and not exists (select from memory.embedding_models as m where m.model = any(configured) and m.state <> 'ready')
        and exists (select from memory.embedding_models as m where m.state = 'ready' and m.model <> all(configured))
$$;

comment on function memory_internal._retirement_due(text[]) is
'Internal: whether every configured embedding model is ready and some other ready model is due to retire.';

-- Embedding models no configuration uses. Once every configured model is complete, every other ready
-- model is retired; model_retire_grace_hours later its vectors and HNSW indexes are dropped (its row stays,
-- as the record). Each model's row is locked while it is retired or dropped, so a model chosen again
-- meanwhile (memory_internal._register_model) is left alone. Runs as the owner, who may drop the shared
-- indexes, and only for an administrator's session (memory.maintain checks it too). Returns what it did.
create or replace function memory_internal._retire_models() returns jsonb
language plpgsql
as $$
declare
    v_configured text [] := array(select memory_internal._configured_models());
    v_retired text [];
    v_dropped jsonb := '{}';
    v_model text;
    v_index text;
    v_lock_timeout text := pg_catalog.current_setting('lock_timeout');
    v_vectors bigint;
    v_sessions bigint;
    v_skipped text;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: retiring embedding models is for memory_admin (it drops every tenant''s vectors)'
            using errcode = 'insufficient_privilege';
    end if;
    -- A Citus cluster does not retire a model yet (the models are a reference table, which a worker writes on
    -- every node as the owner, and a model's vectors and indexes are on every node): what would be done is
    -- said in the run's record, and nothing is written.
    if memory_internal._citus_table('memory.embedding_models') then
        if memory_internal._retirement_due(v_configured) or exists (
            select from memory.embedding_models as m
            cross join lateral memory_internal._vector_indexes(m.model) as i
            where m.state = 'retired' and pg_catalog.to_regclass('memory.' || i.index_name) is not null
        ) then
            v_skipped := 'a Citus cluster does not retire embedding models yet (docs/SCALING.md)';
        end if;
        return pg_catalog.jsonb_strip_nulls(jsonb_build_object(
            'models_retired', '[]'::jsonb, 'vectors_dropped', v_dropped, 'models_skipped', v_skipped
        ));
    end if;
    if memory_internal._retirement_due(v_configured) then
        with retired as (
            update memory.embedding_models as m set state = 'retired', retired_at = pg_catalog.now()
            where m.state = 'ready' and m.model <> all(v_configured)
            returning m.model
        )
        select array_agg(r.model order by r.model) into v_retired from retired as r;
    end if;
    for v_model in
        select m.model from memory.embedding_models as m
        where m.state = 'retired'
            and m.retired_at <= pg_catalog.now()
            - interval '1 hour' * (memory.setting('model_retire_grace_hours'))::double precision
            and (
                exists (select from memory.chunk_embeddings as e where e.model = m.model)
                or exists (select from memory.session_embeddings as e where e.model = m.model)
                or exists (
                    select from memory_internal._vector_indexes(m.model) as i
                    where to_regclass('memory.' || i.index_name) is not null
                )
            )
        order by m.model
    loop
        perform from memory.embedding_models as m where m.model = v_model and m.state = 'retired' for update;
        if not found then
            continue;
        end if;
        -- Dropping an index waits for every query on its table, and every query after it waits for the
        -- drop: after five seconds it gives up, and the next run tries again.
        begin
            perform pg_catalog.set_config('lock_timeout', '5s', true);
            for v_index in select i.index_name from memory_internal._vector_indexes(v_model) as i loop
                execute format('drop index if exists memory.%I', v_index);
            end loop;
            perform pg_catalog.set_config('lock_timeout', v_lock_timeout, true);
        exception when lock_not_available then
            raise notice 'agent_memory: the indexes of retired model % are in use; the next memory.maintain() drops them',
                v_model;
            continue;
        end;
        delete from memory.chunk_embeddings as e where e.model = v_model;
        get diagnostics v_vectors = row_count;
        delete from memory.session_embeddings as e where e.model = v_model;
        get diagnostics v_sessions = row_count;
        v_dropped := v_dropped || jsonb_build_object(v_model, jsonb_build_object(
            'chunk_vectors', v_vectors, 'session_vectors', v_sessions
        ));
    end loop;
    return jsonb_build_object('models_retired', coalesce(to_jsonb(v_retired), '[]'), 'vectors_dropped', v_dropped);
end
$$;

comment on function memory_internal._retire_models() is
'Internal: retires the embedding models recall no longer uses and drops their vectors and indexes after '
'model_retire_grace_hours (administrators only).';

-- Tenants here grown past their exact_search_max_chunks (as memory.config sets it): the vectors they wrote
-- before, and those whose item went to or left cold since the last run, join the HNSW graphs.
-- Returns how many chunk vectors joined, per tenant.
create or replace function memory_internal._join_graphs() returns jsonb
language plpgsql
as $$
declare
    v_tenant text;
    v_chunks bigint;
    v_outside bigint;
    v_joined jsonb := '{}';
begin
    for v_tenant in select t.tenant_id from memory_internal._tenants_here('memory.corpus') as t (tenant_id) order by 1 loop
        select sum(k.chunks) into v_chunks from memory.corpus as k where k.tenant_id = v_tenant;
        continue when v_chunks <= (memory_internal._configured_settings(v_tenant) ->> 'exact_search_max_chunks')::bigint;
        select count(*) into v_outside from memory.chunk_embeddings as e where e.tenant_id = v_tenant and not e.in_graph;
        if v_outside > 0 or exists (
            select from memory.session_embeddings as e where e.tenant_id = v_tenant and not e.in_graph
        ) then
            begin
                perform memory_internal._join_graph(
                    v_tenant, (memory_internal._configured_settings(v_tenant) ->> 'graph_join_batch')::integer
                );
                v_joined := v_joined || jsonb_build_object(v_tenant, v_outside - (
                    select count(*) from memory.chunk_embeddings as e where e.tenant_id = v_tenant and not e.in_graph
                ));
            exception when lock_not_available then
                v_joined := v_joined || jsonb_build_object(v_tenant, 'skipped: ' || sqlerrm);
            end;
        end if;
    end loop;
    return v_joined;
end
$$;

comment on function memory_internal._join_graphs() is
'Internal: puts the vectors of tenants grown past exact_search_max_chunks that are still outside the HNSW '
'graphs into them; how many chunk vectors joined, per tenant.';

-- Runs as the owner (a procedure that does not commit may), for a memory_admin login only. One run at a
-- time on a node: each takes the row 'maintain' of memory_internal._node_locks, which no other role can lock (an
-- advisory lock, which any role can take, let a stranger make every run skip). It waits at most five
-- seconds for any lock (a tenant's open transaction holding its rows): what it cannot lock in time, a
-- model's vectors or a tenant's graph or retention, is left to the next run and said in its record. On a Citus
-- cluster it runs on each worker, for the tenants whose shards are there, and records the run there (the record
-- and the lock are each node's own); on a coordinator that holds no tenant it is an error that says so.
create or replace procedure memory.maintain()
language plpgsql
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '5s'
as $$
declare
    v_started timestamptz := pg_catalog.clock_timestamp();
    v_jobs bigint;
    v_models jsonb;
    v_graph jsonb;
    v_tiers jsonb := '{}';
    v_tenant text;
    v_moved jsonb;
    v_folded bigint;
    v_retention jsonb := '{}';
    v_archived jsonb;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: memory.maintain() is for memory_admin (it works on every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    if memory_internal._citus_group() = 0 and not exists (select from memory_internal._tables_here('memory.sessions'))
    then
        raise exception 'agent_memory: the coordinator holds no tenants: on a Citus cluster memory.maintain runs on '
            'each worker' using errcode = 'feature_not_supported',
            hint = 'Run it connected to each worker: it maintains the tenants there.';
    end if;
    perform from memory_internal._node_locks as l where l.name = 'maintain' for update skip locked;
    if not found then
        insert into memory.maintenance_runs (started_at, finished_at, status)
        values (v_started, pg_catalog.clock_timestamp(), 'skipped');
        return;
    end if;
    -- On a Citus node, the shards of the tables it goes through, held at once (in the order a shard move takes
    -- them: one after the other, each waiting for the other, they could deadlock with a move).
    if memory_internal._citus_table('memory.sessions') then
        perform memory_internal._hold_shards_here(array(
            select t.shard
            from pg_catalog.unnest(array['memory.jobs', 'memory.corpus', 'memory.metric_counts',
                                         'memory.retention_policies', 'memory.sessions']::regclass []) as r (relation)
            cross join lateral memory_internal._tables_here(r.relation) as t
        ));
    end if;

    -- The queue: finished jobs older than queue_keep_done_hours (and the record of runs as old). Dead
    -- jobs stay until an operator acts.
    v_jobs := memory_internal._count_on_tables_here('memory.jobs', format($sql$
        with deleted as (
            delete from %%1$s as j
            where j.status = 'done' and j.finished_at < pg_catalog.now() - interval '1 hour' * %s
            returning 1
        )
        select count(*) from deleted
    $sql$, (memory.setting('queue_keep_done_hours'))::double precision));
    delete from memory.maintenance_runs as r
    where r.started_at < pg_catalog.now() - interval '1 hour' * (memory.setting('queue_keep_done_hours'))::double precision;

    begin
        v_models := memory_internal._retire_models();
    exception when lock_not_available then
        v_models := jsonb_build_object('models_skipped', sqlerrm);
        raise notice 'agent_memory: retiring embedding models is left to the next run: %', sqlerrm;
    end;
    v_graph := memory_internal._join_graphs();
    v_folded := memory_internal._fold_metric_counts();
    -- Retention before the tier moves, so that it takes what memory.retention_preview() showed. Each tenant's
    -- apart: one whose rows stay locked for five seconds, or that fails, is left to the next run.
    for v_tenant in
        select t.tenant_id from memory_internal._tenants_here('memory.retention_policies') as t (tenant_id) order by 1
    loop
        begin
            v_archived := memory_internal._apply_retention(v_tenant, pg_catalog.now(), (
                memory_internal._configured_settings(v_tenant) ->> 'retention_batch'
            )::integer);
        exception when others then
            v_archived := jsonb_build_object('skipped', sqlerrm);
            raise notice 'agent_memory: retention of tenant % is left to the next run: %', v_tenant, sqlerrm;
        end;
        if v_archived is not null then
            v_retention := v_retention || jsonb_build_object(v_tenant, v_archived);
        end if;
    end loop;
    -- Each tenant's moves apart, too: a move across cold rewrites the flags of the item's words, whose rows
    -- another transaction may hold (a tenant's own, or enrichment writing a memory's words); after five seconds,
    -- or a deadlock, that tenant's moves are left to the next run.
    for v_tenant in select t.tenant_id from memory_internal._tenants_here('memory.sessions') as t (tenant_id) order by 1 loop
        begin
            v_moved := memory_internal._move_tiers(v_tenant, pg_catalog.now());
        exception when lock_not_available or deadlock_detected then
            v_moved := jsonb_build_object('skipped', sqlerrm);
            raise notice 'agent_memory: the tier moves of tenant % are left to the next run: %', v_tenant, sqlerrm;
        end;
        if v_moved <> '{"to_warm": 0, "to_cold": 0}' then
            v_tiers := v_tiers || jsonb_build_object(v_tenant, v_moved);
        end if;
    end loop;

    insert into memory.maintenance_runs (started_at, finished_at, status, actions)
    values (v_started, pg_catalog.clock_timestamp(), 'done',
            jsonb_build_object('jobs_deleted', v_jobs, 'graph_joined', v_graph, 'tiers_moved', v_tiers,
                               'retention', v_retention, 'metric_rows_folded', v_folded,
                               -- What maintenance cannot run itself (create index concurrently): said (on
                               -- one node: a Citus cluster has no graphs of a tenant's own yet).
                               'tenant_graphs_due', case when not memory_internal._citus_table('memory.corpus') then
                                   (select count(*) from memory.tenant_graph_statements())
                               end)
            || v_models);
end
$$;

comment on procedure memory.maintain () is
'Maintenance for every tenant (memory_admin): deletes finished jobs older than queue_keep_done_hours, '
'retires embedding models no configuration uses and drops their vectors after model_retire_grace_hours, '
'puts the earlier vectors of tenants grown past exact_search_max_chunks into the HNSW graphs, moves each '
'tenant''s sessions and memories down a tier as their importance decays and agents'' tiers fill '
'(memory.tier_moves shows what it would move), archives and removes, before the tier moves, what each tenant''s '
'retention policies select (memory.retention_preview shows it; memory.archives lists the archives; at most '
'retention_batch items per tenant and run), folds the metric counters of ended backends, and counts the big '
'tenants'' graphs due (memory.tenant_graph_statements(), which `agent-memory graphs` runs). '
'One run at a time (a concurrent call is recorded as skipped); each run is recorded in '
'memory.maintenance_runs. Schedule it with pg_cron. On a Citus cluster, run it on each worker: it maintains the '
'tenants there and records the run there.';
