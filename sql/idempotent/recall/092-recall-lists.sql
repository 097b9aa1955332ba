-- Recall, step 2: candidate lists. The top recall_candidates chunks by BM25, the top recall_candidates
-- chunks by cosine similarity to the query vector (exact for small scopes, HNSW with iterative scan for
-- large ones), and the best chunks of the top session_candidates sessions by summary full text and by
-- session vector. Every candidate is then scored on every signal, whichever list brought it.

-- The conditions (" and ...", or nothing) a chunk "c" (its tenant, turn and session) meets when its turn passes
-- recall's filters on event time, source, sessions (entity_mode all: the sessions that mention every entity),
-- tiers and run (its session's, or the memory's it carries) and tools (a tool result of one of these tools, with
-- one of these statuses), the values written in as literals. Tiers that leave out cold alone are not looked up
-- here: each chunk and vector says whether it is cold, and the lists read that flag through indexes that hold
-- only one side. A list's statement is made for each call with the filters given and none other, the lookups
-- they need written into it, so that the planner joins them (and Citus sees every table the statement reads).
drop function if exists memory_internal._turn_filter(
    text, bigint, bigint, timestamptz, timestamptz, text, bigint[], text[]
);
drop function if exists memory_internal._turn_filter(
    text, bigint, bigint, timestamptz, timestamptz, text, bigint[], text[], text[], text[]
);
drop function if exists memory_internal._turn_filter(
    text, bigint, bigint, timestamptz, timestamptz, text, bigint[], text[], text[], text[], text
);
create or replace function memory_internal._turn_filter_sql(
    tenant text, since timestamptz, until timestamptz, source text, sessions bigint[], tiers text[], tools text[],
    tool_statuses text[], run text
) returns text
language sql
-- (A time is written as text: stable, as the session's time zone and date style.)
stable
as $$
    select concat(
        case when sessions is not null then format(' and c.session_key = any(%L::bigint[])', sessions) end,
        case when coalesce(since, until) is not null then format(
            ' and exists (select from memory.turns as t where t.tenant_id = %L and t.turn_id = c.turn_id%s%s)', tenant,
            case when since is not null then format(' and t.created_at >= %L::timestamptz', since) end,
            case when until is not null then format(' and t.created_at <= %L::timestamptz', until) end
        ) end,
        case when source is not null then format(
            ' and exists (select from memory.sessions as s where s.tenant_id = %L'
            ' and s.session_key = c.session_key and s.source = %L)', tenant, source
        ) end,
        -- The words of a memory are in the memory's tier, other turns in their session's.
        case when not coalesce(tiers @> array['hot', 'warm'], true) then format(
            ' and coalesce((select bool_or(m.tier = any(%2$L::text[])) from memory.memories as m'
            ' where m.tenant_id = %1$L and m.turn_id = c.turn_id), exists (select from memory.sessions as s'
            ' where s.tenant_id = %1$L and s.session_key = c.session_key and s.tier = any(%2$L::text[])))',
            tenant, tiers
        ) end,
        case when run is not null then format(
            ' and coalesce((select bool_or(m.run_id = %2$L) from memory.memories as m'
            ' where m.tenant_id = %1$L and m.turn_id = c.turn_id), exists (select from memory.sessions as s'
            ' where s.tenant_id = %1$L and s.session_key = c.session_key and s.run_id = %2$L))', tenant, run
        ) end,
        case when coalesce(tools, tool_statuses) is not null then format(
            ' and exists (select from memory.turns as t where t.tenant_id = %L and t.turn_id = c.turn_id'
            ' and t.role = %L%s%s)', tenant, 'tool',
            case when tool_statuses is not null then
                format(' and t.metadata ->> %L = any(%L::text[])', 'tool_status', tool_statuses) end,
            case when tools is not null then
                format(' and memory_internal._tool_name(memory_internal._tool_result_call(t.tenant_id, c.session_key,'
                       ' t.position, t.tool_call_id), t.metadata, t.speaker) = any(%L::text[])', tools) end
        ) end
    )
$$;

comment on function memory_internal._turn_filter_sql(
    text, timestamptz, timestamptz, text, bigint[], text[], text[], text[], text
) is
'Internal: the conditions a chunk c of a tenant meets when its turn passes recall''s time, source, session, tier, '
'tool and run filters (null filters: none), for a candidate list''s statement.';

-- The statement of a nearest-vector list over chunk_embeddings or session_embeddings ("e"): the query
-- vector is $1, the tenant $2, the list's length $8 (other filters' parameters as
-- memory_internal._candidate_chunks passes them), over cold vectors too or not. Exact search sorts every
-- distance ("+ 0" keeps the HNSW index out). Approximate search takes the nearest from the model's HNSW graph
-- of what is not cold, and of what is cold when asked (at half precision, with iterative scan, so filters do
-- not starve the list), and from the tenant's vectors not yet in a graph (memory_internal._in_graph), scanned
-- exactly, and keeps the nearest of them all by their exact distance.
drop function if exists memory_internal._nearest_sql(text, text[], text, integer, boolean, text);
create or replace function memory_internal._nearest_sql(
    relation text, keys text[], model text, dimensions integer, exact boolean, filter text, cold boolean
) returns text
language plpgsql
immutable
as $$
declare
    v_keys text := (select string_agg(format('e.%I', k), ', ') from unnest(keys) as k);
    v_distance text := format('e.embedding::vector(%s) <=> $1', dimensions);
    v_graph_distance text := format('e.embedding::halfvec(%1$s) <=> $1::halfvec(%1$s)', dimensions);
    v_rows text := format('from memory.%I as e where e.model = %L and e.tenant_id = $2 %s', relation, model,
                          coalesce(filter, ''));
    v_not_cold text := case when not cold then 'and not e.cold' else '' end;
    -- One branch per graph searched: the graph of what is not cold, then that of what is cold.
    v_graphs text := (
        select string_agg(format('(select %s, %s as distance %s and e.in_graph and %s order by %s limit $8) union all ',
                                 v_keys, v_distance, v_rows, g.side, v_graph_distance), '')
        from unnest(case when cold then array['not e.cold', 'e.cold'] else array['not e.cold'] end) as g (side)
    );
begin
    return format(
        'select %s from (%s) as n',
        (select string_agg(format('array_agg(n.%I)', k), ', ') from unnest(keys) as k),
        case when exact then
            format('select %s %s %s order by (%s) + 0 limit $8', v_keys, v_rows, v_not_cold, v_distance)
        else
            format('select u.* from (%s'
                   '(select %s, (%s) + 0 as distance %s and not e.in_graph %s order by (%s) + 0 limit $8)'
                   ') as u order by u.distance limit $8',
                   v_graphs, v_keys, v_distance, v_rows, v_not_cold, v_distance)
        end
    );
end
$$;

comment on function memory_internal._nearest_sql(text, text[], text, integer, boolean, text, boolean) is
'Internal: the statement of a nearest-vector candidate list (exact, or the HNSW graphs with the vectors '
'outside them), over cold vectors too or not, for memory_internal._candidate_chunks.';

-- The full-text lists. The chunk list: the top recall_candidates chunks of the tenant by BM25 among those that
-- match the query's generating terms and pass recall's filters. It runs as memory_observer, which reads chunks,
-- summaries, turns, sessions and memories past row-level security, and keeps to the tenant it is given
-- (memory_owner's code passes its caller's, and only memory_owner may run it). Under a policy, PostgreSQL tests a
-- condition that is not leakproof only on rows the policy has passed, and tsvector @@ tsquery is not: run as
-- memory_owner, the match could not use the GIN index and read every chunk of the tenant (61 of 66 ms of this list
-- at 100k turns).
create or replace function memory_internal._full_text_candidates(
    tenant text, agent_id text, since timestamptz, until timestamptz, source text, q memory_internal._recall_query,
    settings jsonb, tiers text[]
) returns table (turn_id bigint, chunk_no integer)
language plpgsql
stable
security definer
-- The GIN index, always: the planner prices tsvector @@ tsquery as cheap as any operator and, for a query of
-- many words, scans every chunk instead, matching each one (BEAM-500K, 13 words, 24,663 chunks: 64 ms against
-- 10 ms by the index; recall p95 183 -> 120 ms).
set enable_seqscan = off
as $$
declare
    v_k1 double precision := (settings ->> 'bm25_k1')::double precision;
    v_b double precision := (settings ->> 'bm25_b')::double precision;
    v_context_weight double precision := (settings ->> 'context_weight')::double precision;
    -- Whether the tiers take in what is cold (null: every tier).
    v_cold boolean := tiers is null or 'cold' = any(tiers);
begin
    return query execute format($statement$
        select c.turn_id, c.chunk_no
        from memory.chunks as c
        cross join lateral memory_internal._chunk_bm25(c.tsv, c.length, c.context_length, ($3).lexemes, ($3).idf,
                                                       $4, $5, ($3).avg_length, $6) as s
        where c.tenant_id = $1 and c.tsv @@ ($3).generating
            -- Without cold, the index of what is not cold; with it, both indexes.
            and (c.cold and $7 or not c.cold)
            and memory_internal._visible_to($2, $3, c.agent_id, c.session_key, c.turn_id) %s
        order by s.bm25 desc, c.turn_id
        limit $8
    $statement$, memory_internal._turn_filter_sql(tenant, since, until, _full_text_candidates.source,
                                                  q.entity_sessions, tiers, q.tools, q.tool_statuses, q.run_id))
    using tenant, _full_text_candidates.agent_id, q, v_k1, v_b, v_context_weight, v_cold,
          (settings ->> 'recall_candidates')::integer;
end
$$;

comment on function memory_internal._full_text_candidates(
    text, text, timestamptz, timestamptz, text, memory_internal._recall_query, jsonb, text[]
) is
'Internal: the full-text candidate list of a recall in one tenant (runs as memory_observer, so the match uses '
'the GIN index).';

-- The session list by summary: the top session_candidates sessions of the tenant whose summary matches the
-- query's words, by ts_rank_cd, among those that pass recall's filters. As memory_observer, for the reason
-- above (under a policy, 10 ms of a recall at 100k turns, 5,000 summaries read; 1-3 ms by the index).
create or replace function memory_internal._summary_candidates(
    tenant text, agent_id text, source text, q memory_internal._recall_query, settings jsonb, tiers text[]
) returns setof bigint
language plpgsql
stable
security definer
-- A few rows (session_candidates): planned as the default 1,000, the sessions' chunks were read by a scan of
-- every chunk (75 ms a recall at 10k turns, against 36 ms).
rows 5
set plan_cache_mode = force_custom_plan
as $$
declare
    -- Whether the tiers take in what is cold (null: every tier).
    v_cold boolean := tiers is null or 'cold' = any(tiers);
begin
    return query
    select m.session_key from memory.summaries as m
    where m.tenant_id = tenant and q.tsquery is not null and m.tsv @@ q.tsquery
        -- Without cold, the index of what is not cold; with it, both indexes.
        and (m.cold and v_cold or not m.cold)
        and (q.entity_sessions is null or m.session_key = any(q.entity_sessions))
        -- Hot and warm both taken in, the cold flag is the whole tier filter.
        and (coalesce(_summary_candidates.agent_id, _summary_candidates.source, q.run_id) is null
                and (tiers is null or tiers @> array['hot', 'warm'])
            or exists (
                select from memory.sessions as s
                where s.tenant_id = tenant and s.session_key = m.session_key
                    and memory_internal._visible_to(_summary_candidates.agent_id, q, s.agent_id, s.session_key, null)
                    and (_summary_candidates.source is null or s.source = _summary_candidates.source)
                    and (q.run_id is null or s.run_id = q.run_id)
                    and (tiers is null or s.tier = any(tiers))
            ))
    order by ts_rank_cd(m.tsv, q.tsquery) desc, m.session_key
    limit (settings ->> 'session_candidates')::integer;
end
$$;

comment on function memory_internal._summary_candidates(
    text, text, text, memory_internal._recall_query, jsonb, text[]
) is
'Internal: the sessions of one tenant whose summary best matches a recall''s words (runs as memory_observer, '
'so the match uses the GIN index).';

-- The vector lists of a recall: the recall_candidates chunks and the session_candidates sessions nearest the
-- query vector that pass its filters (exact for small scopes, HNSW with iterative scan for large ones).
create or replace function memory_internal._vector_candidates(
    tenant text, agent_id text, since timestamptz, until timestamptz, source text, settings jsonb,
    q memory_internal._recall_query, query_vector vector, recall_model text, tiers text[],
    out turn_ids bigint[], out chunk_nos integer[], out session_keys bigint[]
)
language plpgsql
volatile
-- Plans made for each call's values, as memory_internal._candidate_chunks's.
set plan_cache_mode = force_custom_plan
as $$
declare
    v_candidates integer := (settings ->> 'recall_candidates')::integer;
    v_exact boolean := q.chunks_in_scope <= (settings ->> 'exact_search_max_chunks')::bigint
                       or vector_dims(query_vector) > memory_internal._graph_max_dimensions();
    v_cold boolean := tiers is null or 'cold' = any(tiers);
    -- Whether a filter that sessions answer is given: unfiltered, a search reads vectors alone (and their cold
    -- flag, when tiers leave out cold alone).
    v_sessions_filtered boolean := coalesce(agent_id, source, q.run_id) is not null or q.entity_sessions is not null
                                   or not coalesce(tiers @> array['hot', 'warm'], true);
begin
    if not v_exact then
        perform set_config('hnsw.iterative_scan', 'relaxed_order', true);
        perform set_config('hnsw.ef_search', greatest(40, least(1000, v_candidates))::text, true);
    end if;
    execute memory_internal._nearest_sql(
        'chunk_embeddings', array['turn_id', 'chunk_no'], recall_model, vector_dims(query_vector), v_exact,
        case when v_sessions_filtered or coalesce(since, until) is not null
                  or coalesce(q.tools, q.tool_statuses) is not null then $filter$
            and exists (
                select from memory.chunks as c
                where c.tenant_id = e.tenant_id and c.turn_id = e.turn_id and c.chunk_no = e.chunk_no
                    and memory_internal._visible_to($3, $10, c.agent_id, c.session_key, c.turn_id)$filter$
            || memory_internal._turn_filter_sql(tenant, since, until, _vector_candidates.source, q.entity_sessions,
                                                tiers, q.tools, q.tool_statuses, q.run_id) || ')'
        end,
        v_cold
    ) into turn_ids, chunk_nos
    using query_vector, tenant, _vector_candidates.agent_id, since, until, _vector_candidates.source,
          q.entity_sessions, v_candidates, tiers, q;
    execute memory_internal._nearest_sql(
        'session_embeddings', array['session_key'], recall_model, vector_dims(query_vector), v_exact,
        case when v_sessions_filtered then $filter$
            and ($7 is null or e.session_key = any($7))
            and exists (
                select from memory.sessions as s
                where s.tenant_id = e.tenant_id and s.session_key = e.session_key
                    and memory_internal._visible_to($3, $10, s.agent_id, s.session_key, null)
                    and ($6 is null or s.source = $6) and ($9 is null or s.tier = any($9))
                    and (($10).run_id is null or s.run_id = ($10).run_id)
            )$filter$
        end,
        v_cold
    ) into session_keys
    using query_vector, tenant, _vector_candidates.agent_id, since, until, _vector_candidates.source,
          q.entity_sessions, (settings ->> 'session_candidates')::integer, tiers, q;
end
$$;

comment on function memory_internal._vector_candidates(
    text, text, timestamptz, timestamptz, text, jsonb, memory_internal._recall_query, vector, text, text[]
) is
'Internal: the chunk and session vector lists of a recall (the nearest that pass its filters).';

-- Every candidate chunk of a recall: the union of the full-text, vector and session lists.
create or replace function memory_internal._candidate_chunks(
    tenant text, agent_id text, since timestamptz, until timestamptz, source text, settings jsonb,
    q memory_internal._recall_query, query_vector vector, recall_model text, tiers text[]
) returns table (turn_id bigint, chunk_no integer)
language plpgsql
volatile
-- Plans made for each call's values: a cached generic plan cannot tell one agent's filter from another's.
set plan_cache_mode = force_custom_plan
as $$
declare
    v_lex_keys bigint [];
    v_lex_chunks integer [];
    v_dense_keys bigint [];
    v_dense_chunks integer [];
    v_vector_sessions bigint [];
    v_summary_sessions bigint [];
    v_tags text [] := array(select jsonb_array_elements_text(settings -> 'recall_tags'));
    v_cold boolean := tiers is null or 'cold' = any(tiers);
begin
    if q.generating is not null then
        select array_agg(l.turn_id), array_agg(l.chunk_no) into v_lex_keys, v_lex_chunks
        from memory_internal._full_text_candidates(tenant, _candidate_chunks.agent_id, since, until,
                                                   _candidate_chunks.source, q, settings, tiers) as l;
    end if;

    if query_vector is not null then
        select v.turn_ids, v.chunk_nos, v.session_keys into v_dense_keys, v_dense_chunks, v_vector_sessions
        from memory_internal._vector_candidates(tenant, _candidate_chunks.agent_id, since, until, _candidate_chunks.source,
                                                settings, q, query_vector, recall_model, tiers) as v;
    end if;

    -- The session list by summary.
    v_summary_sessions := array(
        select m.session_key
        from memory_internal._summary_candidates(tenant, _candidate_chunks.agent_id, _candidate_chunks.source, q,
                                                 settings, tiers) as m (session_key)
    );

    -- A memory stands for the turns it came from, so it is a candidate whenever one of them is. (Recall's
    -- scoring statement leaves out the words of memories it does not show, looking each turn's memory up once.)
    return query execute format($statement$
        with found as (
            select u.turn_id, u.chunk_no
            from unnest($6, $7) as u (turn_id, chunk_no)
            union
            -- Session lists: the sessions whose summary best matches the query's words and those whose vector is
            -- closest to it; each brings its two chunks closest to the query, so a session found by its summary
            -- or its overall subject takes part even when none of its turns made the lists above.
            select best.turn_id, best.chunk_no
            from (select distinct v.session_key from unnest($8) as v (session_key)) as found
            cross join lateral (
                select c.turn_id, c.chunk_no from memory.chunks as c
                left join memory.chunk_embeddings as e
                    on c.tenant_id = e.tenant_id and c.turn_id = e.turn_id and c.chunk_no = e.chunk_no
                        and e.model = $5
                where c.tenant_id = $1 and c.session_key = found.session_key
                    and (c.cold and $9 or not c.cold) %s
                -- Full-text rank only decides among chunks without a vector (computed for those alone).
                order by e.embedding <=> $4 nulls last,
                    case when e.embedding is null then ts_rank_cd(c.tsv, ($3).tsquery) end desc nulls last, c.turn_id
                limit 2
            ) as best
        )

        select f.turn_id, f.chunk_no
        from found as f
        union
        select c.turn_id, c.chunk_no
        from memory.memories as m
        inner join memory.chunks as c on m.tenant_id = c.tenant_id and m.turn_id = c.turn_id and c.chunk_no = 0
        where m.tenant_id = $1 and (c.cold and $9 or not c.cold) %s
            and (
                m.memory_id in (
                    select e.memory_id from memory.memory_evidence as e
                    where e.tenant_id = $1 and e.turn_id in (select f.turn_id from found as f)
                )
                -- With tags, every memory that has one (the lists above find few); without, the plan drops this.
                or cardinality($10) > 0 and m.tags && $10 and m.status not in ('pending', 'retracted')
            )
            and ($2 is null or m.agent_id = $2 or m.shared)
    $statement$,
        memory_internal._turn_filter_sql(tenant, since, until, null, q.entity_sessions, tiers, q.tools,
                                         q.tool_statuses, q.run_id),
        memory_internal._turn_filter_sql(tenant, since, until, _candidate_chunks.source, q.entity_sessions, tiers,
                                         q.tools, q.tool_statuses, q.run_id))
    using tenant, _candidate_chunks.agent_id, q, query_vector, recall_model,
          coalesce(v_lex_keys, '{}') || coalesce(v_dense_keys, '{}'),
          coalesce(v_lex_chunks, '{}') || coalesce(v_dense_chunks, '{}'), v_summary_sessions || v_vector_sessions,
          v_cold, v_tags;
end
$$;

comment on function memory_internal._candidate_chunks(
    text, text, timestamptz, timestamptz, text, jsonb, memory_internal._recall_query, vector, text, text[]
) is
'Internal: every candidate chunk of a recall (full-text, vector and session lists) in the tiers given (null: '
'all), plus the memories whose evidence turns are candidates and, with tags (recall_tags), the memories that '
'have one.';
