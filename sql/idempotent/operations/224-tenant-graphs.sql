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
-- \gexec` in psql) as a superuser, who may create indexes on the extension's tables.

-- The name of a tenant's graph of a model's chunk vectors (the shared graph's name and the tenant's digest).
create or replace function memory_internal._tenant_graph_name(model text, tenant text) returns text
language sql
immutable parallel safe
as $$ select format('chunk_embeddings_hnsw_%s_tenant_%s', left(md5(model), 10), left(md5(tenant), 12)) $$;

comment on function memory_internal._tenant_graph_name(text, text) is
'Internal: the name of the HNSW index of one tenant''s chunk vectors of one model.';

create or replace function memory.tenant_graph_statements()
returns table (tenant_id text, model text, action text, chunks bigint, statement text)
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
        select i.indexrelid::regclass::text as qualified, c.relname::text as index_name, i.indisvalid as valid
        from pg_catalog.pg_index as i
        inner join pg_catalog.pg_class as c on i.indexrelid = c.oid
        where i.indrelid = 'memory.chunk_embeddings'::regclass and c.relname ~ '^chunk_embeddings_hnsw_\w+_tenant_\w+$'
    )
    -- A graph left invalid by a build that failed is dropped first, then built again.
    select w.tenant_id, w.model, 'drop invalid'::text, w.chunks,
           format('drop index concurrently if exists memory.%I', e.index_name)
    from wanted as w inner join existing as e on w.index_name = e.index_name
    where not e.valid and w.due
    union all
    select w.tenant_id, w.model, 'create', w.chunks,
           format('create index concurrently if not exists %I on memory.chunk_embeddings using hnsw '
                  '((embedding::halfvec(%s)) halfvec_cosine_ops) where model = %L and in_graph and not cold '
                  'and tenant_id = %L', w.index_name, w.dimensions, w.model, w.tenant_id)
    from wanted as w
    where w.due and not exists (select from existing as e where e.index_name = w.index_name and e.valid)
    union all
    -- A graph whose tenant shrank below half the threshold or is gone, or whose model is retired.
    select null, null, 'drop', null, format('drop index concurrently if exists memory.%I', e.index_name)
    from existing as e
    where not exists (select from wanted as w where w.index_name = e.index_name)
    -- Drops first (an invalid graph before it is built again), then the builds, by tenant and model.
    order by 3 desc, 1, 2, 5;
end
$$;

comment on function memory.tenant_graph_statements() is
'The statements that give each tenant holding tenant_graph_min_chunks chunks an HNSW graph of its own per model '
'(and drop those of tenants below half of it, or gone): run each alone, not in a transaction, as a superuser '
'(`agent-memory graphs`, or psql''s \gexec). memory_admin; empty when nothing is due.';
