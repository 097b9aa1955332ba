-- Enrichment of one session: index chunks (with full-text vectors), their embeddings, the summary and
-- the session embedding. Work already done for unchanged text is never repeated.

-- The text search configuration a name stands for, or null when it names none (an unknown name, an unknown
-- schema, or not a name at all).
create or replace function memory_internal._regconfig_or_null(name text) returns regconfig
language plpgsql
stable
as $$
begin
    return name::regconfig;
exception when undefined_object or invalid_name or syntax_error or invalid_schema_name
    or invalid_text_representation then
    return null;
end
$$;

comment on function memory_internal._regconfig_or_null(text) is
'Internal: the text search configuration a name stands for, or null if it names none.';

-- text_search_config names a configuration of this database; a name, not a number (regconfig reads digits as
-- an object id, which it does not check).
create or replace function memory_internal._check_text_search_config(value jsonb) returns void
language plpgsql
stable
as $$
begin
    if not exists (
        select from pg_catalog.pg_ts_config as c
        where (value #>> '{}') !~ '^\s*[0-9]+\s*$' and c.oid = memory_internal._regconfig_or_null(value #>> '{}')
    ) then
        raise exception 'agent_memory: setting "text_search_config" must name a text search configuration '
            'of this database (see pg_ts_config), got %', value;
    end if;
end
$$;

comment on function memory_internal._check_text_search_config(jsonb) is
'Internal: an error unless the value names a text search configuration of this database.';

-- The chunks the indexing settings produce for a session's turns: each chunk's own text, and for a
-- turn's first chunk the preceding turns' text as context with the key of the turn just before it. The
-- words of remembered claims (claims) are each indexed on their own, however short.
create or replace function memory_internal._chunk_turns(turns jsonb, settings jsonb, claims boolean default false)
returns table (turn_id bigint, chunk_no integer, text text, context text, context_turn_id bigint)
language plpython3u
volatile
as $$
@load_python@
import json
from agent_memory_db import indexing
policy = indexing.policy_from_settings(json.loads(settings), claims)
chunks = indexing.index_chunks(json.loads(turns), policy)
return [(c.turn_id, c.chunk_no, c.text, c.context, c.context_turn_id) for c in chunks]
$$;

comment on function memory_internal._chunk_turns(jsonb, jsonb, boolean) is
'Internal: the chunks to index for a session''s turns (noise filtered, long turns split, context beside; '
'claims: each turn on its own, whatever its length).';

create or replace function memory_internal._summarize_turns(turns jsonb, settings jsonb)
returns table (method text, summary text, decisions jsonb, open_loops jsonb)
language plpython3u
as $$
@load_python@
import json
from agent_memory_db import summarize
config = json.loads(plpy.execute(plpy.prepare("select memory_internal._trusted_settings($1) as s", ["jsonb"]), [settings])[0]["s"])
if config["summarizer"] == "llm":
    answer = plpy.execute(plpy.prepare("select memory_internal._llm_chat('summary', $1, $2) as a", ["jsonb", "jsonb"]),
                          [turns, settings])[0]["a"]
    try:
        result = summarize.parse_llm_summary(answer)
    except ValueError as exc:
        plpy.error("agent_memory: llm summary failed: %s" % exc)
else:
    result = summarize.extractive(json.loads(turns), int(config["summary_sentences"]))
return [(result.method, result.text, json.dumps(result.decisions), json.dumps(result.open_loops))]
$$;

comment on function memory_internal._summarize_turns(jsonb, jsonb) is
'Internal: a session summary with decisions and open loops, extractive or from the llm endpoint.';

-- What a session's summary is made from: a hash of its turns' contents in order. A summary made from the
-- same turns is not made again.
create or replace function memory_internal._session_source_sha256(tenant text, session bigint) returns bytea
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return (
        select sha256(convert_to(coalesce(string_agg(encode(t.content_sha256, 'hex'), ',' order by t.position), ''), 'UTF8'))
        from memory.turns as t where t.tenant_id = tenant and t.session_key = session
    );
end
$$;

comment on function memory_internal._session_source_sha256(text, bigint) is
'Internal: the hash of a session''s turns that its summary records (summaries.source_sha256).';

-- A session's turns as the Python side reads them (chunking, summary, extraction), in order; unindexed:
-- those without a chunk yet alone.
create or replace function memory_internal._session_turns(tenant text, session bigint, unindexed boolean default false)
returns jsonb
language plpgsql
stable
as $$
begin
    return (
        select coalesce(jsonb_agg(jsonb_build_object(
                    'turn_id', t.turn_id, 'role', t.role, 'name', t.speaker, 'content', t.content,
                    'tool_calls', t.tool_calls, 'entities', t.metadata -> 'entities')
                    order by t.position), '[]')
        from memory.turns as t
        where t.tenant_id = tenant and t.session_key = session
            and (not unindexed or not exists (
                select from memory.chunks as c where c.tenant_id = tenant and c.turn_id = t.turn_id
            ))
    );
end
$$;

comment on function memory_internal._session_turns(text, bigint, boolean) is
'Internal: a session''s turns as JSON, in order, as chunking, summaries and extraction read them (unindexed: '
'those without a chunk yet).';

-- Of a session's chunks, those without a vector of the model for their text as it is now. Each is looked
-- up by its key (a lateral subquery the limit keeps from being flattened): the plan is kept for the
-- backend, and an anti join planned while the table was small would scan every vector of the tenant.
create or replace function memory_internal._chunks_to_embed(
    tenant text, turn_ids bigint[], chunk_nos integer[], texts text[], model text
)
returns table (turn_id bigint, chunk_no integer, text text)
language plpgsql
stable
as $$
begin
    return query
    select n.turn_id, n.chunk_no, n.text
    from unnest(turn_ids, chunk_nos, texts) as n (turn_id, chunk_no, text)
    left join lateral (
        select true as embedded from memory.chunk_embeddings as e
        where e.tenant_id = tenant and e.turn_id = n.turn_id and e.chunk_no = n.chunk_no
            and e.model = _chunks_to_embed.model and e.text_sha256 = sha256(convert_to(n.text, 'UTF8'))
        limit 1
    ) as e on true
    where e.embedded is null;
end
$$;

comment on function memory_internal._chunks_to_embed(text, bigint[], integer[], text[], text) is
'Internal: the chunks (of those given) that have no vector of the model for their current text.';

-- Embeds what the enrichment of several sessions of this tenant will embed, in one call, and keeps the
-- vectors for those enrichments (memory_internal._keep_vectors_ahead): sorted by length across the
-- sessions, the model's batches waste less on padding and on per-batch work than a session at a time.
-- Nothing is written; a session that changes meanwhile embeds what it lacks itself.
create or replace function memory_internal._embed_sessions_ahead(tenant text, sessions bigint[]) returns void
language plpgsql
as $$
declare
    v_settings jsonb := memory_internal._settings_json();
    v_model record;
    v_texts text [];
begin
    select * into v_model from memory_internal._embedding_model(v_settings);
    if v_model is null or v_model.provider = 'client' then
        return;
    end if;
    select array_agg(distinct e.text) into v_texts
    from unnest(sessions) as s (session_key)
    cross join lateral (
        select array_agg(n.turn_id) as keys, array_agg(n.chunk_no) as nos, array_agg(n.text) as texts
        from memory_internal._chunk_turns(
            memory_internal._session_turns(tenant, s.session_key), v_settings,
            (select x.source = 'remember' from memory.sessions as x where x.tenant_id = tenant and x.session_key = s.session_key)
        ) as n
    ) as c
    cross join lateral memory_internal._chunks_to_embed(tenant, c.keys, c.nos, c.texts, v_model.model) as e;
    if v_texts is not null then
        perform memory_internal._keep_vectors_ahead(v_model.model, v_texts,
                                                    memory_internal._embed_texts(v_texts, v_settings));
    end if;
end
$$;

comment on function memory_internal._embed_sessions_ahead(text, bigint[]) is
'Internal: embeds in one call the chunks the enrichment of these sessions will need, kept for it.';

-- A session's chunks as the settings now make them: unchanged ones kept, changed ones replaced, those the
-- settings no longer produce dropped (only_these: of the chunks' turns alone, the others kept).
create or replace function memory_internal._write_chunks(
    tenant text, session bigint, config regconfig, turn_ids bigint[], chunk_nos integer[], texts text[],
    contexts text[], context_turn_ids bigint[], only_these boolean default false
) returns void
language plpgsql
as $$
begin
    delete from memory.chunks as c
    where c.tenant_id = tenant and c.session_key = session and (not only_these or c.turn_id = any(turn_ids))
        and not exists (
            select from unnest(turn_ids, chunk_nos) as n (turn_id, chunk_no)
            where n.turn_id = c.turn_id and n.chunk_no = c.chunk_no
        );
    -- The own words keep tsvector weight D (the default), the context is weight C: memory_internal._chunk_bm25
    -- weighs them apart. Only chunks whose text, context or full-text vector changed are written.
    insert into memory.chunks as c (tenant_id, turn_id, chunk_no, session_key, agent_id, text, text_sha256, tsv,
                                    length, context_turn_id, context_length, cold)
    select tenant, n.turn_id, n.chunk_no, session, t.agent_id, n.text, sha256(convert_to(n.text, 'UTF8')),
           v.own || setweight(v.context, 'C'), memory_internal._tsv_length(v.own), n.context_turn_id,
           memory_internal._tsv_length(v.context), memory_internal._turn_is_cold(tenant, session, n.turn_id)
    from unnest(turn_ids, chunk_nos, texts, contexts, context_turn_ids)
        as n (turn_id, chunk_no, text, context, context_turn_id)
    inner join memory.turns as t on t.tenant_id = tenant and n.turn_id = t.turn_id
    cross join lateral (select to_tsvector(config, n.text) as own, to_tsvector(config, n.context) as context) as v
    order by n.turn_id, n.chunk_no
    on conflict (tenant_id, turn_id, chunk_no) do update
    set text = excluded.text, text_sha256 = excluded.text_sha256, tsv = excluded.tsv, length = excluded.length,
        context_turn_id = excluded.context_turn_id, context_length = excluded.context_length, cold = excluded.cold
    where c.text_sha256 <> excluded.text_sha256 or c.tsv <> excluded.tsv
        or c.context_turn_id is distinct from excluded.context_turn_id or c.cold <> excluded.cold;
end
$$;

comment on function memory_internal._write_chunks(
    text, bigint, regconfig, bigint[], integer[], text[], text[], bigint[], boolean
) is
'Internal: writes a session''s chunks as the settings now make them (unchanged ones kept, stale ones dropped; '
'only_these: of the chunks'' turns alone).';

-- A session's chunk vectors: those of changed text dropped, the new ones (or the caller's vectors) written,
-- in the HNSW graph once the tenant is large enough to be searched approximately (memory.maintain adds the
-- vectors it wrote before), and each on the side of its chunk (cold or not).
create or replace function memory_internal._write_chunk_vectors(
    tenant text, session bigint, provider text, embedding_model text, turn_ids bigint[], chunk_nos integer[],
    texts text[], vectors vector[]
) returns void
language plpgsql
as $$
declare
    v_in_graph boolean := memory_internal._in_graph(tenant);
begin
    -- The session's vectors: those of changed text dropped, those whose chunk changed side moved (out of the
    -- graph until memory.maintain puts them in their side's). Each vector is found by its chunk's whole key,
    -- in a lateral subquery that offset 0 keeps from being flattened, and written back by its row (so each
    -- statement here): a join by the tenant, planned while the statistics took a growing tenant for one row,
    -- read all the tenant's vectors for each chunk of the session (3.4 s a session at 5,500 chunks). The rows
    -- to write are locked as they are found, so that the row written is the version found (maintenance may be
    -- putting it into a graph meanwhile).
    with vectors as materialized (
        select x.ctid as row_id, x.text_sha256 <> c.text_sha256 as stale, c.cold as chunk_cold
        from memory.chunks as c
        cross join lateral (
            select y.ctid, y.text_sha256 from memory.chunk_embeddings as y
            where y.tenant_id = tenant and y.turn_id = c.turn_id and y.chunk_no = c.chunk_no
                and (y.text_sha256 <> c.text_sha256 or y.cold <> c.cold)
            for update
            offset 0
        ) as x
        where c.tenant_id = tenant and c.session_key = session
    ),
    dropped as (
        delete from memory.chunk_embeddings as e using vectors as v
        where e.tenant_id = tenant and e.ctid = v.row_id and v.stale
    )
    update memory.chunk_embeddings as e set cold = v.chunk_cold, in_graph = false
    from vectors as v
    where e.tenant_id = tenant and e.ctid = v.row_id and not v.stale;
    if provider = 'client' then
        insert into memory.chunk_embeddings (tenant_id, turn_id, chunk_no, model, text_sha256, embedding, in_graph,
                                             cold)
        select c.tenant_id, c.turn_id, c.chunk_no, 'client', c.text_sha256, t.client_embedding, v_in_graph, c.cold
        from memory.chunks as c
        cross join lateral (
            select y.client_embedding from memory.turns as y where y.tenant_id = c.tenant_id and y.turn_id = c.turn_id
            offset 0
        ) as t
        where c.tenant_id = tenant and c.session_key = session and t.client_embedding is not null
        on conflict do nothing;
    elsif texts is not null then
        insert into memory.chunk_embeddings (tenant_id, turn_id, chunk_no, model, text_sha256, embedding, in_graph,
                                             cold)
        select tenant, k.turn_id, k.chunk_no, embedding_model, sha256(convert_to(k.text, 'UTF8')), k.embedding,
               v_in_graph, c.cold
        from unnest(turn_ids, chunk_nos, texts, vectors) as k (turn_id, chunk_no, text, embedding)
        cross join lateral (
            select y.cold from memory.chunks as y
            where y.tenant_id = tenant and y.turn_id = k.turn_id and y.chunk_no = k.chunk_no
            offset 0
        ) as c
        on conflict (tenant_id, turn_id, chunk_no, model) do update
        set text_sha256 = excluded.text_sha256, embedding = excluded.embedding, in_graph = excluded.in_graph,
            cold = excluded.cold;
    end if;
    perform memory_internal._mark_ready_if_complete(embedding_model);
end
$$;

comment on function memory_internal._write_chunk_vectors(
    text, bigint, text, text, bigint[], integer[], text[], vector[]
) is 'Internal: writes the vectors of a session''s chunks (or the caller''s), dropping those of changed text.';

-- new_turns_only: a commit to the session 'remembered' enriches its new turns alone. Its turns are claims
-- each indexed on its own, so the others' chunks, vectors and mentions stay as they are; without it, a
-- remember read every claim the agent holds again.
create or replace function memory_internal._enrich_session(
    tenant text, session bigint, new_turns_only boolean default false
) returns void
language plpgsql
as $$
declare
    v_settings jsonb := memory_internal._settings_json();
    v_config regconfig := (v_settings ->> 'text_search_config')::regconfig;
    v_model record;
    v_turns jsonb;
    v_source bytea;
    v_source_kind text := (select s.source from memory.sessions as s where s.tenant_id = tenant and s.session_key = session);
    v_summary record;
    v_summarized boolean := false;
    v_named text;
    v_chunk_keys bigint [];
    v_chunk_nos integer [];
    v_chunk_texts text [];
    v_chunk_contexts text [];
    v_chunk_context_keys bigint [];
    v_texts text [];
    v_keys bigint [];
    v_chunks integer [];
    v_vectors vector [];
    v_proposed text;
    v_partial boolean := new_turns_only and v_source_kind = 'remember';
begin
    v_turns := memory_internal._session_turns(tenant, session, unindexed => v_partial);
    if v_partial and v_turns = '[]' then
        return;
    end if;
    -- What a summary is made from; remembered claims are not summarized, and a remember need not read them all.
    if v_source_kind is distinct from 'remember' then
        v_source := memory_internal._session_source_sha256(tenant, session);
    end if;

    select * into v_model from memory_internal._embedding_model(v_settings);
    -- A model recorded already (and not retired) needs no registering: the common case, read cheaply.
    if v_model is not null and not exists (
        select from memory.embedding_models as m where m.model = v_model.model and m.state <> 'retired'
    ) then
        perform memory_internal._register_model();
    end if;

    -- The model, the summarizer and the llm extractor run first, so that the writes below (whose BM25
    -- statistics rows other workers also update) hold their locks only for the end of the transaction.
    select coalesce(array_agg(n.turn_id), '{}'), coalesce(array_agg(n.chunk_no), '{}'), coalesce(array_agg(n.text), '{}'),
           coalesce(array_agg(n.context), '{}'), coalesce(array_agg(n.context_turn_id), '{}')
    into v_chunk_keys, v_chunk_nos, v_chunk_texts, v_chunk_contexts, v_chunk_context_keys
    -- Remembered claims are each on its own: the claim before one is no context of it (it would make a
    -- claim match the words of another, even of one superseded since), and one is short because it is.
    from memory_internal._chunk_turns(v_turns, v_settings, v_source_kind = 'remember') as n;
    if v_model is not null and v_model.provider <> 'client' then
        select array_agg(n.text), array_agg(n.turn_id), array_agg(n.chunk_no) into v_texts, v_keys, v_chunks
        from memory_internal._chunks_to_embed(tenant, v_chunk_keys, v_chunk_nos, v_chunk_texts, v_model.model) as n;
        if v_texts is not null then
            v_vectors := memory_internal._embed_texts(v_texts, v_settings);
        end if;
    end if;
    -- Remembered facts are listed one by one wherever they are used; their session is not summarized.
    if v_settings ->> 'summarizer' <> 'none' and v_source_kind is distinct from 'remember' and not exists (
        select from memory.summaries as s
        where s.tenant_id = tenant and s.session_key = session
            and (s.method = 'caller' or s.source_sha256 = v_source)
    ) then
        select * into v_summary from memory_internal._summarize_turns(v_turns, v_settings);
        v_summarized := true;
    end if;
    if v_settings ->> 'entity_extractor' = 'llm' then
        v_named := memory_internal._llm_chat('entities', v_turns, v_settings);
    end if;
    if v_settings ->> 'memory_extractor' = 'llm' and v_source_kind is distinct from 'remember' then
        v_proposed := memory_internal._llm_chat('memories', v_turns, v_settings);
    end if;

    -- Curated memories and entity state changes the session's users state (a remembered fact is one
    -- already), before the writes below: remembering embeds each claim to look for a paraphrase.
    if v_settings ->> 'memory_extractor' <> 'none' and v_source_kind is distinct from 'remember' then
        perform memory_internal._extract_memories(tenant, session, v_turns, v_settings, v_proposed);
        if (v_settings ->> 'entity_state_extraction')::boolean then
            perform memory_internal._extract_states(tenant, session, v_turns, v_settings, v_proposed);
        end if;
    end if;

    perform memory_internal._count(tenant, array['turns_indexed'], array[''], array[(
        select count(distinct k.turn_id) from unnest(v_chunk_keys) as k (turn_id)
    )]);

    perform memory_internal._write_chunks(tenant, session, v_config, v_chunk_keys, v_chunk_nos, v_chunk_texts,
                                          v_chunk_contexts, v_chunk_context_keys, v_partial);
    if v_model is not null then
        perform memory_internal._write_chunk_vectors(tenant, session, v_model.provider, v_model.model, v_keys,
                                                     v_chunks, v_texts, v_vectors);
    end if;

    if v_settings ->> 'entity_extractor' <> 'none' then
        perform memory_internal._write_mentions(tenant, session, v_turns, v_settings, v_named, v_partial);
    end if;

    -- (The time written is the proposed row's: Citus takes no function that is not immutable in the update.)
    if v_summarized then
        insert into memory.summaries as s (tenant_id, session_key, method, summary, decisions, open_loops,
                                           source_sha256, tsv, cold)
        values (tenant, session, v_summary.method, v_summary.summary, v_summary.decisions, v_summary.open_loops,
                v_source, to_tsvector(v_config, v_summary.summary), memory_internal._session_is_cold(tenant, session))
        on conflict (tenant_id, session_key) do update
        set method = excluded.method, summary = excluded.summary, decisions = excluded.decisions,
            open_loops = excluded.open_loops, source_sha256 = excluded.source_sha256, tsv = excluded.tsv,
            cold = excluded.cold, created_at = excluded.created_at;
    end if;

    -- A session's vector is the gist of one conversation. The claims of a session 'remembered' are each their
    -- own: their mean is nobody's gist, and recomputing it over every claim slowed each remember as they grew.
    if v_model is not null and v_source_kind is distinct from 'remember' then
        perform memory_internal._embed_session(tenant, session, v_model.model);
    end if;

end
$$;

comment on function memory_internal._enrich_session(text, bigint, boolean) is
'Internal: enriches one session (chunks, embeddings, summary, session embedding, entity mentions, curated '
'memories its users state), skipping unchanged work; new_turns_only: of the session ''remembered'', its turns '
'not indexed yet alone.';

-- The session's vector: the normalized mean of its chunks' vectors under one model (no model call).
-- Each chunk's vector is looked up by its whole key (a lateral subquery the limit keeps from being
-- flattened): a join planned on a tenant's first, unanalyzed rows scanned all its vectors per chunk.
-- plpgsql, not sql, for the same reason as memory_internal._settings_json: its plan is kept. The row is
-- computed first and then written (on Citus, an insert whose select aggregates a distributed table is
-- planned in parts whose rows go to other nodes).
create or replace function memory_internal._embed_session(tenant text, session bigint, model text) returns void
language plpgsql
as $$
declare
    v_sha256 bytea;
    v_embedding vector;
    v_in_graph boolean := memory_internal._in_graph(tenant);
    v_cold boolean := memory_internal._session_is_cold(tenant, session);
begin
    select sha256(string_agg(c.text_sha256, '' order by c.turn_id, c.chunk_no)), l2_normalize(avg(ce.embedding))
    into v_sha256, v_embedding
    from memory.chunks as c
    cross join lateral (
        select e.embedding from memory.chunk_embeddings as e
        where e.tenant_id = tenant and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no
            and e.model = _embed_session.model
        limit 1
    ) as ce
    where c.tenant_id = tenant and c.session_key = session;
    if v_embedding is null then
        return;
    end if;
    insert into memory.session_embeddings as e (tenant_id, session_key, model, text_sha256, embedding, in_graph,
                                                cold)
    values (tenant, session, _embed_session.model, v_sha256, v_embedding, v_in_graph, v_cold)
    on conflict on constraint session_embeddings_pkey do update
    set text_sha256 = excluded.text_sha256, embedding = excluded.embedding, in_graph = excluded.in_graph,
        cold = excluded.cold
    where e.text_sha256 <> excluded.text_sha256 or e.cold <> excluded.cold;
end
$$;

comment on function memory_internal._embed_session(text, bigint, text) is
'Internal: a session''s vector under one model, the normalized mean of its chunks'' vectors.';

-- The key of this tenant's session named session_id: of agent_id, or, when agent_id is null, of whichever
-- agent has it (an error if several do). An unknown one is an error that says where the session is.
-- Every call that addresses an existing session follows this rule; calls that create one default to
-- agent 'default'.
create or replace function memory_internal._session_key(session_id text, agent_id text) returns bigint
language plpgsql
stable
as $$
declare
    v_tenant text := memory.current_tenant();
    v_keys bigint [];
    v_agents text [];
    v_where text;
begin
    select array_agg(s.session_key order by s.agent_id), array_agg(s.agent_id order by s.agent_id)
    into v_keys, v_agents
    from memory.sessions as s
    where s.tenant_id = v_tenant and s.session_id = _session_key.session_id;
    if _session_key.agent_id is null and cardinality(v_agents) = 1 then
        return v_keys[1];
    elsif _session_key.agent_id is null and cardinality(v_agents) > 1 then
        raise exception 'agent_memory: session "%" exists for agents %: say which with agent_id',
            _session_key.session_id, (select string_agg(format('"%s"', a), ', ') from unnest(v_agents) as a)
            using errcode = 'invalid_parameter_value';
    elsif _session_key.agent_id = any (v_agents) then
        return v_keys[array_position(v_agents, _session_key.agent_id)];
    end if;
    v_where := case when _session_key.agent_id is null then '' else format(' for agent "%s"', _session_key.agent_id) end;
    if v_agents is not null then
        raise exception 'agent_memory: no session "%"%; it exists for agent %', _session_key.session_id, v_where,
            (select string_agg(format('"%s"', a), ', ') from unnest(v_agents) as a)
            using errcode = 'no_data_found', hint = 'pass that agent_id, or leave agent_id out';
    end if;
    raise exception 'agent_memory: no session "%"% in tenant "%"', _session_key.session_id, v_where,
        v_tenant using errcode = 'no_data_found';
end
$$;

comment on function memory_internal._session_key(text, text) is
'Internal: the key of a session of this tenant (of any agent when agent_id is null, if only one has it), '
'or an error naming the session and the agents that have it.';

create or replace function memory.enrich(session_id text, agent_id text default null)
returns table (chunks integer, embedded integer, summary text)
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_session bigint := memory_internal._session_key(enrich.session_id, enrich.agent_id);
begin
    perform memory_internal._enrich_session(v_tenant, v_session);
    return query
    select (select count(*)::integer from memory.chunks as c where c.tenant_id = v_tenant and c.session_key = v_session),
           (select count(*)::integer from memory.chunk_embeddings as e
            inner join memory.chunks as c using (tenant_id, turn_id, chunk_no)
            where c.tenant_id = v_tenant and c.session_key = v_session),
           (select s.summary from memory.summaries as s where s.tenant_id = v_tenant and s.session_key = v_session);
end
$$;

comment on function memory.enrich(text, text) is
'Enriches one session now: index chunks, embeddings, summary and session embedding. Returns the counts. '
'Without agent_id, the session of whichever agent has it.';

-- After index settings change (roles, chunk size, context, text search configuration), sessions enriched
-- before keep their old index: reindex queues them for enrichment again, which rewrites what the settings
-- now produce and re-embeds only chunks whose text changed.
create or replace function memory.reindex(agent_id text default null, session_id text default null)
returns table (sessions bigint, jobs bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_session bigint;
begin
    if reindex.session_id is not null then
        v_session := memory_internal._session_key(reindex.session_id, reindex.agent_id);
    end if;
    return query
    with in_scope as (
        select s.session_key from memory.sessions as s
        where s.tenant_id = v_tenant
            and (reindex.agent_id is null or s.agent_id = reindex.agent_id)
            and (v_session is null or s.session_key = v_session)
    ),
    queued as (
        insert into memory.jobs (tenant_id, kind, session_key)
        select v_tenant, 'enrich', i.session_key from in_scope as i
        on conflict (tenant_id, kind, session_key) where status = 'queued' do nothing
        returning 1
    )
    select (select count(*) from in_scope), (select count(*) from queued);
end
$$;

comment on function memory.reindex(text, text) is
'Queues every session in scope (this tenant, optionally one agent or one session) for enrichment again, '
'after index settings changed; unchanged chunks keep their vectors. Returns the sessions in scope and the '
'jobs queued (a session already queued is not queued twice). Run the queue with call memory.work() or '
'agent-memory work.';

create or replace function memory.set_summary(
    session_id text, summary text, decisions jsonb default '[]', open_loops jsonb default '[]',
    agent_id text default null
) returns void
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_session bigint;
begin
    if jsonb_typeof(decisions) <> 'array' or jsonb_typeof(open_loops) <> 'array' then
        raise exception 'agent_memory: decisions and open_loops must be JSON arrays';
    end if;
    v_session := memory_internal._session_key(set_summary.session_id, set_summary.agent_id);
    insert into memory.summaries as s (tenant_id, session_key, method, summary, decisions, open_loops, tsv, cold)
    values (v_tenant, v_session, 'caller', set_summary.summary, set_summary.decisions, set_summary.open_loops,
            to_tsvector((memory.setting('text_search_config') #>> '{}')::regconfig, set_summary.summary),
            memory_internal._session_is_cold(v_tenant, v_session))
    on conflict (tenant_id, session_key) do update
    set method = 'caller', summary = excluded.summary, decisions = excluded.decisions,
        open_loops = excluded.open_loops, source_sha256 = null, tsv = excluded.tsv, cold = excluded.cold,
        created_at = excluded.created_at;
end
$$;

comment on function memory.set_summary(text, text, jsonb, jsonb, text) is
'Stores the caller''s own summary of a session (of agent_id, or of whichever agent has it); enrichment then '
'leaves it as it is.';
