-- Changing the embedding model without downtime: vectors of a new model are written in the background
-- (jobs of kind embed) while recall keeps using the last model whose vectors are complete.

-- Whether any tenant has chunks, and whether any chunk of any tenant lacks a model's vector: what recording a
-- model and finishing one must know of every tenant, whoever calls the API (row-level security shows
-- memory_owner one tenant). They run as memory_observer, a role that may read every tenant's chunks and
-- vectors and nothing else, and they answer only yes or no.
create or replace function memory_internal._any_chunks() returns boolean
language sql
stable
security definer
as $$
    select exists (select from memory.chunks)
$$;

comment on function memory_internal._any_chunks() is
'Internal: whether any tenant has chunks (runs as memory_observer).';

create or replace function memory_internal._chunks_lacking(model text) returns boolean
language sql
stable
security definer
as $$
    select exists (
        select from memory.chunks as c
        where not exists (
            select from memory.chunk_embeddings as e
            where e.tenant_id = c.tenant_id and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no
                and e.model = _chunks_lacking.model
        )
    )
$$;

comment on function memory_internal._chunks_lacking(text) is
'Internal: whether a chunk of any tenant lacks a vector of the model (runs as memory_observer).';

-- Records the model in force the first time it is used; a model that arrives while chunks exist (of any
-- tenant) starts as building and gets a background job that embeds them. It takes no arguments: it registers
-- the model the settings choose (the administrator's), never one a caller names. Until the transaction that
-- records a model ends, others that would record it wait; at most five seconds, then they fail (the queue
-- tries again later).
create or replace function memory_internal._register_model() returns void
language plpgsql
set lock_timeout = '5s'
as $$
declare
    v_model record;
    v_state text;
    v_written boolean;
begin
    select * into v_model from memory.embedding_model();
    if v_model is null then
        return;
    end if;
    select m.state into v_state from memory.embedding_models as m where m.model = v_model.model;
    if v_state is distinct from 'retired' and v_state is not null then
        return;
    end if;
    -- A retired model chosen again is built again (maintenance may have dropped its vectors); the row
    -- lock this takes waits for a maintenance run dropping them, so the index is made after it.
    begin
        insert into memory.embedding_models as m (model, provider, dimensions, state, ready_at)
        select v_model.model, v_model.provider, v_model.dimensions,
               case when memory_internal._any_chunks() then 'building' else 'ready' end,
               case when memory_internal._any_chunks() then null else pg_catalog.now() end
        on conflict (model) do update
        set state = excluded.state, ready_at = excluded.ready_at, retired_at = null
        where m.state = 'retired';
        v_written := found;
    exception when lock_not_available then
        raise exception 'agent_memory: embedding model % is being recorded by another transaction; try again',
            v_model.model using errcode = 'lock_not_available';
    end;
    -- Every model's vectors have their graphs, the client's (callers' vectors, of client_dimensions) too.
    perform memory_internal._ensure_vector_index(v_model.model, v_model.dimensions);
    if v_written and memory_internal._any_chunks() then
        insert into memory.jobs (tenant_id, kind) values (memory.current_tenant(), 'embed');
    end if;
end
$$;

comment on function memory_internal._register_model() is
'Internal: records the embedding model in force on first use (or when chosen again after it was retired); '
'with existing chunks it starts as building.';

-- Embeds up to max_chunks chunks that lack a vector of the configured model; when none are left the model
-- becomes ready and recall switches to it. Returns how many chunks it embedded.
create or replace function memory.reembed(max_chunks integer default 500) returns integer
language plpgsql
as $$
declare
    v_settings jsonb := memory_internal._settings_json();
    v_model record;
    v_keys bigint [];
    v_nos integer [];
    v_tenants text [];
    v_texts text [];
    v_sessions bigint [];
    v_vectors vector [];
    v_count integer;
begin
    select * into v_model from memory.embedding_model();
    if v_model is null or v_model.provider = 'client' then
        return 0;
    end if;
    perform memory_internal._register_model();
    select array_agg(c.tenant_id), array_agg(c.turn_id), array_agg(c.chunk_no), array_agg(c.text),
           array_agg(distinct c.session_key)
    into v_tenants, v_keys, v_nos, v_texts, v_sessions
    from (
        select c.tenant_id, c.turn_id, c.chunk_no, c.text, c.session_key from memory.chunks as c
        where not exists (
            select from memory.chunk_embeddings as e
            where e.tenant_id = c.tenant_id and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no
                and e.model = v_model.model
        )
        limit reembed.max_chunks
    ) as c;
    v_count := coalesce(cardinality(v_texts), 0);
    if v_count > 0 then
        v_vectors := memory_internal._embed_texts(v_texts, v_settings);
        -- The lock order of commit, forget and workers: the sessions first (in key order), then their
        -- rows. Chunks forgotten while they were embedded are left out.
        perform from memory.sessions as s where s.session_key = any (v_sessions) order by s.session_key
        for key share;
        insert into memory.chunk_embeddings (tenant_id, turn_id, chunk_no, model, text_sha256, embedding, in_graph,
                                             cold)
        select k.tenant_id, k.turn_id, k.chunk_no, v_model.model, sha256(convert_to(k.text, 'UTF8')), k.embedding,
               memory_internal._in_graph(k.tenant_id), c.cold
        from unnest(v_tenants, v_keys, v_nos, v_texts, v_vectors) as k (tenant_id, turn_id, chunk_no, text, embedding)
        inner join memory.chunks as c on c.tenant_id = k.tenant_id and c.turn_id = k.turn_id and c.chunk_no = k.chunk_no
        on conflict do nothing;
    end if;
    if v_count < reembed.max_chunks then
        perform memory_internal._mark_ready_if_complete(v_model.model);
    end if;
    return v_count;
end
$$;

comment on function memory.reembed(integer) is
'Embeds up to max_chunks chunks lacking a vector of the configured model (all tenants; memory_admin, and the '
'queue''s embed jobs); marks the model ready '
'when none are left, and recall then switches to it. Queued automatically when the model changes.';

-- Marks a building model ready once every chunk (of every tenant) has its vector (checked only while it is
-- building).
create or replace function memory_internal._mark_ready_if_complete(model text) returns void
language plpgsql
as $$
begin
    if not exists (
        select from memory.embedding_models as m
        where m.model = _mark_ready_if_complete.model and m.state = 'building'
    ) then
        return;
    end if;
    update memory.embedding_models as m set state = 'ready', ready_at = pg_catalog.now()
    where m.model = _mark_ready_if_complete.model and m.state = 'building'
        and not memory_internal._chunks_lacking(_mark_ready_if_complete.model);
end
$$;

comment on function memory_internal._mark_ready_if_complete(text) is
'Internal: a building embedding model becomes ready when no chunk lacks its vector.';

-- The model recall uses: the configured one once its vectors are complete, else the last ready one.
create or replace function memory_internal._recall_model(configured text) returns text
language plpgsql
stable
as $$
begin
    return (
        select m.model from memory.embedding_models as m
        where m.state = 'ready'
        order by (m.model = configured) is true desc, m.ready_at desc
        limit 1
    );
end
$$;

comment on function memory_internal._recall_model(text) is
'Internal: the model recall uses when the settings configure the given one (null: none configured).';

create or replace function memory.recall_model() returns text
language sql
stable
as $$ select memory_internal._recall_model((select e.model from memory.embedding_model() as e)) $$;

comment on function memory.recall_model() is
'The embedding model recall uses: the configured one once all chunks have its vectors, else the most '
'recently completed one; null when there are no vectors.';

-- Every stored vector has its model's dimensions (that it belongs to a registered model is a foreign key):
-- a vector of another length, written by a role that may insert its tenant's rows, would make the
-- model's shared HNSW index, built for every tenant, fail to build.
create or replace function memory_internal._vectors_match_their_model() returns trigger
language plpgsql
as $$
declare
    v_models text[];
    v_dims integer[];
    v_bad record;
begin
    -- The lengths written first, then the models': on Citus, a statement on a reference table cannot read a
    -- transition table.
    select array_agg(d.model), array_agg(d.dims) into v_models, v_dims
    from (select distinct n.model, vector_dims(n.embedding) as dims from new_rows as n) as d;
    select g.model, g.dims, m.dimensions into v_bad
    from unnest(v_models, v_dims) as g (model, dims)
    inner join memory.embedding_models as m on g.model = m.model
    where g.dims <> m.dimensions
    limit 1;
    if found then
        raise exception 'agent_memory: a vector of model % has % dimensions; the model has %', v_bad.model,
            v_bad.dims, v_bad.dimensions
            using errcode = 'invalid_parameter_value';
    end if;
    return null;
end
$$;

comment on function memory_internal._vectors_match_their_model() is
'Internal: trigger that refuses vectors whose dimensions are not their model''s.';

-- On insert and on update of both vector tables (a trigger with a transition table has one event).
do $triggers$
declare
    v_table text;
    v_event text;
begin
    foreach v_table in array array['chunk_embeddings', 'session_embeddings'] loop
        foreach v_event in array array['insert', 'update'] loop
            execute format('drop trigger if exists %I on memory.%I', v_table || '_dimensions_on_' || v_event, v_table);
            execute format(
                'create trigger %I after %s on memory.%I referencing new table as new_rows '
                'for each statement execute function memory_internal._vectors_match_their_model()',
                v_table || '_dimensions_on_' || v_event, v_event, v_table
            );
        end loop;
    end loop;
end
$triggers$;
