-- Which vectors the HNSW graphs hold (0.3.0). A tenant's vectors join its model's graph only once the
-- tenant holds more chunks than exact search serves (setting exact_search_max_chunks): below that, recall
-- scans them exactly, and keeping a graph current for them cost enrichment about a millisecond a chunk
-- for nothing. A vector outside the graph is still found by approximate search, which scans those rows
-- exactly beside the graph (the *_outside_graph indexes find them).
do $drop$
declare
    v_index regclass;
begin
    -- memory_internal._ensure_vector_index makes them again, with the in_graph predicate.
    for v_index in
        select i.indexrelid::regclass
        from pg_catalog.pg_index as i
        inner join pg_catalog.pg_class as c on c.oid = i.indexrelid
        inner join pg_catalog.pg_am as a on a.oid = c.relam
        where i.indrelid in ('memory.chunk_embeddings'::regclass, 'memory.session_embeddings'::regclass)
            and a.amname = 'hnsw'
    loop
        execute format('drop index %s', v_index);
    end loop;
end
$drop$;

alter table memory.chunk_embeddings add column in_graph boolean not null default false;
alter table memory.session_embeddings add column in_graph boolean not null default false;

-- Tenants above the shipped threshold keep their vectors in the graph.
update memory.chunk_embeddings as e set in_graph = true
where e.tenant_id in (
    select k.tenant_id from memory.corpus as k
    group by k.tenant_id
    having sum(k.chunks) > 20000
);
update memory.session_embeddings as e set in_graph = true
where e.tenant_id in (
    select k.tenant_id from memory.corpus as k
    group by k.tenant_id
    having sum(k.chunks) > 20000
);

create index chunk_embeddings_outside_graph on memory.chunk_embeddings (tenant_id, model) where not in_graph;
create index session_embeddings_outside_graph on memory.session_embeddings (tenant_id, model) where not in_graph;
