-- Graphs of their own for big tenants. Every tenant's vectors of a model share its HNSW graphs, and a search
-- of one tenant walks the shared graph and keeps the tenant's nodes: with ten tenants of 100,000 chunks in
-- one graph, a tenant's 10 nearest chunks were found for 0.90 of them, whatever ef_search (some nodes are
-- reached from nowhere near the query), and a graph of the tenant's own chunks found 0.998, in half the time
-- (docs/BENCHMARKS.md). A tenant that holds tenant_graph_min_chunks chunks gets, for each model with graphs,
-- a partial HNSW index of its chunk vectors that are not cold; recall's vector list names the tenant as a
-- value, so the planner takes the tenant's index where one exists. Its vectors stay in the shared graph too
-- (the tenant may shrink again, and a recall across tenants has none).
--
-- The indexes are built and dropped `concurrently`, so that no write waits for them, which PostgreSQL allows
-- only as a statement of its own, not in a function: memory.tenant_graph_statements() says what to run and
-- an administrator runs it (`agent-memory graphs`, or `select statement from memory.tenant_graph_statements()
-- \gexec` in psql) as a superuser, who may create indexes on the extension's tables. Each row says what its
-- statement does in columns too (index, tenant, model, dimensions), from which `agent-memory graphs` writes the
-- statement itself rather than run text a function of the extension's owner made.

-- The name of a tenant's graph of a model's chunk vectors: the digest of the two (61 characters, under
-- PostgreSQL's 63; no two tenants' or models' alike).
create or replace function memory_internal._tenant_graph_name(model text, tenant text) returns text
language sql
immutable parallel safe
as $$ select 'chunk_embeddings_hnsw_tenant_' || md5(model || E'\n' || tenant) $$;

comment on function memory_internal._tenant_graph_name(text, text) is
'Internal: the name of the HNSW index of one tenant''s chunk vectors of one model.';

create or replace function memory.tenant_graph_statements()
returns table (
    tenant_id text, model text, action text, chunks bigint, index_name text, dimensions integer, statement text
)
language plpgsql
stable
as $$
declare
    v_least bigint := (memory.setting('tenant_graph_min_chunks'))::bigint;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: tenant_graph_statements is for memory_admin (it reads every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    return query
    with sizes as (
        select c.tenant_id, sum(c.chunks)::bigint as chunks from memory.corpus as c group by c.tenant_id
    ),
    models as (
        -- The models with graphs: not retired, of dimensions a graph holds, whose shared graph exists.
        select m.model, m.dimensions from memory.embedding_models as m
        where m.state <> 'retired' and m.dimensions <= memory_internal._graph_max_dimensions()
            and pg_catalog.to_regclass(format('memory.%I', (
                select v.index_name from memory_internal._vector_indexes(m.model) as v
                where v.relation = 'chunk_embeddings' and not v.cold
            ))) is not null
    ),
    wanted as (
        -- Made at tenant_graph_min_chunks, kept down to half of it.
        select s.tenant_id, m.model, m.dimensions, s.chunks,
               memory_internal._tenant_graph_name(m.model, s.tenant_id) as index_name,
               s.chunks >= v_least as due
        from sizes as s cross join models as m
        where s.chunks >= v_least / 2
    ),
    existing as (
        select c.relname::text as index_name, i.indisvalid as valid
        from pg_catalog.pg_index as i
        inner join pg_catalog.pg_class as c on i.indexrelid = c.oid
        where i.indrelid = 'memory.chunk_embeddings'::regclass
            and c.relname ~ '^chunk_embeddings_hnsw_tenant_[0-9a-f]{32}$'
    ),
    actions as (
        -- A graph left invalid (a build that failed, or one under way) is dropped, and built again if due.
        select w.tenant_id, w.model, 'drop invalid'::text as action, w.chunks, e.index_name, w.dimensions
        from wanted as w inner join existing as e on w.index_name = e.index_name
        where not e.valid
        union all
        select w.tenant_id, w.model, 'create', w.chunks, w.index_name, w.dimensions
        from wanted as w
        where w.due and not exists (select from existing as e where e.index_name = w.index_name and e.valid)
        union all
        -- A graph whose tenant shrank below half the threshold or is gone, or whose model is retired.
        select null, null, 'drop', null, e.index_name, null
        from existing as e
        where not exists (select from wanted as w where w.index_name = e.index_name)
    )
    select a.tenant_id, a.model, a.action, a.chunks, a.index_name, a.dimensions,
           case when a.action = 'create' then
                    memory_internal._graph_index_statement(
                        a.index_name, 'chunk_embeddings', a.dimensions, a.model, false, a.tenant_id
                    )
                else format('drop index concurrently if exists memory.%I', a.index_name)
           end
    from actions as a
    -- Drops first (an invalid graph before it is built again), then the builds, by tenant and model.
    order by a.action desc, a.tenant_id, a.model, a.index_name;
end
$$;

comment on function memory.tenant_graph_statements() is
'The statements that give each tenant holding tenant_graph_min_chunks chunks an HNSW graph of its own per model '
'(and drop those of tenants below half of it, or gone, and those a build left invalid): run each alone, not in '
'a transaction, as a superuser (`agent-memory graphs`, or psql''s \gexec). memory_admin; empty when nothing '
'is due.';
