-- Settings: a catalog of defaults, DBA overrides in memory.config, per-session overrides with
-- `set memory.<key> = ...`. Precedence, highest first: per-call argument (where a function takes
-- one), session setting, memory.config, default.

-- Every setting the extension knows, with its default and the values it accepts: the fixed ones, and
-- the weight of each recall signal (weight_<name>, from memory.signals).
create or replace function memory.setting_definitions()
returns table (
    key text, default_value jsonb, value_type text, allowed jsonb,
    minimum numeric, maximum numeric, description text, set_by text
)
language sql
stable parallel safe
as $$
    -- Settings that choose an endpoint or a model (where text goes, and with which key), how long a
    -- call to one may take, and what maintenance deletes, are the administrator's: set in memory.config;
    -- a session or call may change them only for memory_admin.
    select d.*,
           case when d.key in ('embedder', 'summarizer', 'entity_extractor', 'memory_extractor', 'openai_base_url',
                               'openai_embedding_model', 'openai_embedding_dimensions', 'openai_chat_model',
                               'client_dimensions',
                               'http_timeout_seconds', 'http_retries', 'rerank', 'rerank_url', 'rerank_model',
                               'rerank_timeout_seconds', 'queue_keep_done_hours', 'model_retire_grace_hours',
                               'retention_batch')
                then 'admin' else 'session' end
    from (
    select 'weight_' || s.name, to_jsonb(s.default_weight), 'number', null::jsonb, 0::numeric, 100::numeric,
           'Weight of recall signal ' || s.name || ' (' || s.stage || '): ' || s.measures
    from memory.signals as s
    union all
    values
        ('embedder', '"local"'::jsonb, 'string', '["local", "openai", "client", "none"]'::jsonb,
         null::numeric, null::numeric,
         'Which embedder writes and queries vectors: local (all-MiniLM-L6-v2 inside the database), '
         || 'openai (an OpenAI-compatible endpoint), client (callers pass vectors) or none (full-text only).'),
        ('enrich', '"queue"', 'string', '["queue", "now", "none"]', null, null,
         'What commit does about enrichment by default: queue a job, enrich now, or nothing.'),
        ('max_message_chars', '10000000', 'integer', null, 1, 100000000,
         'The longest message commit accepts, in characters (indexing reads the first index_max_chunks chunks).'),
        ('index_roles', '["user", "assistant", "tool"]', 'array', '["user", "assistant", "system", "tool"]', null, null,
         'Roles whose turns are indexed for recall (a turn''s tool calls are indexed with it). After a change, '
         || 'memory.reindex() re-indexes what was enriched before.'),
        ('index_context_turns', '1', 'integer', null, 0, 10,
         'How many preceding indexed turns are indexed together with a turn, as its context.'),
        ('index_min_chars', '12', 'integer', null, 0, 1000,
         'Turns shorter than this are not indexed (with slash commands, confirmations, heartbeats).'),
        ('chunk_chars', '1500', 'integer', null, 100, 100000,
         'Long turns are split at sentence ends into chunks of at most this many characters.'),
        ('index_max_chunks', '16', 'integer', null, 1, 100000,
         'Indexing reads the first index_max_chunks x chunk_chars characters of a turn; the rest is stored, not indexed.'),
        ('context_weight', '0.85', 'number', null, 0, 1,
         'A turn is scored on its own words, or on them with the turn before it times this, whichever is higher.'),
        ('text_search_config', '"english"', 'string', null, null, null,
         'The text search configuration for full-text vectors of chunks and summaries.'),
        ('summarizer', '"extractive"', 'string', '["extractive", "llm", "none"]', null, null,
         'How sessions are summarized: extractive (deterministic, in the database), llm, or none.'),
        ('summary_sentences', '5', 'integer', null, 1, 50,
         'How many sentences the extractive summary keeps.'),
        ('openai_base_url', '"https://api.openai.com/v1"', 'string', null, null, null,
         'Base URL of the OpenAI-compatible endpoint (…/v1) for the openai embedder and llm summarizer.'),
        ('openai_embedding_model', '"text-embedding-3-small"', 'string', null, null, null,
         'The embedding model asked of the endpoint.'),
        ('openai_embedding_dimensions', '1536', 'integer', null, 1, 16000,
         'The dimensions that model returns (checked on every answer).'),
        ('openai_chat_model', '"gpt-4o-mini"', 'string', null, null, null,
         'The chat model that writes llm summaries.'),
        ('http_timeout_seconds', '30', 'number', null, 1, 600, 'Timeout of one HTTP request to the endpoint.'),
        ('http_retries', '2', 'integer', null, 0, 10,
         'Retries of a request that failed to connect or got 429 or 5xx, with exponential backoff.'),
        ('client_dimensions', '384', 'integer', null, 1, 16000,
         'Dimensions of vectors that callers pass with the client embedder.'),
        ('queue_max_attempts', '5', 'integer', null, 1, 100,
         'Attempts of a job before it is dead-lettered (status dead, error kept).'),
        ('queue_backoff_seconds', '10', 'number', null, 0, 86400,
         'Retry delay after the first failure; it doubles with each further failure.'),
        ('queue_lease_seconds', '300', 'number', null, 1, 86400,
         'How long a claimed job is leased to its worker; after that another worker may reclaim it.'),
        ('queue_keep_done_hours', '168', 'number', null, 0, 100000,
         'How long memory.maintain() keeps finished jobs (dead ones are kept until dealt with).'),
        ('model_retire_grace_hours', '24', 'number', null, 0, 100000,
         'How long memory.maintain() keeps the vectors of an embedding model recall no longer uses.'),
        ('retention_batch', '1000', 'integer', null, 1, 1000000,
         'How many sessions and memories one memory.maintain() run archives and removes per tenant (the rest go '
         'in the next runs).'),
        ('recall_candidates', '50', 'integer', null, 5, 5000,
         'How many chunks each candidate list (full-text, vectors) contributes before fusion.'),
        ('session_candidates', '5', 'integer', null, 0, 1000,
         'How many sessions the summary full-text and session-vector lists contribute (two chunks each).'),
        ('lexical_max_df', '300', 'integer', null, 1, 1000000000,
         'A query term found in more chunks than this still scores, but brings no full-text candidates by itself.'),
        ('fusion', '"zscore"', 'string', '["zscore", "rrf"]', null, null,
         'How the lists are fused: zscore (weighted sum of normalized scores) or rrf (reciprocal rank fusion).'),
        ('neighbor_previous_share', '0.5', 'number', null, 0, 1,
         'The share of the turn before''s fused score the neighbor signal counts (the turn after counts whole).'),
        ('rrf_k', '60', 'number', null, 1, 1000, 'The k of reciprocal rank fusion: 1 / (rrf_k + rank).'),
        ('rerank', '"none"', 'string', '["none", "http"]', null, null,
         'Rerank stage: none, or http (the top rerank_candidates turns sent to the rerank_url endpoint).'),
        ('rerank_url', '""', 'string', null, null, null,
         'URL of a rerank endpoint taking {model, query, documents, top_n} (Cohere, Jina, vLLM shape).'),
        ('rerank_model', '""', 'string', null, null, null, 'The model asked of the rerank endpoint (none sent if empty).'),
        ('rerank_candidates', '20', 'integer', null, 1, 1000, 'How many of the best fused turns the rerank stage reorders.'),
        ('rerank_timeout_seconds', '2', 'number', null, 0.1, 600,
         'Timeout of the rerank request; on timeout or error recall keeps the fused order and says so.'),
        ('recency_half_life_days', '30', 'number', null, 0.001, 100000, 'Half-life of the recency boost.'),
        ('period_half_life_days', '7', 'number', null, 0.001, 100000,
         'Half-life of the period boost outside the period a query names (days before or after it).'),
        ('trust_helpful_step', '0.1', 'number', null, 0, 10,
         'What a helpful verdict adds to a turn''s trust (up to trust_max).'),
        ('trust_unhelpful_factor', '0.5', 'number', null, 0, 1,
         'What an unhelpful verdict multiplies a turn''s trust by (down to trust_min): one no outweighs one yes.'),
        ('trust_min', '0.05', 'number', null, 0.000001, 1, 'The lowest trust feedback can leave a turn with.'),
        ('feedback_retract_after', '2', 'integer', null, 1, 1000,
         'How many agents must call a memory incorrect (memory.feedback verdict incorrect) for it to be retracted.'),
        ('feedback_stale_factor', '0.5', 'number', null, 0, 1,
         'What a stale verdict multiplies a memory''s importance by.'),
        ('trust_max', '2', 'number', null, 1, 100, 'The highest trust feedback can give a turn.'),
        ('bootstrap_max_chars', '4000', 'integer', null, 100, 1000000,
         'The character budget of memory.bootstrap() when the call does not give one.'),
        ('context_max_chars', '4000', 'integer', null, 100, 1000000,
         'The character budget of memory.context_for_task() when the call does not give one.'),
        ('bm25_k1', '0.9', 'number', null, 0, 10, 'BM25 term-frequency saturation.'),
        ('bm25_b', '0.4', 'number', null, 0, 1, 'BM25 length normalization.'),
        ('strip_speaker_names', 'true', 'boolean', null, null, null,
         'Leave speaker names the query mentions out of its text and vector search (they are matched as speakers).'),
        ('exact_search_max_chunks', '20000', 'integer', null, 0, 100000000,
         'Up to this many chunks in scope, vector search is exact; above it, HNSW with iterative scan. A '
         || 'tenant''s vectors join the HNSW graph once it holds more chunks than this.'),
        ('entity_extractor', '"deterministic"', 'string', '["deterministic", "llm", "none"]', null, null,
         'How enrichment finds the entities turns mention: deterministic (names, handles, tags, paths, URLs, code '
         || 'identifiers, quoted titles, gazetteer tools, speakers), llm (one call per session to the chat endpoint '
         || 'the llm summarizer uses, openai_chat_model), or none.'),
        ('memory_extractor', '"patterns"', 'string', '["patterns", "llm", "none"]', null, null,
         'How enrichment proposes curated memories from what users say, each with its turn as evidence: patterns '
         || '(explicit statements: rules such as "always ..." or "from now on ...", "I prefer ...", "we decided '
         || '...", "remember that ...", "my X is Y"; never from a question or a supposition), llm (one call per '
         || 'session to the chat endpoint, openai_chat_model), or none.'),
        ('extracted_memory_status', '"active"', 'string', '["active", "pending"]', null, null,
         'How memories enrichment proposes are stored: active (recalled at once) or pending (kept for review: '
         || 'memory.approve or memory.retract).'),
        ('memory_dedup', '"merge"', 'string', '["merge", "shadow", "off"]', null, null,
         'Semantic dedup of remembered claims: a claim whose vector is within memory_dedup_threshold of a memory '
         || 'the agent holds (same kind; same key when it has one) and that states the same numbers, names and '
         || 'polarity is merged into it (merge), only logged in memory.memory_merges beside the new memory '
         || '(shadow), or not looked for (off).'),
        ('memory_dedup_threshold', '0.9', 'number', null, 0, 1,
         'The cosine at or above which semantic dedup takes a claim for a paraphrase of a memory held.'),
        ('entity_gazetteer', '{}', 'object', null, null, null,
         'Names the extractor knows, with their type, on top of its own: {"acme cloud": "org", "fizzbuzz": "tool"}.'),
        ('recall_count_access', 'false', 'boolean', null, null, null,
         'Count how often recall returns each turn (makes recall write; leave off on a read replica).'),
        ('recall_tiers', '["hot", "warm"]', 'array', '["hot", "warm", "cold"]', 1, null,
         'The tiers of sessions and curated memories recall searches (recall''s tiers => ... for one call); '
         || 'cold ones are left out by default.'),
        ('tier_promote_on_recall', 'true', 'boolean', null, null, null,
         'Recall moves the sessions and memories it returns to hot and marks them used (a write, skipped in a '
         || 'read-only transaction and on a standby).'),
        ('session_importance', '0.5', 'number', null, 0, 1,
         'The importance of a session for decay and tier capacity (curated memories have their own).'),
        ('tier_hot_half_life_days', '7', 'number', null, 0.001, 36500,
         'Days without use in which an item''s decayed importance halves while it is at least tier_warm_below.'),
        ('tier_warm_half_life_days', '30', 'number', null, 0.001, 36500,
         'Days without use in which an item''s decayed importance halves below tier_warm_below, down to '
         || 'tier_cold_below.'),
        ('tier_cold_half_life_days', '180', 'number', null, 0.001, 36500,
         'Days without use in which an item''s decayed importance halves below tier_cold_below.'),
        ('tier_warm_below', '0.25', 'number', null, 0, 1,
         'Maintenance moves a hot session or memory to warm once its decayed importance is below this.'),
        ('tier_cold_below', '0.05', 'number', null, 0, 1,
         'Maintenance moves a warm (or hot) session or memory to cold once its decayed importance is below this.'),
        ('tier_hot_capacity', '500', 'integer', null, 0, 1000000000,
         'The most sessions and memories an agent keeps hot; maintenance moves the rest to warm, least important '
         || 'first (least recently used first among equals).'),
        ('tier_warm_capacity', '5000', 'integer', null, 0, 1000000000,
         'The most sessions and memories an agent keeps warm; maintenance moves the rest to cold, least important '
         || 'first (least recently used first among equals).')
    ) as d (key, default_value, value_type, allowed, minimum, maximum, description)
$$;

comment on function memory.setting_definitions() is
'Every setting with its default, type, accepted values, meaning, and who may set it (set_by: session = any '
'session or call, admin = memory.config, a session only of memory_admin). Change one with insert into '
'memory.config or, for one session, set memory.<key> = ...';

-- What the functions that run as the owner (to read a key) use as settings: the ones they are given
-- when the login administers, else the session's own, checked, whatever the caller passed them.
create or replace function memory_internal._trusted_settings(settings jsonb) returns jsonb
language sql
stable
as $$
    select case when memory_internal._administers() then settings else memory_internal._settings_json() end
$$;

comment on function memory_internal._trusted_settings(jsonb) is
'Internal: the given settings if the login administers, else the settings in force (checked), for owner-run '
'functions.';

-- A value of an administrator's setting from a session or a call: refused unless the login administers.
create or replace function memory_internal._check_set_by(p_key text, p_where text) returns void
language plpgsql
stable
as $$
begin
    if exists (select from memory.setting_definitions() as s where s.key = p_key and s.set_by = 'admin')
        and not memory_internal._administers() then
        raise exception 'agent_memory: setting "%" is the administrator''s; % cannot change it', p_key, p_where
            using hint = 'memory_admin sets it in memory.config';
    end if;
end
$$;

comment on function memory_internal._check_set_by(text, text) is
'Internal: refuses a session''s or a call''s value of an administrator''s setting unless the login administers.';

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

-- The value checked against its definition; raises an error that names the key and the problem.
create or replace function memory_internal._validated_setting(p_key text, p_value jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    d record;
    v_wrong_type boolean;
begin
    select * into d from memory.setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    v_wrong_type := jsonb_typeof(p_value) is distinct from replace(d.value_type, 'integer', 'number');
    if not v_wrong_type and d.value_type = 'integer' then
        v_wrong_type := p_value::numeric <> trunc(p_value::numeric);
    end if;
    if v_wrong_type then
        raise exception 'agent_memory: setting "%" must be a JSON %, got %', p_key, d.value_type,
            coalesce(p_value::text, 'null');
    end if;
    if d.value_type = 'array' and d.allowed is not null and not d.allowed @> p_value then
        raise exception 'agent_memory: setting "%" must be a list of values among %, got %', p_key, d.allowed, p_value;
    end if;
    if d.value_type <> 'array' and d.allowed is not null and not d.allowed @> jsonb_build_array(p_value) then
        raise exception 'agent_memory: setting "%" must be one of %, got %', p_key, d.allowed, p_value;
    end if;
    -- A number a double precision cannot hold (1e-400, 1e400) would fail where it is used, not here.
    if d.value_type = 'number' then
        begin
            perform (p_value #>> '{}')::double precision;
        exception when numeric_value_out_of_range then
            raise exception 'agent_memory: setting "%" must be a number a double precision holds (0, or between '
                '1e-307 and 1e308 in size), got %', p_key, p_value;
        end;
    end if;
    -- A name, not a number: regconfig reads digits as an object id, which it does not check.
    if p_key = 'text_search_config' and not exists (
        select from pg_catalog.pg_ts_config as c
        where (p_value #>> '{}') !~ '^\s*[0-9]+\s*$' and c.oid = memory_internal._regconfig_or_null(p_value #>> '{}')
    ) then
        raise exception 'agent_memory: setting "text_search_config" must name a text search configuration '
            'of this database (see pg_ts_config), got %', p_value;
    end if;
    if p_key = 'entity_gazetteer' and exists (
        select from jsonb_each(p_value) as g
        where jsonb_typeof(g.value) <> 'string' or not (g.value #>> '{}') = any(memory_internal._entity_types())
            or memory.normalize_entity(g.key) = ''
    ) then
        raise exception 'agent_memory: setting "entity_gazetteer" maps names to entity types (%), got %',
            array_to_string(memory_internal._entity_types(), ', '), p_value;
    end if;
    -- A list's minimum is how many values it needs.
    if d.value_type = 'array' and jsonb_array_length(p_value) < d.minimum then
        raise exception 'agent_memory: setting "%" needs at least % of %, got %', p_key, d.minimum, d.allowed, p_value;
    end if;
    if d.value_type <> 'array' and (d.minimum is not null and p_value::numeric < d.minimum
        or d.maximum is not null and p_value::numeric > d.maximum) then
        raise exception 'agent_memory: setting "%" must be between % and %, got %',
            p_key, d.minimum, d.maximum, p_value;
    end if;
    if d.value_type = 'integer' then
        return to_jsonb(p_value::numeric::bigint);  -- 5.0 is 5: it is read as an integer
    end if;
    return p_value;
end
$$;

comment on function memory_internal._validated_setting(text, jsonb) is
'Internal: checks a setting value against memory.setting_definitions().';

-- A trigger function of a table memory_admin writes itself: it runs as the owner, who may call the internal
-- checks (the administrator may not).
create or replace function memory_internal._config_validate() returns trigger
language plpgsql
security definer
as $$
begin
    new.value := memory_internal._validated_setting(new.key, new.value);
    if new.tenant_id is null or length(new.tenant_id) > 200 then
        raise exception 'agent_memory: memory.config tenant_id must be empty (every tenant) or at most 200 characters';
    end if;
    new.updated_at := pg_catalog.now();
    new.updated_by := session_user;
    if new.key in ('index_roles', 'index_context_turns', 'index_min_chars', 'chunk_chars', 'index_max_chunks',
                   'text_search_config')
        and (tg_op = 'INSERT' or old.value is distinct from new.value) then
        raise notice 'agent_memory: index setting % changed: sessions enriched before keep their old index', new.key
            using hint = 'select * from memory.reindex() queues them for re-indexing (agent-memory reindex)';
    end if;
    return new;
end
$$;

comment on function memory_internal._config_validate() is
'Internal: trigger that rejects unknown keys and ill-typed values in memory.config.';

drop trigger if exists config_validate on memory.config;
create trigger config_validate before insert or update on memory.config
for each row execute function memory_internal._config_validate();

-- The memory.* settings this session has given a value (C: PostgreSQL lists no placeholder settings).
create or replace function memory_internal._session_setting_names()
returns text[]
language c
stable strict
as '$libdir/agent_memory', 'agent_memory_session_setting_names';

comment on function memory_internal._session_setting_names() is
'Internal: the names (without "memory.") of the memory.* settings this session set, known or not.';

-- The known setting closest to a misspelt name, or null.
create or replace function memory_internal._closest_setting(name text) returns text
language plpython3u
volatile strict
as $$
@load_python@
from agent_memory_db.suggestions import closest
keys = [row["key"] for row in plpy.execute("select key from memory.setting_definitions()")]
return closest(name, keys)
$$;

comment on function memory_internal._closest_setting(text) is
'Internal: the key of memory.setting_definitions() most like a misspelt one (for "did you mean").';

-- Every memory.* setting this session set is known and valid: `set memory.wieght_dense = 1` or `set
-- memory.weight_dense = 'abc'` is an error on the next call that reads settings (PostgreSQL accepts any
-- memory.* name at `set`, so that is the earliest a mistake can be seen).
create or replace function memory_internal._check_session_settings() returns void
language plpgsql
stable
as $$
declare
    v_name text;
    v_closest text;
begin
    -- PostgreSQL keeps a name as it was set and matches it in any case.
    foreach v_name in array memory_internal._session_setting_names() loop
        v_name := lower(v_name);
        continue when v_name = 'tenant_id';
        if not exists (select from memory.setting_definitions() as s where s.key = v_name) then
            v_closest := memory_internal._closest_setting(v_name);
            raise exception using errcode = 'invalid_parameter_value',
                message = format('agent_memory: unknown setting memory.%s%s', v_name,
                                 case when v_closest is null then '' else format(' (did you mean memory.%s?)', v_closest) end),
                hint = format('reset memory.%s; select key, description from memory.setting_definitions() '
                              'lists the settings', v_name);
        end if;
        perform memory_internal._session_setting(v_name);
    end loop;
end
$$;

comment on function memory_internal._check_session_settings() is
'Internal: an error naming the first memory.* setting of this session that is unknown (with the closest '
'known one) or has a value of the wrong kind.';

-- A session setting (`set memory.<key> = '...'`) as JSON of the setting's type.
create or replace function memory_internal._session_setting(p_key text) returns jsonb
language plpgsql
stable
as $$
declare
    v_raw text := pg_catalog.current_setting('memory.' || p_key, true);
    v_type text;
begin
    if v_raw is null or v_raw = '' then
        return null;
    end if;
    perform memory_internal._check_set_by(p_key, 'a session (set memory.' || p_key || ')');
    select s.value_type into v_type from memory.setting_definitions() as s where s.key = p_key;
    if v_type = 'string' then
        return memory_internal._validated_setting(p_key, to_jsonb(v_raw));
    end if;
    begin
        return memory_internal._validated_setting(p_key, v_raw::jsonb);
    exception when invalid_text_representation then
        raise exception 'agent_memory: setting memory.% must be a JSON %, got %', p_key, v_type, v_raw
            using errcode = 'invalid_parameter_value', hint = format('reset memory.%s, or set it to a %s', p_key, v_type);
    end;
end
$$;

comment on function memory_internal._session_setting(text) is
'Internal: the value of `set memory.<key>` in this session, validated, or null.';

-- The value in force for this session. Defaults are valid by construction and are not checked again.
create or replace function memory.setting(p_key text) returns jsonb
language plpgsql
stable
as $$
declare
    v_value jsonb;
begin
    perform memory_internal._check_session_settings();
    v_value := memory_internal._session_setting(p_key);
    if v_value is not null then
        return v_value;
    end if;
    select c.value into v_value from memory.config as c
    where c.key = p_key and c.tenant_id in ('', memory.current_tenant())
    order by c.tenant_id desc
    limit 1;
    if found then
        return v_value;
    end if;
    select s.default_value into v_value from memory.setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    return v_value;
end
$$;

comment on function memory.setting(text) is
'The value of a setting in force for this session: session setting (set memory.<key>), then '
'memory.config for the tenant, then memory.config for every tenant, then the default. Unknown keys are an error.';

-- Each value as memory.setting() reads it (checked); its source from the session's own settings and the
-- configuration rows of this tenant and of every tenant.
create or replace view memory.settings as
select
    s.key,
    memory.setting(s.key) as value,
    case
        when pg_catalog.current_setting('memory.' || s.key, true) <> '' then 'session'
        when c.tenant_id <> '' then 'tenant'
        when c.key is not null then 'config'
        else 'default'
    end as source,
    s.default_value,
    s.description
from memory.setting_definitions() as s
-- memory.config read once: for each key, this tenant's row over the every-tenant one.
left join (
    select distinct on (c.key)
        c.key,
        c.tenant_id
    from memory.config as c
    where c.tenant_id in ('', (select memory.current_tenant()))
    order by c.key asc, c.tenant_id desc
) as c on s.key = c.key;

comment on view memory.settings is
'Every setting with the value in force for this session and where it comes from (session, tenant = '
'memory.config for this tenant, config = memory.config for every tenant, default).';
comment on table memory.config is
'Settings changed from their defaults, checked on write against memory.setting_definitions().';
comment on column memory.config.tenant_id is
'The tenant the value is for; '''' (the default) for every tenant. A tenant''s row wins over the every-tenant one.';
comment on column memory.config.key is 'The setting, one of memory.setting_definitions().key.';
comment on column memory.config.value is 'The value as JSON of the setting''s type.';
comment on column memory.config.updated_at is 'When the value was last written.';
comment on column memory.config.updated_by is 'The role that last wrote it.';

-- Every setting in force, as one JSON object (what the Python side reads).
-- plpgsql, not sql: its plan is kept for the session (a sql function called from plpgsql is planned again
-- on every call, which cost more than the query itself).
create or replace function memory_internal._settings_json() returns jsonb
language plpgsql
stable
as $$
begin
    perform memory_internal._check_session_settings();
    return (
        select jsonb_object_agg(s.key, coalesce(session_value.value, c.value, s.default_value))
        from memory.setting_definitions() as s
        -- The memory.* settings this session set: only those are read and checked (a handful, not every key).
        cross join (
            select coalesce(pg_catalog.array_agg(pg_catalog.lower(n.name)), '{}') as names
            from pg_catalog.unnest(memory_internal._session_setting_names()) as n (name)
        ) as session_set
        -- memory.config read once: for each key, this tenant's row over the every-tenant one.
        left join (
            select distinct on (c.key) c.key, c.value
            from memory.config as c
            where c.tenant_id in ('', (select memory.current_tenant()))
            order by c.key asc, c.tenant_id desc
        ) as c on s.key = c.key
        cross join lateral (
            select case when s.key = any(session_set.names) then memory_internal._session_setting(s.key) end as value
        ) as session_value
    );
end
$$;

comment on function memory_internal._settings_json() is
'Internal: every setting in force as one JSON object (an error if the session set an unknown or bad one).';

-- A tenant's settings as memory.config stores them (its own rows, else those for every tenant, else the
-- defaults): what maintenance, which serves every tenant from one session, goes by. '' is every tenant.
create or replace function memory_internal._configured_settings(tenant text) returns jsonb
language sql
stable
as $$
    select jsonb_object_agg(d.key, coalesce(own.value, everyone.value, d.default_value))
    from memory.setting_definitions() as d
    left join memory.config as everyone on everyone.tenant_id = '' and everyone.key = d.key
    left join memory.config as own on own.tenant_id = tenant and tenant <> '' and own.key = d.key
$$;

comment on function memory_internal._configured_settings(text) is
'Internal: a tenant''s settings as memory.config stores them (session settings left out).';
