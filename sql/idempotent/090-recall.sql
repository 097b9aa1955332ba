-- Recall: hybrid ranking of turns (and sessions) inside the database.
--
-- Candidates: the top recall_candidates chunks by BM25 over the chunks' lexemes (term statistics in
-- memory.lexicon), the top recall_candidates chunks by cosine similarity to the query vector (exact for
-- small scopes, HNSW with iterative scan for large ones), and the best chunks of the top session_candidates
-- sessions by summary full text and by session vector. For every candidate both scores are computed
-- exactly, then fused (z-score weighted sum, or reciprocal rank fusion), then the session, neighbour,
-- speaker, summary, session-vector, recency, access, open-loop and trust signals are added. Every
-- signal's rank and contribution is returned in `components`.

-- The recall settings in force, with per-call weights (keys of memory.setting_definitions()) on top.
create or replace function memory._recall_settings(weights jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    v_key text;
begin
    if weights is null then
        return memory._settings_json();
    end if;
    if jsonb_typeof(weights) <> 'object' then
        raise exception 'agent_memory: weights must be a JSON object of settings, got %', jsonb_typeof(weights);
    end if;
    for v_key in select jsonb_object_keys(weights) loop
        perform memory._validated_setting(v_key, weights -> v_key);
    end loop;
    return memory._settings_json() || weights;
end
$$;

comment on function memory._recall_settings(jsonb) is
'Internal: the settings in force for one recall, per-call weights taking precedence.';

-- The speakers of the scope whose names the query mentions (whole words, any case).
-- plpgsql for the plan it keeps across calls (see memory._settings_json).
create or replace function memory._query_speakers(query text, tenant text, agent text) returns text[]
language plpgsql
stable
as $$
begin
    return (
        select coalesce(array_agg(distinct s.name), '{}')
        from memory.speakers as s
        where s.tenant_id = tenant and (agent is null or s.agent_id = agent)
            and query ~* ('\m' || regexp_replace(s.name, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M')
    );
end
$$;

comment on function memory._query_speakers(text, text, text) is
'Internal: speakers of the scope named in the query.';

create or replace function memory._without_names(query text, names text[]) returns text
language sql
immutable
as $$
    select coalesce((
        select regexp_replace(query, '\m(' || string_agg(regexp_replace(n, '([.*+?^${}()|\[\]\\])', '\\\1', 'g'), '|')
                                     || ')(''s)?\M', ' ', 'gi')
        from unnest(names) as n
    ), query)
$$;

comment on function memory._without_names(text, text[]) is 'Internal: the query with the given names taken out.';

-- One query term's BM25 contribution to a chunk: idf, the term's frequency in the chunk, the chunk's length.
create or replace function memory._bm25_term(
    idf double precision, frequency integer, length integer,
    k1 double precision, b double precision, avg_length double precision
) returns double precision
language sql
immutable parallel safe
as $$
    select idf * (coalesce(frequency, 1) * (k1 + 1))
        / (coalesce(frequency, 1) + k1 * (1 - b + b * length / greatest(avg_length, 1)))
$$;

comment on function memory._bm25_term(
    double precision, integer, integer, double precision, double precision,
    double precision
) is
'Internal: one query term''s BM25 contribution to a chunk (inlined into the recall queries).';

-- Whether a turn mentions the entities (as a whole word in its text, or as its speaker): any or all.
create or replace function memory._matches_entities(content text, speaker text, entities text[], mode text)
returns boolean
language sql
immutable parallel safe
as $$
    select entities is null or cardinality(entities) = 0 or (
        select case when mode = 'all' then bool_and(m.hit) else bool_or(m.hit) end
        from (
            select coalesce(lower(speaker) = lower(e), false)
                   or content ~* ('\m' || regexp_replace(e, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M') as hit
            from unnest(entities) as e
        ) as m
    )
$$;

comment on function memory._matches_entities(text, text, text[], text) is
'Internal: whether a turn names any (or all) of the entities, in its text or as its speaker.';

-- One row when a turn passes recall's filters on event time, source and entities, none otherwise. Used as
-- `cross join lateral memory._turn_filter(...)`: the planner inlines it, a filter not given folds away,
-- and with it the lookup it needs (a scalar function with subqueries could not be inlined).
create or replace function memory._turn_filter(
    tenant text, turn bigint, session bigint, since timestamptz, until timestamptz, source text,
    entities text[], entity_mode text
) returns setof boolean
language sql
stable
as $$
    select true
    where (since is null and until is null and entities is null or exists (
                select from memory.turns as t
                where t.tenant_id = tenant and t.turn_key = turn
                    and (since is null or t.created_at >= since) and (until is null or t.created_at <= until)
                    and (entities is null or memory._matches_entities(t.content, t.name, entities, entity_mode))
            ))
        and (source is null or exists (
                select from memory.sessions as s
                where s.tenant_id = tenant and s.session_key = session and s.source = _turn_filter.source
            ))
$$;

comment on function memory._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, text[], text) is
'Internal: one row when a turn passes recall''s time, source and entity filters (null filters pass).';

-- The statement of a nearest-vector list over chunk_embeddings or session_embeddings ("e"): the query
-- vector is $1, the tenant $2, the list's length $9 (other filters' parameters as memory._recall_candidates
-- passes them). Exact search sorts every distance ("+ 0" keeps the HNSW index out); otherwise the partial
-- HNSW index of the model serves the order (with iterative scan, so filters do not starve the list).
create or replace function memory._nearest_sql(
    relation text, keys text[], model text, dimensions integer, exact boolean, filter text
) returns text
language plpgsql
immutable
as $$
begin
    return format(
        'select %s from (select %s from memory.%I as e where e.model = %L and e.tenant_id = $2 %s order by %s limit $9) as n',
        (select string_agg(format('array_agg(n.%I)', k), ', ') from unnest(keys) as k),
        (select string_agg(format('e.%I', k), ', ') from unnest(keys) as k),
        relation, model, coalesce(filter, ''),
        format(case when exact then '(e.embedding::vector(%s) <=> $1) + 0' else 'e.embedding::vector(%s) <=> $1' end,
               dimensions)
    );
end
$$;

comment on function memory._nearest_sql(text, text[], text, integer, boolean, text) is
'Internal: the statement of a nearest-vector candidate list (exact or HNSW) for memory._recall_candidates.';

-- Every candidate turn with its signals and final score, best first. recall and explain_recall read it.
create or replace function memory._recall_candidates(
    query text, agent_id text, since timestamptz, until timestamptz, source text,
    entities text[], entity_mode text, weights jsonb, query_vector vector
) returns table (
    turn_key bigint, session_key bigint, score double precision, signals double precision[], context jsonb
)
language plpgsql
stable
-- Plans made for each call's values: a cached generic plan cannot tell one agent's filter from another's.
set plan_cache_mode = force_custom_plan
as $$
declare
    v_tenant text := memory.current_tenant();
    v_cfg jsonb := memory._recall_settings(weights);
    v_tsconfig regconfig := (v_cfg ->> 'text_search_config')::regconfig;
    v_candidates integer := (v_cfg ->> 'recall_candidates')::integer;
    v_speakers text [] := memory._query_speakers(query, v_tenant, agent_id);
    v_search_text text := query;
    v_lexemes text [];
    v_tsquery tsquery;
    v_degraded text [] := '{}';
    v_model record;
    v_recall_model text;
    v_vector vector := query_vector;
    v_lex_keys bigint [] := '{}';
    v_lex_chunks integer [] := '{}';
    v_dense_keys bigint [] := '{}';
    v_dense_chunks integer [] := '{}';
    v_session_keys bigint [] := '{}';
    v_session_chunks integer [] := '{}';
    v_exact boolean;
    v_vector_sessions bigint [];
    v_chunks_in_scope double precision;
    v_avg_length double precision;
    v_idf double precision [];
    v_df bigint [];
    v_generating tsquery;
    v_k1 double precision := (v_cfg ->> 'bm25_k1')::double precision;
    v_b double precision := (v_cfg ->> 'bm25_b')::double precision;
begin
    if query is null or btrim(query) = '' then
        raise exception 'agent_memory: recall needs a query';
    end if;
    if entity_mode not in ('any', 'all') then
        raise exception 'agent_memory: entity_mode must be any or all, got %', entity_mode;
    end if;
    if since is not null and until is not null and since > until then
        raise exception 'agent_memory: since (%) is after until (%)', since, until;
    end if;

    -- Speaker names the query mentions are matched as speakers (weight_speaker), so by default they are
    -- left out of what is searched as text and as a vector: indexed text holds no speaker names.
    if (v_cfg ->> 'strip_speaker_names')::boolean and cardinality(v_speakers) > 0 then
        v_search_text := memory._without_names(query, v_speakers);
        if btrim(regexp_replace(v_search_text, '\W', '', 'g')) = '' then
            v_search_text := query;
        end if;
    end if;
    v_lexemes := tsvector_to_array(to_tsvector(v_tsconfig, v_search_text));
    select coalesce(sum(k.chunks), 0), coalesce(sum(k.total_length), 0) / greatest(coalesce(sum(k.chunks), 0), 1)
    into v_chunks_in_scope, v_avg_length
    from memory.corpus as k
    where k.tenant_id = v_tenant and (_recall_candidates.agent_id is null or k.agent_id = _recall_candidates.agent_id);
    select array_agg(ln(1 + (v_chunks_in_scope - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) order by l.n),
           array_agg(coalesce(d.df, 0) order by l.n)
    into v_idf, v_df
    from unnest(v_lexemes) with ordinality as l (lexeme, n)
    left join lateral (
        select sum(x.chunks) as df from memory.lexicon as x
        where x.tenant_id = v_tenant and x.lexeme = l.lexeme
            and (_recall_candidates.agent_id is null or x.agent_id = _recall_candidates.agent_id)
    ) as d on true;
    if cardinality(v_lexemes) > 0 then
        v_tsquery := array_to_string(array(select quote_literal(l) from unnest(v_lexemes) as l), ' | ')::tsquery;
        -- Terms in more than lexical_max_df chunks of the scope still count in every score, but do not
        -- bring candidates by themselves (the rarest term always does): a word in most chunks would make
        -- the list score nearly every chunk while adding little to any.
        v_generating := array_to_string(array(
            select quote_literal(g.lexeme) from unnest(v_lexemes, v_df) as g (lexeme, df)
            where g.df <= (v_cfg ->> 'lexical_max_df')::bigint
                or g.df = (select min(m) from unnest(v_df) as m)
        ), ' | ')::tsquery;
        select array_agg(b.turn_key), array_agg(b.chunk_no) into v_lex_keys, v_lex_chunks
        from (
            select c.turn_key, c.chunk_no
            from memory.chunks as c
            cross join lateral memory._turn_filter(c.tenant_id, c.turn_key, c.session_key, since, until,
                                                   _recall_candidates.source, entities, entity_mode)
            cross join lateral unnest(c.tsv) as u
            inner join unnest(v_lexemes, v_idf) as q (lexeme, idf) on u.lexeme = q.lexeme
            where c.tenant_id = v_tenant and c.tsv @@ v_generating
                and (_recall_candidates.agent_id is null or c.agent_id = _recall_candidates.agent_id)
            group by c.turn_key, c.chunk_no, c.length
            order by sum(memory._bm25_term(q.idf, cardinality(u.positions), c.length, v_k1, v_b, v_avg_length)) desc,
                     c.turn_key
            limit v_candidates
        ) as b;
    end if;

    -- Vectors: the query embedded in the database (or given), against the model recall may use.
    select * into v_model from memory._embedding_model(v_cfg);
    v_recall_model := memory._recall_model(v_model.model);
    if v_model is null then
        v_degraded := v_degraded || 'no embedder configured: full-text only'::text;
    elsif v_recall_model is null then
        v_degraded := v_degraded || 'no embeddings yet: full-text only'::text;
    elsif v_vector is null and v_model.provider = 'client' then
        v_degraded := v_degraded || 'client embedder and no query_vector: full-text only'::text;
    elsif v_vector is null and v_recall_model <> v_model.model then
        v_degraded := v_degraded || format('model %s is still building and %s cannot embed queries: full-text only',
                                           v_model.model, v_recall_model);
    elsif v_vector is null then
        begin
            v_vector := (memory._embed_texts(array[v_search_text], v_cfg))[1];
        exception when others then
            v_degraded := v_degraded || ('query embedding failed: ' || sqlerrm || ': full-text only');
        end;
    end if;
    if v_vector is not null then
        if query_vector is not null and vector_dims(query_vector) <> (
            select m.dimensions from memory.embedding_models as m where m.model = v_recall_model
        ) then
            raise exception 'agent_memory: query_vector has % dimensions but model % has %', vector_dims(query_vector),
                v_recall_model, (select m.dimensions from memory.embedding_models as m where m.model = v_recall_model);
        end if;
        v_exact := v_chunks_in_scope <= (v_cfg ->> 'exact_search_max_chunks')::bigint;
        if not v_exact then
            perform set_config('hnsw.iterative_scan', 'relaxed_order', true);
            perform set_config('hnsw.ef_search', greatest(40, least(1000, v_candidates))::text, true);
        end if;
        -- The filters' tables are read only when a filter is given: unfiltered, a search reads vectors alone.
        execute memory._nearest_sql(
            'chunk_embeddings', array['turn_key', 'chunk_no'], v_recall_model, vector_dims(v_vector), v_exact,
            case when coalesce(_recall_candidates.agent_id, _recall_candidates.source) is not null
                      or since is not null or until is not null or entities is not null then $filter$
                and exists (
                    select from memory.chunks as c
                    cross join lateral memory._turn_filter(c.tenant_id, c.turn_key, c.session_key, $4, $5, $6, $7, $8)
                    where c.tenant_id = e.tenant_id and c.turn_key = e.turn_key and c.chunk_no = e.chunk_no
                        and ($3 is null or c.agent_id = $3)
                )$filter$
            end
        ) into v_dense_keys, v_dense_chunks
        using v_vector, v_tenant, _recall_candidates.agent_id, since, until, _recall_candidates.source,
              entities, entity_mode, v_candidates;
        execute memory._nearest_sql(
            'session_embeddings', array['session_key'], v_recall_model, vector_dims(v_vector), v_exact,
            case when coalesce(_recall_candidates.agent_id, _recall_candidates.source) is not null then $filter$
                and exists (
                    select from memory.sessions as s
                    where s.tenant_id = e.tenant_id and s.session_key = e.session_key
                        and ($3 is null or s.agent_id = $3) and ($6 is null or s.source = $6)
                )$filter$
            end
        ) into v_vector_sessions
        using v_vector, v_tenant, _recall_candidates.agent_id, since, until, _recall_candidates.source,
              entities, entity_mode, (v_cfg ->> 'session_candidates')::integer;
    end if;

    -- Session lists: the sessions whose summary best matches the query's words and those whose vector is
    -- closest to it; each brings its two chunks closest to the query, so a session found by its summary
    -- or its overall subject takes part even when none of its turns made the lists above.
    select array_agg(x.turn_key), array_agg(x.chunk_no) into v_session_keys, v_session_chunks
    from (
        select distinct best.turn_key, best.chunk_no
        from (
            (
                select m.session_key from memory.summaries as m
                where m.tenant_id = v_tenant and v_tsquery is not null and m.tsv @@ v_tsquery
                    and (coalesce(_recall_candidates.agent_id, _recall_candidates.source) is null or exists (
                        select from memory.sessions as s
                        where s.tenant_id = m.tenant_id and s.session_key = m.session_key
                            and (_recall_candidates.agent_id is null or s.agent_id = _recall_candidates.agent_id)
                            and (_recall_candidates.source is null or s.source = _recall_candidates.source)
                    ))
                order by ts_rank_cd(m.tsv, v_tsquery) desc, m.session_key
                limit (v_cfg ->> 'session_candidates')::integer
            )
            union
            select v.session_key from unnest(v_vector_sessions) as v (session_key)
        ) as found
        cross join lateral (
            select c.turn_key, c.chunk_no from memory.chunks as c
            cross join lateral memory._turn_filter(c.tenant_id, c.turn_key, c.session_key, since, until, null,
                                                   entities, entity_mode)
            left join memory.chunk_embeddings as e
                on c.tenant_id = e.tenant_id and c.turn_key = e.turn_key and c.chunk_no = e.chunk_no
                    and e.model = v_recall_model
            where c.tenant_id = v_tenant and c.session_key = found.session_key
            -- Full-text rank only decides among chunks without a vector (computed for those alone).
            order by e.embedding <=> v_vector nulls last,
                case when e.embedding is null then ts_rank_cd(c.tsv, v_tsquery) end desc nulls last, c.turn_key
            limit 2
        ) as best
    ) as x;

    return query
    with candidate_chunks as (
        select distinct u.turn_key, u.chunk_no
        from unnest(coalesce(v_lex_keys, '{}') || coalesce(v_dense_keys, '{}') || coalesce(v_session_keys, '{}'),
                    coalesce(v_lex_chunks, '{}') || coalesce(v_dense_chunks, '{}') || coalesce(v_session_chunks, '{}'))
            as u (turn_key, chunk_no)
    ),
    chunk_scores as (
        select c.turn_key, c.session_key,
               coalesce((
                   select sum(memory._bm25_term(q.idf, cardinality(u.positions), c.length, v_k1, v_b, v_avg_length))
                   from unnest(c.tsv) as u inner join unnest(v_lexemes, v_idf) as q (lexeme, idf) on u.lexeme = q.lexeme
               ), 0) as bm25,
               (select 1 - (e.embedding <=> v_vector) from memory.chunk_embeddings as e
                where e.tenant_id = c.tenant_id and e.turn_key = c.turn_key and e.chunk_no = c.chunk_no
                    and e.model = v_recall_model) as cosine
        from candidate_chunks as cc
        -- One index probe per candidate (the limit keeps the planner from scanning every chunk instead).
        cross join lateral (
            select * from memory.chunks as x
            where x.tenant_id = v_tenant and x.turn_key = cc.turn_key and x.chunk_no = cc.chunk_no
            limit 1
        ) as c
    ),
    turn_scores as (
        select cs.turn_key, min(cs.session_key) as session_key, max(cs.bm25) as bm25, max(cs.cosine) as cosine
        from chunk_scores as cs group by cs.turn_key
    ),
    ranked as (
        select ts.*,
               rank() over (order by ts.bm25 desc) as lexical_rank,
               rank() over (order by ts.cosine desc nulls last) as dense_rank,
               (ts.bm25 - avg(ts.bm25) over ()) / nullif(stddev_pop(ts.bm25) over (), 0) as lexical_z,
               (ts.cosine - avg(ts.cosine) over ()) / nullif(stddev_pop(ts.cosine) over (), 0) as dense_z
        from turn_scores as ts
    ),
    fused as (
        select r.*,
               case when v_cfg ->> 'fusion' = 'rrf' then
                   (v_cfg ->> 'weight_lexical')::float8 * case when r.bm25 > 0 then 1.0 / ((v_cfg ->> 'rrf_k')::float8 + r.lexical_rank) else 0 end
                   + (v_cfg ->> 'weight_dense')::float8 * case when r.cosine is not null then 1.0 / ((v_cfg ->> 'rrf_k')::float8 + r.dense_rank) else 0 end
               else
                   (v_cfg ->> 'weight_lexical')::float8 * coalesce(r.lexical_z, 0)
                   + (v_cfg ->> 'weight_dense')::float8 * coalesce(r.dense_z, 0)
               end as fused
        from ranked as r
    ),
    -- Per turn, by window functions over the candidates (no self-joins): its session's best fused score,
    -- the better fused score of the turns just before and after it (when they are candidates), and on
    -- the first candidate of each session that session's summary and vector scores, looked up once.
    positioned as (
        select f.*, t.name, t.content, t.created_at, t.trust, t.access_count,
               row_number() over w = 1 as session_row,
               max(f.fused) over (partition by f.session_key) as best,
               greatest(
                   case when lag(t.position) over w = t.position - 1 then lag(f.fused) over w end,
                   case when lead(t.position) over w = t.position + 1 then lead(f.fused) over w end
               ) as neighbor
        from fused as f
        inner join memory.turns as t on t.tenant_id = v_tenant and f.turn_key = t.turn_key
        window w as (partition by f.session_key order by t.position)
    ),
    -- Materialized: its lookups run once, not once for each use in the z-scores below.
    with_session as materialized (
        select p.*, case when p.session_row then coalesce(sm.summary_score, 0) end as summary_score, sm.open_loops,
               sv.cosine as session_cosine
        from positioned as p
        left join lateral (
            select ts_rank_cd(m.tsv, v_tsquery) as summary_score, m.open_loops from memory.summaries as m
            -- Only for a session's first row (the key is null on the others, so the index finds nothing).
            where m.tenant_id = v_tenant and m.session_key = case when p.session_row then p.session_key end
        ) as sm on true
        left join lateral (
            select 1 - (e.embedding <=> v_vector) as cosine from memory.session_embeddings as e
            where e.tenant_id = v_tenant and e.session_key = case when p.session_row then p.session_key end
                and e.model = v_recall_model
        ) as sv on true
    ),
    -- z-scores over the candidate sessions (one row each), on their first rows.
    session_z as (
        select ws.*,
               case when ws.session_row then
                   (ws.summary_score - avg(ws.summary_score) filter (where ws.session_row) over ())
                   / nullif(stddev_pop(ws.summary_score) filter (where ws.session_row) over (), 0)
               end as summary_z_here,
               case when ws.session_row then
                   (ws.session_cosine - avg(ws.session_cosine) filter (where ws.session_row) over ())
                   / nullif(stddev_pop(ws.session_cosine) filter (where ws.session_row) over (), 0)
               end as session_vector_z_here
        from with_session as ws
    ),
    -- ... spread to every candidate of the session.
    scored as (
        select z.*,
               max(z.summary_z_here) over s as summary_z,
               max(z.session_vector_z_here) over s as session_vector_z,
               first_value(z.open_loops) over (s order by z.session_row desc) as session_open_loops
        from session_z as z
        window s as (partition by z.session_key)
    ),
    parts as (
        select sc.*,
               (v_cfg ->> 'weight_session')::float8 * sc.best as p_session,
               (v_cfg ->> 'weight_neighbor')::float8 * coalesce(sc.neighbor, 0) as p_neighbor,
               (v_cfg ->> 'weight_summary')::float8 * coalesce(sc.summary_z, 0) as p_summary,
               (v_cfg ->> 'weight_session_vector')::float8 * coalesce(sc.session_vector_z, 0) as p_session_vector,
               case when sc.name = any(v_speakers) then (v_cfg ->> 'weight_speaker')::float8 else 0 end as p_speaker,
               (v_cfg ->> 'weight_recency')::float8
               * power(0.5, extract(epoch from pg_catalog.now() - sc.created_at) / 86400.0
                            / (v_cfg ->> 'recency_half_life_days')::float8) as p_recency,
               (v_cfg ->> 'weight_access')::float8 * ln(1 + sc.access_count) as p_access,
               case when exists (select from jsonb_array_elements_text(sc.session_open_loops) as o
                                 where strpos(sc.content, o) > 0)
                   then (v_cfg ->> 'weight_open_loop')::float8 else 0 end as p_open_loop,
               (v_cfg ->> 'weight_trust')::float8 * ln(greatest(sc.trust, 1e-6)) as p_trust
        from scored as sc
    )
    select p.turn_key, p.session_key,
           p.fused + p.p_session + p.p_neighbor + p.p_summary + p.p_session_vector + p.p_speaker + p.p_recency
           + p.p_access + p.p_open_loop + p.p_trust as score,
           array[p.bm25, p.lexical_rank, p.lexical_z, p.cosine, case when p.cosine is not null then p.dense_rank end,
                 p.dense_z, p.fused, p.p_session, p.p_neighbor, p.p_summary, p.p_session_vector, p.p_speaker,
                 p.p_recency, p.p_access, p.p_open_loop, p.p_trust],
           jsonb_build_object('model', v_recall_model, 'fusion', v_cfg ->> 'fusion',
                              'speakers_matched', to_jsonb(v_speakers), 'degraded', to_jsonb(v_degraded),
                              'count_access', v_cfg -> 'recall_count_access')
    from parts as p
    order by 3 desc, p.turn_key;
end
$$;

comment on function memory._recall_candidates(text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector)
is 'Internal: every candidate turn of a recall with each signal and the final score.';

-- A candidate's components, from the signals memory._recall_candidates returns: built only for the rows a
-- caller shows (recall's k hits), not for every candidate.
create or replace function memory._components(signals double precision[], context jsonb) returns jsonb
language sql
immutable
as $$
    select jsonb_build_object(
        'lexical', jsonb_build_object('bm25', round(signals[1]::numeric, 6), 'rank', signals[2]::integer,
                                      'z', round(signals[3]::numeric, 6)),
        'dense', jsonb_build_object('cosine', round(signals[4]::numeric, 6), 'rank', signals[5]::integer,
                                    'z', round(signals[6]::numeric, 6), 'model', context -> 'model'),
        'fusion', context -> 'fusion',
        'fused', round(signals[7]::numeric, 6),
        'session', round(signals[8]::numeric, 6),
        'neighbor', round(signals[9]::numeric, 6),
        'summary', round(signals[10]::numeric, 6),
        'session_vector', round(signals[11]::numeric, 6),
        'speaker', round(signals[12]::numeric, 6),
        'recency', round(signals[13]::numeric, 6),
        'access', round(signals[14]::numeric, 6),
        'open_loop', round(signals[15]::numeric, 6),
        'trust', round(signals[16]::numeric, 6),
        'speakers_matched', context -> 'speakers_matched',
        'degraded', context -> 'degraded'
    )
$$;

comment on function memory._components(double precision[], jsonb) is
'Internal: the components object of one recall candidate (each signal''s rank and contribution).';

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
    query_vector vector default null
) returns table (
    session_id text, agent text, turn_id bigint, message_id text, role text, speaker text,
    created_at timestamptz, content text, summary text, score double precision, components jsonb
)
language plpgsql
volatile
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_turns bigint [];
    v_sessions bigint [];
    v_scores double precision [];
    v_components jsonb [];
    v_count_access boolean;
begin
    if k is null or k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', k;
    end if;
    if level not in ('turn', 'session') then
        raise exception 'agent_memory: level must be turn or session, got %', level;
    end if;
    -- Rank once; the hits are kept to return them and, when access counting is on, to count them.
    select array_agg(h.turn_key order by h.score desc, h.turn_key), array_agg(h.session_key order by h.score desc, h.turn_key),
           array_agg(h.score order by h.score desc, h.turn_key),
           array_agg(memory._components(h.signals, h.context) order by h.score desc, h.turn_key),
           bool_or((h.context ->> 'count_access')::boolean)
    into v_turns, v_sessions, v_scores, v_components, v_count_access
    from (
        select c.* from (
            select c.*, row_number() over (partition by c.session_key order by c.score desc, c.turn_key) as in_session
            from memory._recall_candidates(recall.query, recall.agent_id, recall.since, recall.until, recall.source,
                                           recall.entities, recall.entity_mode, recall.weights,
                                           recall.query_vector) as c
        ) as c
        where recall.level = 'turn' or c.in_session = 1
        order by c.score desc, c.turn_key
        limit recall.k
    ) as h;

    return query
    select s.session_id, s.agent_id, t.turn_key, t.message_id, t.role, t.name, t.created_at, t.content,
           m.summary, h.score, h.components
    from unnest(v_turns, v_sessions, v_scores, v_components) with ordinality
        as h (turn_key, session_key, score, components, n)
    inner join memory.turns as t on t.tenant_id = v_tenant and h.turn_key = t.turn_key
    inner join memory.sessions as s on s.tenant_id = v_tenant and h.session_key = s.session_key
    left join memory.summaries as m on m.tenant_id = v_tenant and h.session_key = m.session_key
    order by h.n;

    if v_count_access then
        update memory.turns as t
        set access_count = t.access_count + 1, last_accessed_at = pg_catalog.now()
        where t.tenant_id = v_tenant and t.turn_key = any(v_turns);
    end if;
end
$$;

comment on function memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector
)
is 'The turns (level turn) or sessions (level session, with their best turn) that best answer a query, best '
'first: hybrid full-text (BM25) and vector search fused with session, neighbour, speaker, summary, recency, '
'access, open-loop and trust signals. Filters: agent_id, since/until (event time), source, entities (any/all). '
'weights: per-call settings, e.g. ''{"weight_dense": 0.5}''. query_vector: for callers that embed themselves. '
'components shows every signal''s rank and contribution.';

create or replace function memory.explain_recall(
    query text,
    agent_id text default null,
    since timestamptz default null,
    until timestamptz default null,
    source text default null,
    entities text[] default null,
    entity_mode text default 'any',
    weights jsonb default null,
    query_vector vector default null
) returns table (
    rank bigint, session_id text, turn_id bigint, speaker text, content text, score double precision,
    lexical_rank integer, dense_rank integer, components jsonb
)
language sql
stable
as $$
    select row_number() over (order by c.score desc, c.turn_key), s.session_id, t.turn_key, t.name, t.content, c.score,
           c.signals[2]::integer, c.signals[5]::integer, memory._components(c.signals, c.context)
    from memory._recall_candidates(query, agent_id, since, until, source, entities, entity_mode, weights,
                                   query_vector) as c
    inner join memory.turns as t on t.tenant_id = memory.current_tenant() and c.turn_key = t.turn_key
    inner join memory.sessions as s on s.tenant_id = memory.current_tenant() and c.session_key = s.session_key
    order by c.score desc, c.turn_key
$$;

comment on function memory.explain_recall(text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector) is
'Every candidate of a recall with its rank in the full-text and vector lists, each signal''s contribution '
'(components) and the final score: what to read to understand and tune ranking.';
