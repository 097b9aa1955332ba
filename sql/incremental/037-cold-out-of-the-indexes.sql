-- Cold out of the indexes recall searches by default (0.4.0). A chunk, its vectors and a session's vector
-- carry whether their item (the memories the turn holds, else the session) is cold, kept by triggers when
-- tiers move. The full-text and HNSW indexes are split on it, so a recall that leaves cold out reads only
-- what is not cold; one over every tier reads both halves. The HNSW graphs are made again, split, by
-- memory_internal._ensure_vector_index; the vectors outside them (scanned exactly) are indexed by side too.
alter table memory.chunks add column cold boolean not null default false;
alter table memory.chunk_embeddings add column cold boolean not null default false;
alter table memory.session_embeddings add column cold boolean not null default false;

-- The indexes go first, so that the flags written below are not indexed by indexes about to go.
drop index memory.chunks_tsv;

do $drop$
begin
    execute coalesce((
        select string_agg(format('drop index %s', i.indexrelid::regclass), '; ')
        from pg_catalog.pg_index as i
        inner join pg_catalog.pg_class as c on c.oid = i.indexrelid
        where i.indrelid in ('memory.chunk_embeddings'::regclass, 'memory.session_embeddings'::regclass)
            and c.relam = (select a.oid from pg_catalog.pg_am as a where a.amname = 'hnsw')
    ), 'select');
end
$drop$;

-- A flag changes, nothing that the tables' triggers count or check (and the functions of an older version's
-- triggers may be gone by now).
alter table memory.chunks disable trigger user;
alter table memory.chunk_embeddings disable trigger user;
alter table memory.session_embeddings disable trigger user;
update memory.chunks as c set cold = true
where coalesce(
    (
        select bool_and(m.tier = 'cold') from memory.memories as m
        where m.tenant_id = c.tenant_id and m.turn_id = c.turn_id
    ),
    (
        select s.tier = 'cold' from memory.sessions as s
        where s.tenant_id = c.tenant_id and s.session_key = c.session_key
    )
);
update memory.chunk_embeddings as e set cold = true
from memory.chunks as c
where c.cold and e.tenant_id = c.tenant_id and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no;
update memory.session_embeddings as e set cold = true
from memory.sessions as s
where s.tier = 'cold' and e.tenant_id = s.tenant_id and e.session_key = s.session_key;
alter table memory.chunks enable trigger user;
alter table memory.chunk_embeddings enable trigger user;
alter table memory.session_embeddings enable trigger user;

create index chunks_tsv on memory.chunks using gin (tsv) where not cold;
create index chunks_tsv_cold on memory.chunks using gin (tsv) where cold;
drop index memory.chunk_embeddings_outside_graph;
drop index memory.session_embeddings_outside_graph;
create index chunk_embeddings_outside_graph on memory.chunk_embeddings (tenant_id, model, cold) where not in_graph;
create index session_embeddings_outside_graph on memory.session_embeddings (tenant_id, model, cold) where not in_graph;
