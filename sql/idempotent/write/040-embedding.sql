-- Embedding: the model the settings choose, one call that embeds texts with it, secrets for
-- endpoints, and a partial HNSW index per model.

-- Stores a secret (such as openai_api_key) where only the extension's owner can read it, for one origin
-- (scheme://host[:port]): it is sent to no other, nor over another scheme. The origin is the one of
-- `url` (a bare host means https), or by default that of the endpoint configured for it now
-- (rerank_url for rerank_api_key, openai_base_url otherwise).
create or replace function memory.set_secret(name text, value text, url text default null) returns void
language plpgsql
as $$
declare
    v_url text := coalesce(
        url,
        memory.setting(case when name = 'rerank_api_key' then 'rerank_url' else 'openai_base_url' end) #>> '{}'
    );
    v_origin text := lower(substring(
        case when v_url ~ '^[A-Za-z][A-Za-z0-9+.-]*://' then v_url else 'https://' || v_url end
        from '^([Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9.:\[\]-]+)(?:[/?#]|$)'
    ));
begin
    -- (On Citus it runs as its caller, memory_internal._adapt_to_citus: elsewhere as the owner.)
    if current_user <> 'memory_owner'
        and not (select r.rolsuper from pg_catalog.pg_roles as r where r.rolname = current_user) then
        raise exception 'agent_memory: on a Citus cluster a superuser stores secrets' using
            errcode = 'insufficient_privilege',
            hint = 'Citus writes them on every node as the role that calls memory.set_secret; memory_owner may not '
                   'log in to a node, and memory_admin may not write them itself.';
    end if;
    if name is null or name !~ '^[a-z][a-z0-9_]{0,62}$' then
        raise exception 'agent_memory: secret name must be lower-case letters, digits and _, got %', name;
    end if;
    if value is null or value = '' then
        raise exception 'agent_memory: secret % needs a value', name;
    end if;
    if v_origin is null then
        raise exception 'agent_memory: secret % needs the http or https URL it is for, got %', name,
            coalesce(v_url, 'none')
            using hint = 'pass it: memory.set_secret(name, value, ''https://api.example.com'')';
    end if;
    insert into memory_internal._secrets as s (name, value, origin) values (set_secret.name, set_secret.value, v_origin)
    on conflict on constraint _secrets_pkey do update set value = excluded.value, origin = excluded.origin;
end
$$;

comment on function memory.set_secret(text, text, text) is
'Stores a secret for one origin (memory_admin), e.g. select memory.set_secret(''openai_api_key'', ''sk-...'', '
'''https://api.openai.com''); without a URL, the origin of the endpoint configured now. It is sent to no '
'other scheme, host or port, and readable by no role but the owner.';

-- The embedding model that settings (as from memory_internal._settings_json()) choose; no row for embedder = none.
-- The local model is the one whose files the in-database package loads: its name and dimensions are written
-- there alone (agent_memory_db/embedder.py), and the build puts them here.
create or replace function memory_internal._embedding_model(settings jsonb)
returns table (provider text, model text, dimensions integer)
language sql
immutable
as $$
    select settings ->> 'embedder',
           case settings ->> 'embedder'
               when 'local' then '@local_model@'
               when 'openai' then settings ->> 'openai_embedding_model'
               else 'client'
           end,
           case settings ->> 'embedder'
               when 'local' then @local_dimensions@
               when 'openai' then (settings ->> 'openai_embedding_dimensions')::integer
               else (settings ->> 'client_dimensions')::integer
           end
    where settings ->> 'embedder' <> 'none'
$$;

comment on function memory_internal._embedding_model(jsonb) is
'Internal: the embedding model that the given settings choose.';

create or replace function memory.embedding_model()
returns table (provider text, model text, dimensions integer)
language sql
stable
as $$ select * from memory_internal._embedding_model(memory_internal._settings_json()) $$;

comment on function memory.embedding_model() is
'The embedding model the settings choose (provider, model, dimensions); no row when embedder = none.';

-- Writes a line to the server log and never to the client, whatever its client_min_messages: the whole
-- story of an endpoint's failure, which may hold what the endpoint wrote (a provider's 401 may echo the key,
-- masked), is for the administrators who read the log. Tenants get the summary (the status and a fixed
-- message).
create or replace function memory_internal._server_log(message text) returns void
language plpgsql
set client_min_messages = error
as $$
begin
    raise log 'agent_memory: %', message;
end
$$;

comment on function memory_internal._server_log(text) is
'Internal: writes a line to the server log only (never sent to the client).';

-- Runs as the owner so the endpoint's key can be read; it returns only vectors. The key goes only to the
-- origin it was stored for, and which endpoint and model are used is the administrator's choice (settings
-- set_by admin: a session's value of one counts only for memory_admin, see memory_internal._check_set_by).
-- registered: a registered model other than the one the settings choose (recall's, while a new one is built),
-- whose provider and name replace theirs; the endpoint and its key stay the settings'.
drop function if exists memory_internal._embed_texts(text[], jsonb);
create or replace function memory_internal._embed_texts(texts text[], settings jsonb, registered text default null)
returns vector[]
language plpython3u
as $$
@load_python@
import json
from agent_memory_db import embedding, openai_compat, secrets
config = json.loads(plpy.execute(plpy.prepare("select memory_internal._trusted_settings($1) as s", ["jsonb"]), [settings])[0]["s"])
try:
    key = None
    if config["embedder"] == "openai":
        rows = plpy.execute("select value, origin from memory_internal._secrets where name = 'openai_api_key'")
        stored = (rows[0]["value"], rows[0]["origin"]) if rows else None
        key = secrets.key_for("openai_api_key", config["openai_base_url"], stored)
    if registered is not None:
        rows = plpy.execute(plpy.prepare("select provider, dimensions from memory.embedding_models where model = $1",
                                         ["text"]), [registered])
        if not rows:
            raise ValueError("no embedding model %s is registered" % registered)
        config = embedding.settings_for(config, embedding.Model(rows[0]["provider"], registered, rows[0]["dimensions"]))
    # Vectors kept ahead (memory_internal._keep_vectors_ahead) are handed out to their tenant and model only.
    model = embedding.model_of(config)
    owner = None
    if embedding.AHEAD in GD and model is not None:
        owner = (plpy.execute("select memory.current_tenant() as t")[0]["t"], model.name)
    # Between batches a cancel or statement timeout takes effect (pg_sleep checks for interrupts).
    return embedding.embed_text_form(config, texts or [], key, GD, owner,
                                     lambda: plpy.execute("select pg_catalog.pg_sleep(0)"))
except plpy.SPIError:
    raise
except Exception as exc:
    if isinstance(exc, openai_compat.ProviderError):
        plpy.execute(plpy.prepare("select memory_internal._server_log($1)", ["text"]), ["embedding failed: " + exc.detail])
    plpy.error("agent_memory: embedding failed: %s" % exc)
$$;

comment on function memory_internal._embed_texts(text[], jsonb, text) is
'Internal: embeds texts with the embedder the given settings choose, or with the registered model given '
'(those kept ahead for this tenant and model by memory_internal._keep_vectors_ahead are not embedded again).';

-- Keeps vectors made ahead of the enrichment jobs that will ask for them (memory.work embeds the chunks
-- of several sessions in one call: the model runs batches sorted across them), for this tenant and one
-- model, replacing any kept before.
create or replace function memory_internal._keep_vectors_ahead(model text, texts text[], vectors vector[])
returns void
language plpython3u
as $$
@load_python@
from agent_memory_db import embedding
embedding.keep_ahead(GD, (plpy.execute("select memory.current_tenant() as t")[0]["t"], model), texts or [],
                     vectors or [])
$$;

comment on function memory_internal._keep_vectors_ahead(text, text[], vector[]) is
'Internal: keeps vectors of texts for memory_internal._embed_texts to hand out in this backend (this tenant '
'and model only; one batch at a time).';

-- Stable, although an endpoint embedder is a call out: within one statement the same texts get the same
-- vectors (the model does not change mid-statement), and stable lets a query compare a column with
-- memory.embed('...')[1] through an index, which volatile would forbid.
create or replace function memory.embed(texts text[]) returns vector[]
language sql
stable
as $$ select memory_internal._embed_texts(texts, memory_internal._settings_json()) $$;

comment on function memory.embed(text[]) is
'Vectors for texts with the configured embedder (the local model by default), in the same order.';

-- The partial HNSW indexes of one model's vectors (each model has its own dimensions), over the vectors of
-- tenants large enough to search approximately (memory_internal._in_graph), in two graphs: what is not cold,
-- which recall searches by default, and what is cold, which it searches beside when asked for every tier
-- (a vector whose item's tier crosses cold leaves the graphs, and maintenance puts it into the other). The
-- graphs hold vectors at half
-- precision: on 32,000 real turns' vectors an insert took 38% less time than at full precision, for the
-- same recall@10 (0.993 against exact search), in half the space; search reranks by the exact distance
-- (memory_internal._nearest_sql).
create or replace function memory_internal._vector_indexes(model text)
returns table (index_name text, relation text, cold boolean)
language sql
immutable
as $$
    select format('%s_hnsw_%s%s', r.relation, case when c.cold then 'cold_' end, left(md5(model), 10)), r.relation,
           c.cold
    from unnest(array['chunk_embeddings', 'session_embeddings']) as r (relation)
    cross join unnest(array[false, true]) as c (cold)
$$;

comment on function memory_internal._vector_indexes(text) is
'Internal: the names of one embedding model''s HNSW indexes, their tables and which half (cold or not) each holds.';

-- The most dimensions an HNSW graph holds (pgvector's limit for halfvec): a model with more has none, and
-- recall searches its vectors exactly.
create or replace function memory_internal._graph_max_dimensions() returns integer
language sql
immutable parallel safe
as $$ select 4000 $$;

comment on function memory_internal._graph_max_dimensions() is
'Internal: the most dimensions a model''s vectors may have to be in an HNSW graph (pgvector''s halfvec limit).';

-- The statement that makes a partial HNSW index of one model's vectors at half precision, by cosine, of one side
-- of cold: the shared graphs (memory_internal._ensure_vector_index) and, with a tenant, the graph of that tenant's
-- chunk vectors, built concurrently (memory.tenant_graph_statements).
create or replace function memory_internal._graph_index_statement(
    index_name text, relation text, dimensions integer, model text, cold boolean, tenant text default null
) returns text
language sql
immutable
as $$
    select format(
        'create index %s if not exists %I on memory.%I using hnsw ((embedding::halfvec(%s)) halfvec_cosine_ops) '
        'where model = %L and in_graph and %s cold%s',
        case when tenant is not null then 'concurrently' end, index_name, relation, dimensions, model,
        case when not cold then 'not' end, ' and tenant_id = ' || quote_literal(tenant)
    )
$$;

comment on function memory_internal._graph_index_statement(text, text, integer, text, boolean, text) is
'Internal: the create index statement of an HNSW graph of one model''s vectors, one side of cold (of one '
'tenant''s chunk vectors, built concurrently, when tenant is given).';

create or replace function memory_internal._ensure_vector_index(model text, dimensions integer) returns void
language plpgsql
as $$
declare
    v_index record;
begin
    if dimensions > memory_internal._graph_max_dimensions() then
        return;
    end if;
    for v_index in select * from memory_internal._vector_indexes(model) loop
        if to_regclass('memory.' || v_index.index_name) is null then
            execute memory_internal._graph_index_statement(
                v_index.index_name, v_index.relation, dimensions, model, v_index.cold
            );
        end if;
    end loop;
end
$$;

comment on function memory_internal._ensure_vector_index(text, integer) is
'Internal: creates the partial HNSW indexes (chunks and sessions, not cold and cold) for one embedding model.';

-- The default model's indexes ship with the extension; those of models used before are made again
-- (an upgrade to 0.3.0 drops them for the in_graph predicate, one to 0.4.0 to split them on cold, and
-- before 0.4.0 the client's vectors had none: recall read every one of a grown tenant's).
do $graphs$
declare
    v_models text [];
    v_dimensions integer [];
begin
    -- Listed first: an index cannot be made on a table the statement listing them still reads.
    select array_agg(m.model), array_agg(m.dimensions) into v_models, v_dimensions
    from (
        select
            m.model,
            m.dimensions
        from memory_internal._embedding_model('{"embedder": "local"}') as m
        union
        select
            m.model,
            m.dimensions
        from memory.embedding_models as m
        where m.state <> 'retired'
            -- Callers' vectors stored before 0.3.0 checked their dimensions may not all have the model's: those
            -- have no graph, and recall sorts them whole, as it did. (A model's own vectors are not read.)
            and (m.provider <> 'client' or not exists (
                select from memory.chunk_embeddings as e
                where e.model = m.model and vector_dims(e.embedding) <> m.dimensions
                union all
                select from memory.session_embeddings as e
                where e.model = m.model and vector_dims(e.embedding) <> m.dimensions
            ))
    ) as m;
    for i in 1 .. coalesce(cardinality(v_models), 0) loop
        perform memory_internal._ensure_vector_index(v_models[i], v_dimensions[i]);
    end loop;
end
$graphs$;

-- Whether a tenant's vectors belong in the HNSW graphs: once it holds more chunks than exact search
-- serves. Below that recall scans them exactly, and a graph kept current for them would cost each
-- chunk enrichment writes about a millisecond for nothing. plpgsql, so its plan is kept (see
-- memory_internal._settings_json).
create or replace function memory_internal._in_graph(tenant text) returns boolean
language plpgsql
stable
as $$
begin
    return (
        select coalesce(sum(k.chunks), 0) > (memory.setting('exact_search_max_chunks'))::bigint
        from memory.corpus as k
        where k.tenant_id = tenant
    );
end
$$;

comment on function memory_internal._in_graph(text) is
'Internal: whether a tenant''s vectors belong in the HNSW graphs (more chunks than exact_search_max_chunks).';

-- Puts a tenant's vectors that are still outside the graphs into them, once it has grown past the
-- threshold (a step of memory.maintain), at most batch of each kind: those the tenant wrote before it grew (the
-- threshold's worth, since enrichment puts a large tenant's new vectors in the graph itself) and those whose
-- item went to or left cold since (memory_internal._sync_cold), each into the graph of its side. Rows another
-- transaction holds are skipped, and the rest wait for the next runs; until then approximate search scans them
-- exactly.
drop function if exists memory_internal._join_graph(text);
create or replace function memory_internal._join_graph(tenant text, batch integer) returns void
language sql
as $$
    update memory.chunk_embeddings as e set in_graph = true
    where (e.tenant_id, e.turn_id, e.chunk_no, e.model) in (
        select o.tenant_id, o.turn_id, o.chunk_no, o.model from memory.chunk_embeddings as o
        where o.tenant_id = tenant and not o.in_graph
        limit batch
        for update skip locked
    );
    update memory.session_embeddings as e set in_graph = true
    where (e.tenant_id, e.session_key, e.model) in (
        select o.tenant_id, o.session_key, o.model from memory.session_embeddings as o
        where o.tenant_id = tenant and not o.in_graph
        limit batch
        for update skip locked
    );
$$;

comment on function memory_internal._join_graph(text, integer) is
'Internal: adds the tenant''s vectors still outside the HNSW graphs to them (rows locked elsewhere wait '
'for the next memory.maintain).';
