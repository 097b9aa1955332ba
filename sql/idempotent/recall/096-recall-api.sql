-- Recall, the API: memory.recall and memory.explain_recall, and the components object that shows why a
-- turn ranked where it did (every signal of the registry by name).

-- A candidate's components: built only for the rows a caller shows (recall's k hits), not for every
-- candidate. signals: {name: {value, weight, contribution}} (fusion signals also with rank and z).
create or replace function memory_internal._components(
    chunk_no integer, fused double precision, signal_values double precision[],
    contributions double precision[], ranks integer[], zs double precision[], rerank_score double precision,
    rerank_error text, context jsonb
) returns jsonb
language sql
immutable
as $$
    select jsonb_build_object(
        'signals', (
            select coalesce(jsonb_object_agg(s.name, jsonb_build_object(
                'value', round(signal_values[s.i]::numeric, 6),
                'weight', (context -> 'weights' ->> (s.i::integer - 1))::double precision,
                'contribution', round(contributions[s.i]::numeric, 6)
            ) || case when s.i <= (context ->> 'fusion_signals')::integer then jsonb_build_object(
                'rank', ranks[s.i], 'z', round(zs[s.i]::numeric, 6)
            ) else '{}' end), '{}')
            from jsonb_array_elements_text(context -> 'signals') with ordinality as s (name, i)
        ),
        'fused', round(fused::numeric, 6),
        'chunk_no', chunk_no,
        'model', context -> 'model',
        'fusion', context -> 'fusion',
        'speakers_matched', context -> 'speakers_matched',
        'entities_matched', context -> 'entities_matched',
        'degraded', context -> 'degraded',
        'route', context -> 'route',
        'tiers', context -> 'tiers',
        'tags', context -> 'tags',
        'tuned', context -> 'tuned',
        'rerank', case when context ->> 'rerank' <> 'none' then jsonb_build_object(
            'score', round(rerank_score::numeric, 6), 'error', rerank_error
        ) end
    )
$$;

comment on function memory_internal._components(
    integer, double precision, double precision[], double precision[], integer[], double precision[],
    double precision, text, jsonb
) is
'Internal: the components object of one recall candidate (each signal''s value, weight and contribution).';

-- A call's settings with its filters (recall's tiers => ..., tags => ..., tools => ..., tool_statuses => ...,
-- run_id => ...) as the settings recall_tiers, recall_tags, recall_tools, recall_tool_statuses and recall_run_id.
drop function if exists memory_internal._with_tiers(jsonb, text[]);
drop function if exists memory_internal._with_filters(jsonb, text[], text[]);
drop function if exists memory_internal._with_filters(jsonb, text[], text[], text[], text[]);
create or replace function memory_internal._with_filters(
    weights jsonb, tiers text[], tags text[], tools text[], tool_statuses text[], run_id text
) returns jsonb
language sql
immutable
as $$
    -- (Weights that are no JSON object are refused as they are.)
    select case when coalesce(tiers, tags, tools, tool_statuses) is null and run_id is null
                     or jsonb_typeof(weights) <> 'object' then weights
                else coalesce(weights, '{}') || jsonb_strip_nulls(jsonb_build_object(
                    'recall_tiers', to_jsonb(tiers), 'recall_tags', to_jsonb(tags), 'recall_tools', to_jsonb(tools),
                    'recall_tool_statuses', to_jsonb(tool_statuses), 'recall_run_id', to_jsonb(run_id)
                ))
           end
$$;

comment on function memory_internal._with_filters(jsonb, text[], text[], text[], text[], text) is
'Internal: a recall''s per-call settings with its tiers, tags, tools, tool_statuses and run_id arguments as the '
'settings recall_tiers, recall_tags, recall_tools, recall_tool_statuses and recall_run_id.';

create or replace function memory.recall(
    query text,
    k integer default 10,
    agent_id text default null,
    since timestamptz default null,
    until timestamptz default null,
    source text default null,
    level text default 'turn',
    entities text[] default null,
    entity_mode text default 'any',
    weights jsonb default null,
    query_vector vector default null,
    as_of timestamptz default null,
    include_ended boolean default false,
    intent text default null,
    tiers text[] default null,
    tags text[] default null,
    tools text[] default null,
    tool_statuses text[] default null,
    run_id text default null
) returns setof memory.recall_hit
language plpgsql
volatile
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_started timestamptz := pg_catalog.clock_timestamp();
    v_turns bigint [];
    v_sessions bigint [];
    v_scores double precision [];
    v_components jsonb [];
    v_memories bigint [];
    v_kinds text [];
begin
    perform memory_internal._check_session_settings();  -- first, so that a bad setting's error is short
    if k is null or k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', k;
    end if;
    if level not in ('turn', 'session') then
        raise exception 'agent_memory: level must be turn or session, got %', level;
    end if;
    -- Rank once; the hits are kept to return them and, when access counting is on, to count them. A turn
    -- that is the evidence of a memory ranked above it is not a hit of its own: the memory carries its id.
    with candidates as materialized (
        select c.*
        from memory_internal._recall_candidates(recall.query, recall.agent_id, recall.since, recall.until,
                                                recall.source, recall.entities, recall.entity_mode,
                                                memory_internal._with_filters(recall.weights, recall.tiers, recall.tags,
                                                                              recall.tools, recall.tool_statuses,
                                                                              recall.run_id),
                                                recall.query_vector, recall.as_of, recall.include_ended,
                                                recall.intent) as c
    )

    select array_agg(h.turn_id order by h.ord), array_agg(h.session_key order by h.ord),
           array_agg(h.score order by h.ord),
           array_agg(memory_internal._components(h.chunk_no, h.fused, h.signal_values, h.contributions, h.ranks, h.zs,
                                        h.rerank_score, h.rerank_error, h.context) order by h.ord),
           array_agg(h.memory_id order by h.ord), array_agg(h.memory_kind order by h.ord)
    into v_turns, v_sessions, v_scores, v_components, v_memories, v_kinds
    from (
        select c.* from (
            select c.*, row_number() over (partition by c.session_key order by c.ord) as in_session
            from candidates as c
            where not exists (
                select from candidates as m where m.ord < c.ord and c.turn_id = any(m.memory_evidence)
            )
        ) as c
        where recall.level = 'turn' or c.in_session = 1
        order by c.ord
        limit recall.k
    ) as h;

    return query
    select s.session_id, s.agent_id, t.turn_id, t.message_id, t.role, t.speaker, t.created_at, t.content,
           m.summary, h.score, h.components, coalesce(h.kind, 'turn'), h.memory_id,
           case when h.memory_id is not null then memory_internal._memory_evidence(v_tenant, h.memory_id) end,
           memory_internal._shared_by(recall.agent_id, s.agent_id)
    from unnest(v_turns, v_sessions, v_scores, v_components, v_memories, v_kinds) with ordinality
        as h (turn_id, session_key, score, components, memory_id, kind, n)
    inner join memory.turns as t on t.tenant_id = v_tenant and h.turn_id = t.turn_id
    inner join memory.sessions as s on s.tenant_id = v_tenant and h.session_key = s.session_key
    left join memory.summaries as m on m.tenant_id = v_tenant and h.session_key = m.session_key
    order by h.n;

    if (coalesce(recall.weights -> 'recall_count_access', memory.setting('recall_count_access')))::boolean then
        update memory.turns as t
        set access_count = t.access_count + 1, last_accessed_at = pg_catalog.now()
        where t.tenant_id = v_tenant and t.turn_id = any(v_turns);
    end if;
    if (coalesce(recall.weights -> 'tier_promote_on_recall', memory.setting('tier_promote_on_recall')))::boolean
        and current_setting('transaction_read_only') = 'off' then
        perform memory_internal._mark_used(v_tenant, v_sessions, v_turns);
    end if;
    perform memory_internal._count_recall(
        v_tenant, extract(epoch from pg_catalog.clock_timestamp() - v_started),
        coalesce(jsonb_array_length(v_components[1] -> 'degraded') > 0, false)
    );
end
$$;

comment on function memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[], text[], text[], text[], text
)
is 'The turns and curated memories (level turn) or sessions (level session, with their best turn) that best '
'answer a query, best first: full-text (BM25) and vector scores of each turn''s best chunk fused, plus the '
'boost signals of memory.signal_definitions(), and an optional rerank stage (setting rerank). kind is '
'''turn'' for what was said, or the memory''s kind (rule, preference, ...) with its memory_id and '
'evidence_turn_ids (a turn ranked below a memory it is evidence of is left out). Filters: agent_id (its '
'turns and memories, and what the other agents share: shared_by names the agent that shared a hit), '
'since/until (event time), source. entities: names the recall is about, besides those the query names '
'(signal entity); entity_mode all keeps to sessions that mention every one. as_of: what was said by then '
'and the memories that held then; include_ended: superseded and retracted memories too. intent: the memory '
'kind the question asks for (default: memory.query_intent(query); none: no routing), whose memories come '
'first (signal kind). tiers: the tiers searched (default recall_tiers: hot and warm); what recall returns is '
'moved to hot (tier_promote_on_recall). tags: only curated memories with one of these tags (default '
'recall_tags: no filter). tools, tool_statuses: only tool results of these tools (their call''s name) and '
'statuses (success, error, timeout; default recall_tools and recall_tool_statuses: no filter). run_id: only '
'the sessions and memories of that run (default recall_run_id: every run). weights: '
'per-call settings, e.g. ''{"weight_dense": 0.5}''. '
'query_vector: for callers that embed themselves. components shows every signal''s value, weight and '
'contribution, and the route taken.';

-- A limit a caller passes as k: null (no limit) or at least 1, else an error naming it.
create or replace function memory_internal._checked_limit(k integer) returns integer
language plpgsql
immutable
as $$
begin
    if k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', k using errcode = 'invalid_parameter_value';
    end if;
    return k;
end
$$;

comment on function memory_internal._checked_limit(integer) is
'Internal: k as a limit (null: none), or an error unless it is at least 1.';

create or replace function memory.explain_recall(
    query text,
    k integer default null,
    agent_id text default null,
    since timestamptz default null,
    until timestamptz default null,
    source text default null,
    entities text[] default null,
    entity_mode text default 'any',
    weights jsonb default null,
    query_vector vector default null,
    as_of timestamptz default null,
    include_ended boolean default false,
    intent text default null,
    tiers text[] default null,
    tags text[] default null,
    tools text[] default null,
    tool_statuses text[] default null,
    run_id text default null
) returns table (
    rank bigint, session_id text, turn_id bigint, speaker text, content text, score double precision,
    fused double precision, components jsonb, kind text, memory_id bigint
)
language sql
volatile
as $$
    select c.ord, s.session_id, t.turn_id, t.speaker, t.content, c.score, c.fused,
           memory_internal._components(c.chunk_no, c.fused, c.signal_values, c.contributions, c.ranks, c.zs, c.rerank_score,
                              c.rerank_error, c.context), coalesce(c.memory_kind, 'turn'), c.memory_id
    from memory_internal._recall_candidates(query, agent_id, since, until, source, entities, entity_mode,
                                            memory_internal._with_filters(weights, tiers, tags, tools, tool_statuses,
                                                                          run_id),
                                            query_vector, as_of, include_ended, intent) as c
    inner join memory.turns as t on t.tenant_id = memory.current_tenant() and c.turn_id = t.turn_id
    inner join memory.sessions as s on s.tenant_id = memory.current_tenant() and c.session_key = s.session_key
    order by c.ord
    limit memory_internal._checked_limit(explain_recall.k)
$$;

comment on function memory.explain_recall(
    text, integer, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[], text[], text[], text[], text
) is
'The first k (default every) candidates of a recall in final order with its fused score, the final score '
'and components (every signal''s value, weight and contribution; fusion signals with their rank and '
'z-score among the candidates): what to read to understand and tune ranking.';
