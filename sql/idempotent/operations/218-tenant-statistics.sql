-- The planner's statistics of a tenant that grows faster than autovacuum analyzes. Autovacuum analyzes a
-- table after a tenth of it changed: on a large table a new tenant may grow by millions of rows first, and
-- until then the planner takes it for one row (it is in no statistics), so every index that starts with
-- tenant_id looks as good as the one that finds a session's rows, and a statement may read the whole tenant
-- for each row it looks for (measured: enrichment at 0.5 jobs a second instead of 33). The queue's workers
-- analyze the tables when a tenant of their jobs outgrows its estimate (analyze_growth_factor).

-- The planner's estimate of a tenant's chunks. It runs as memory_observer: under row-level security the
-- plan would estimate what the policy lets through, not the tenant's rows. (Volatile: PostgreSQL runs
-- explain in no other function.)
create or replace function memory_internal._planned_chunks(tenant text) returns double precision
language plpgsql
volatile
security definer
as $$
declare
    v_plan json;
begin
    execute format('explain (format json) select from memory.chunks where tenant_id = %L', tenant) into v_plan;
    return (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::double precision;
end
$$;

comment on function memory_internal._planned_chunks(text) is
'Internal: how many chunks the planner''s statistics give a tenant (runs as memory_observer).';

-- Of these tenants, those holding at least 1,000 chunks and analyze_growth_factor times the planner's
-- estimate; if any, the tables of a tenant's rows are analyzed (a table another transaction is analyzing or
-- vacuuming is skipped, not waited for), unless the chunks changed since the last analyze by less than half
-- the tenant or a hundredth of the table (if an analyze missed the tenant in its sample, the next waits for
-- that much more writing: on a large, busy table, at most one analyze per hundredth, a tenth of autovacuum's
-- pace). Returns the tenants found grown, analyzed for or not. The statistics target is PostgreSQL's default,
-- whatever the caller's session says (a column's own target holds). Not on Citus: a worker plans a tenant's
-- statements against its shards, which each node's autovacuum analyzes (the tables' statistics are Citus's).
create or replace function memory_internal._analyze_grown_tenants(tenants text[]) returns text[]
language plpgsql
security definer
set default_statistics_target = 100
as $$
declare
    v_factor double precision := (memory.setting('analyze_growth_factor'))::double precision;
    v_grown text [];
    v_least bigint;
begin
    if v_factor = 0 or memory_internal._citus_table('memory.chunks') then
        return '{}';
    end if;
    select array_agg(g.tenant_id order by g.tenant_id), min(g.chunks) into v_grown, v_least
    from (
        select c.tenant_id, sum(c.chunks) as chunks
        from memory.corpus as c
        where c.tenant_id = any(tenants)
        group by c.tenant_id
    ) as g
    where g.chunks >= 1000 and g.chunks > v_factor * memory_internal._planned_chunks(g.tenant_id);
    if v_grown is not null and pg_catalog.pg_stat_get_mod_since_analyze('memory.chunks'::regclass) >= greatest(
        v_least / 2, (select c.reltuples / 100 from pg_catalog.pg_class as c where c.oid = 'memory.chunks'::regclass)
    ) then
        analyze (skip_locked) memory.sessions, memory.turns, memory.chunks, memory.chunk_embeddings,
            memory.summaries, memory.session_embeddings, memory.entity_mentions;
    end if;
    return coalesce(v_grown, '{}');
end
$$;

comment on function memory_internal._analyze_grown_tenants(text[]) is
'Internal: analyzes the tables of a tenant''s rows when one of these tenants outgrew the planner''s '
'estimate of it (analyze_growth_factor); returns the tenants that had.';
