-- Maintenance: `call memory.maintain()` does what memory needs done now and then, for every tenant, and
-- records each run in memory.maintenance_runs. Safe to run at any time and as often as wanted: a run
-- that finds another running records that it was skipped, and a run with nothing to do changes nothing.
-- Schedule it with pg_cron (docs/operations.md):
--   select cron.schedule('agent-memory-maintain', '*/10 * * * *', 'call memory.maintain()');

-- Embedding models recall no longer uses. Once the configured model is complete and recall uses it,
-- every other ready model is retired; model_retire_grace_hours later its vectors and HNSW indexes are
-- dropped (its row stays, as the record). Runs as the owner, who may drop the shared indexes, and only
-- for an administrator's session (memory.maintain checks it too). Returns what it did.
create or replace function memory_internal._retire_models() returns jsonb
language plpgsql
security definer
as $$
declare
    v_recall text;
    v_retired text [];
    v_dropped jsonb := '{}';
    v_model text;
    v_vectors bigint;
    v_sessions bigint;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: retiring embedding models is for memory_admin (it drops every tenant''s vectors)'
            using errcode = 'insufficient_privilege';
    end if;
    v_recall := memory.recall_model();
    if v_recall is not null and v_recall = (select e.model from memory.embedding_model() as e) then
        with retired as (
            update memory.embedding_models as m set state = 'retired', retired_at = pg_catalog.now()
            where m.state = 'ready' and m.model <> v_recall
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
                or to_regclass('memory.chunk_embeddings_hnsw_' || left(md5(m.model), 10)) is not null
            )
        order by m.model
    loop
        delete from memory.chunk_embeddings as e where e.model = v_model;
        get diagnostics v_vectors = row_count;
        delete from memory.session_embeddings as e where e.model = v_model;
        get diagnostics v_sessions = row_count;
        execute format('drop index if exists memory.%I', 'chunk_embeddings_hnsw_' || left(md5(v_model), 10));
        execute format('drop index if exists memory.%I', 'session_embeddings_hnsw_' || left(md5(v_model), 10));
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

create or replace procedure memory.maintain()
language plpgsql
as $$
declare
    v_started timestamptz := pg_catalog.clock_timestamp();
    v_jobs bigint;
    v_models jsonb;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: memory.maintain() is for memory_admin (it works on every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    if not pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtext('agent_memory.maintain')) then
        insert into memory.maintenance_runs (started_at, finished_at, status)
        values (v_started, pg_catalog.clock_timestamp(), 'skipped');
        return;
    end if;

    -- The queue: finished jobs older than queue_keep_done_hours. Dead ones stay until an operator acts.
    delete from memory.jobs as j
    where j.status = 'done'
        and j.finished_at < pg_catalog.now() - interval '1 hour' * (memory.setting('queue_keep_done_hours'))::double precision;
    get diagnostics v_jobs = row_count;

    v_models := memory_internal._retire_models();

    insert into memory.maintenance_runs (started_at, finished_at, status, actions)
    values (v_started, pg_catalog.clock_timestamp(), 'done', jsonb_build_object('jobs_deleted', v_jobs) || v_models);
end
$$;

comment on procedure memory.maintain () is
'Maintenance for every tenant (memory_admin): deletes finished jobs older than queue_keep_done_hours, '
'retires embedding models recall no longer uses and drops their vectors after model_retire_grace_hours. '
'One run at a time (a concurrent call is recorded as skipped); each run is recorded in '
'memory.maintenance_runs. Schedule it with pg_cron.';
