-- Recall, step 3: every candidate scored on every signal of the registry (memory.signals).
--
-- Chunk stage: each candidate chunk gets its full-text (BM25F) and vector features, then every fusion
-- signal's value; values are fused per signal over the candidates (z-score weighted sum, or reciprocal
-- rank fusion). A turn is scored by its best chunk: its full-text and vector values come from that one
-- chunk. Turn stage: the session's best fused score, the neighbours', the session summary's and vector's
-- z-scores are gathered, and every boost signal adds weight x value. Optional rerank last.

-- The calls of one stage's signals as SQL ("memory.signal_x(k.c, ($1).settings), ..."), their names and weights, and
-- the signals left out because their function may not run (memory_internal._signal_problem), each with why.
create or replace function memory_internal._signal_calls(
    stage text, settings jsonb, out calls text, out names text[], out weights double precision[], out skipped text[]
)
language plpgsql
stable
as $$
-- plpgsql, not sql: recall calls this twice, and a plpgsql function keeps its plan (a sql one would be
-- planned at every call).
begin
    -- Each signal's function checked once (materialized: each use of problem below would check it again).
    with vetted as materialized (
        select r.name, r.function, memory_internal._signal_problem(r.function) as problem
        from memory.signals as r
        where r.stage = _signal_calls.stage
    )

    select coalesce(string_agg(s.call, ', ' order by s.name) filter (where s.problem is null), ''),
           coalesce(array_agg(s.name order by s.name) filter (where s.problem is null), '{}'),
           coalesce(array_agg((settings ->> ('weight_' || s.name))::double precision order by s.name)
                        filter (where s.problem is null), '{}'),
           coalesce(array_agg(format('signal %s skipped: %s', s.name, s.problem) order by s.name)
                        filter (where s.problem is not null), '{}')
    into calls, names, weights, skipped
    from (
        select p.*, case when p.problem is null then format('%s(k.c, ($1).settings)', p.function::regprocedure::oid::regproc) end
            as call
        from vetted as p
    ) as s;
end
$$;

comment on function memory_internal._signal_calls(text, jsonb) is
'Internal: the registry''s signals of one stage as SQL calls, with their names and weights in force, and those '
'skipped because their function may not run.';

-- The parts of the scoring statement that the registry of features (memory.recall_features) makes, each
-- attribute of memory.recall_candidate in its order: the chunk stage's columns ("(expression)::type as name";
-- a memory-stage feature is null when the turn carries no memory)
-- and the candidate a fusion signal sees (the chunk's features, null for later stages), the turn and memory
-- stages' columns and the candidate a boost signal sees (every feature), and the memory features a turn's
-- words lack when they are scored as a plain turn ({"name": null, ...}). An attribute no feature computes
-- is null.
create or replace function memory_internal._feature_sql(
    out chunk_columns text, out chunk_candidate text, out turn_columns text, out turn_candidate text,
    out plain_turn jsonb
)
language plpgsql
stable
as $$
begin
    select string_agg(format(E'(%s\n)::%s as %I', f.expression, a.type, a.name), ', ' order by a.n)
               filter (where f.stage = 'chunk'),
           string_agg(case when f.stage = 'chunk' then format('f.%I', a.name) else 'null' end, ', ' order by a.n),
           coalesce(', ' || string_agg(
               format(case when f.stage = 'memory' then E'(case when tm.memory_id is not null then (%s\n) end)::%s as %I'
                           else E'(%s\n)::%s as %I' end, f.expression, a.type, a.name), ', ' order by a.n
           ) filter (where f.stage in ('turn', 'memory')), ''),
           string_agg(case when f.stage is not null then format('d.%I', a.name) else 'null' end, ', ' order by a.n),
           coalesce(jsonb_object_agg(a.name, null) filter (where f.stage = 'memory'), '{}')
    into chunk_columns, chunk_candidate, turn_columns, turn_candidate, plain_turn
    from (
        -- The type with its schema, even pg_catalog's (a caller's temporary types come first in its search_path).
        select a.attname::text as name, format('%I.%I', n.nspname, t.typname) as type, a.attnum as n
        from pg_catalog.pg_attribute as a
        inner join pg_catalog.pg_type as t on a.atttypid = t.oid
        inner join pg_catalog.pg_namespace as n on t.typnamespace = n.oid
        where a.attrelid = 'memory.recall_candidate'::regclass and a.attnum > 0 and not a.attisdropped
    ) as a
    left join memory.recall_features as f on a.name = f.name;
end
$$;

comment on function memory_internal._feature_sql() is
'Internal: the parts of recall''s scoring statement built from the registry of features.';

-- Recall's scoring statement, its first part: the chunk stage and fusion, each candidate turn by its best chunk.
create or replace function memory_internal._scoring_sql_chunks() returns text
language sql
immutable parallel safe
as $fn$
select $sql$
with candidate_chunks as (
    select distinct u.turn_id, u.chunk_no from unnest(($1).turn_ids, ($1).chunk_nos) as u (turn_id, chunk_no)
),
-- The chunk stage's features of each candidate chunk: c the chunk, t its turn, e and x the vectors of the
-- chunk and of its context, b its BM25, r the recall; and the memory the turn carries as recall shows it
-- (looked up once, kept for the turn stage). The words of memories recall does not show (superseded,
-- retracted or pending; at as_of, not holding then) are no candidates; with tags, nothing but memories
-- that have one is. The memory a turn carries: by default any but superseded, retracted and pending ones (a
-- resolved memory is shown, and signal status ranks it lower); at as_of, the one that held then, shown as it
-- was then (active: what ended it came later); with include_ended, any but pending. The one that holds now
-- first when several share the words; with its tier, when it was last recorded or used, and its tags. Each
-- table is read here, in the statement (on Citus, a function's read would be a statement of its own per row).
chunk_features as materialized (
    select c.text as _text, tm.memory_id as _memory_id, tm.kind as _memory_kind, tm.importance as _memory_importance,
           tm.status as _memory_status, tm.evidence_turns as _memory_evidence, tm.tier as _memory_tier,
           tm.last_used as _memory_last_used, tm.tags as _memory_tags, %3$s
    from candidate_chunks as cc
    cross join (select ($1).*) as r
    -- One index probe per candidate (the limit keeps the planner from scanning every chunk instead).
    cross join lateral (
        select * from memory.chunks as y
        where y.tenant_id = r.tenant and y.turn_id = cc.turn_id and y.chunk_no = cc.chunk_no
        limit 1
    ) as c
    inner join memory.turns as t on t.tenant_id = r.tenant and t.turn_id = c.turn_id
    left join lateral (
        select m.memory_id, m.kind, m.importance,
               case when r.as_of is not null and m.status in ('superseded', 'resolved') then 'active'
                    else m.status end as status,
               array(
                   select v.turn_id from memory.memory_evidence as v
                   where v.tenant_id = m.tenant_id and v.memory_id = m.memory_id order by v.turn_id
               ) as evidence_turns,
               m.tier, greatest(m.recorded_at, m.used_at) as last_used, m.tags
        from memory.memories as m
        where m.tenant_id = r.tenant and m.turn_id = c.turn_id and m.status <> 'pending'
            and case
                when r.as_of is not null then memory.memory_holds(m.status, m.valid_from, m.valid_to, r.as_of)
                when r.include_ended then true
                else m.status not in ('superseded', 'retracted')
            end
        order by m.status in ('active', 'ongoing') desc, m.valid_from desc, m.memory_id desc
        limit 1
    ) as tm on true
    cross join lateral memory_internal._chunk_bm25(
        c.tsv, c.length, c.context_length, (r.query).lexemes, (r.query).idf, (r.settings ->> 'bm25_k1')::double precision,
        (r.settings ->> 'bm25_b')::double precision, (r.query).avg_length, (r.settings ->> 'context_weight')::double precision
    ) as b
    left join memory.chunk_embeddings as e
        on e.tenant_id = r.tenant and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no and e.model = r.model
    left join memory.chunk_embeddings as x
        on x.tenant_id = r.tenant and x.turn_id = c.context_turn_id and x.chunk_no = 0 and x.model = r.model
    where (tm.memory_id is not null
           or not exists (select from memory.memories as m where m.tenant_id = r.tenant and m.turn_id = c.turn_id))
        -- With tags (recall_tags), only memories that have one of them.
        and (jsonb_array_length(r.settings -> 'recall_tags') = 0
             or tm.tags && array(select jsonb_array_elements_text(r.settings -> 'recall_tags')))
),
-- One row per chunk and fusion signal.
chunk_values as (
    select f.turn_id, f.chunk_no, v.n, v.value, v.weight
    from chunk_features as f
    cross join lateral (select row(%4$s)::memory.recall_candidate as c) as k
    cross join lateral unnest(array[%1$s]::double precision [], ($1).fusion_weights)
        with ordinality as v (value, weight, n)
),
chunk_ranked as (
    select v.*,
           case when v.value is not null then rank() over (partition by v.n order by v.value desc nulls last) end
               as list_rank,
           (v.value - avg(v.value) over (partition by v.n)) / nullif(stddev_pop(v.value) over (partition by v.n), 0)
               as z
    from chunk_values as v
),
chunk_fused as (
    select r.turn_id, r.chunk_no, sum(r.contribution) as fused,
           array_agg(r.value order by r.n) as fusion_values, array_agg(r.list_rank::integer order by r.n) as ranks,
           array_agg(r.z order by r.n) as zs, array_agg(r.contribution order by r.n) as fusion_contributions
    from (
        select r.*,
               case when ($1).settings ->> 'fusion' = 'rrf' then
                        case when r.value is not null
                                 then r.weight / ((($1).settings ->> 'rrf_k')::double precision + r.list_rank)
                             else 0 end
                    else r.weight * coalesce(r.z, 0)
               end as contribution
        from chunk_ranked as r
    ) as r
    group by r.turn_id, r.chunk_no
),
-- A turn is scored by its best chunk.
turn_best as (
    select distinct on (f.turn_id) f.*, cf.fused, cf.fusion_values as _fusion_values, cf.ranks as _ranks,
           cf.zs as _zs, cf.fusion_contributions as _fusion_contributions
    from chunk_fused as cf
    inner join chunk_features as f on cf.turn_id = f.turn_id and cf.chunk_no = f.chunk_no
    order by f.turn_id, cf.fused desc, f.chunk_no
),
$sql$
$fn$;

comment on function memory_internal._scoring_sql_chunks() is
'Internal: recall''s scoring statement, its first part: the chunk stage and fusion, each candidate turn by '
'its best chunk.';

-- Recall's scoring statement, its second part: each candidate's place in its session, and its session's scores.
create or replace function memory_internal._scoring_sql_sessions() returns text
language sql
immutable parallel safe
as $fn$
select $sql$
-- Per turn, by window functions over the candidates (no self-joins): its session's best fused score,
-- the fused scores of the turns just before and after it (when they are candidates).
positioned as (
    select b.*,
           row_number() over w = 1 as _session_row,
           max(b.fused) over (partition by b.session_key) as session_best,
           case when lag(b.position) over w = b.position - 1 then lag(b.fused) over w end as previous_fused,
           case when lead(b.position) over w = b.position + 1 then lead(b.fused) over w end as next_fused
    from turn_best as b
    window w as (partition by b.session_key order by b.position)
),
-- On the first candidate of each session, that session's summary and vector scores, looked up once
-- (materialized: inlined, each use below would run the lookups again).
with_session as materialized (
    select p.*, case when p._session_row then coalesce(sm.summary_score, 0) end as _summary_score,
           sv.cosine as _session_cosine
    from positioned as p
    left join lateral (
        select ts_rank_cd(m.tsv, (($1).query).tsquery) as summary_score from memory.summaries as m
        -- Only for a session's first row (the key is null on the others, so the index finds nothing).
        where m.tenant_id = ($1).tenant and m.session_key = case when p._session_row then p.session_key end
    ) as sm on true
    left join lateral (
        select 1 - (e.embedding <=> ($1).query_vector) as cosine from memory.session_embeddings as e
        where e.tenant_id = ($1).tenant and e.session_key = case when p._session_row then p.session_key end
            and e.model = ($1).model
    ) as sv on true
),
-- z-scores over the candidate sessions (one row each), on their first rows ...
session_z as (
    select ws.*,
           case when ws._session_row then
               (ws._summary_score - avg(ws._summary_score) filter (where ws._session_row) over ())
               / nullif(stddev_pop(ws._summary_score) filter (where ws._session_row) over (), 0)
           end as _summary_z_here,
           case when ws._session_row then
               (ws._session_cosine - avg(ws._session_cosine) filter (where ws._session_row) over ())
               / nullif(stddev_pop(ws._session_cosine) filter (where ws._session_row) over (), 0)
           end as _session_vector_z_here
    from with_session as ws
),
-- ... spread to every candidate of the session.
scored as (
    select z.*, max(z._summary_z_here) over s as summary_z, max(z._session_vector_z_here) over s as session_vector_z
    from session_z as z
    window s as (partition by z.session_key)
),
$sql$
$fn$;

comment on function memory_internal._scoring_sql_sessions() is
'Internal: recall''s scoring statement, its second part: each candidate''s place in its session, and its '
'session''s scores.';

-- Recall's scoring statement, its last part: the turn and memory stages, the boosts, the memories placed, the rerank.
create or replace function memory_internal._scoring_sql_turns() returns text
language sql
immutable parallel safe
as $fn$
select $sql$
-- The turn and memory stages' features of each candidate turn: d its best chunk's features with the fusion
-- stage's, t the turn, s its session, tm the memory it carries (memory_id, kind, importance, status,
-- evidence_turns, tier, last_used; nulls if none), r the recall (materialized: a signal function reading its
-- candidate twice is inlined only when the candidate is plain columns).
described as materialized (
    select d.* %5$s
    from scored as d
    cross join (select ($1).*) as r
    cross join lateral (
        select d._memory_id as memory_id, d._memory_kind as kind, d._memory_importance as importance,
               d._memory_status as status, d._memory_evidence as evidence_turns, d._memory_tier as tier,
               d._memory_last_used as last_used, d._memory_tags as tags
    ) as tm
    inner join memory.turns as t on t.tenant_id = r.tenant and t.turn_id = d.turn_id
    inner join memory.sessions as s on s.tenant_id = r.tenant and s.session_key = d.session_key
),
-- Every boost signal of each turn, added up in the turn's own row (a few values: no join back needed).
final as (
    select d.turn_id, d.session_key, d.chunk_no, d._text, d.fused, d.fused + b.boost as own_score,
           d._memory_id, d._memory_kind, d._memory_evidence, m.memory_lift,
           d._fusion_values || b.boost_values as signal_values,
           d._fusion_contributions || b.boost_contributions as contributions,
           d._ranks, d._zs,
           row_number() over (order by d.fused + b.boost desc, d.turn_id) as fused_rank
    from described as d
    cross join lateral (select row(%6$s)::memory.recall_candidate as c) as k
    cross join lateral (
        select coalesce(sum(v.weight * coalesce(v.value, 0)), 0) as boost,
               coalesce(array_agg(v.value order by v.n), '{}') as boost_values,
               coalesce(array_agg(v.weight * coalesce(v.value, 0) order by v.n), '{}') as boost_contributions
        from unnest(array[%2$s]::double precision [], ($1).boost_weights) with ordinality as v (value, weight, n)
    ) as b
    -- What being a curated memory adds to the score: its boosts less those of its words as a plain turn.
    cross join lateral (
        select case when d._memory_id is null then 0 else b.boost - coalesce(sum(v.weight * coalesce(v.value, 0)), 0) end
            as memory_lift
        from (select jsonb_populate_record(k.c, %7$L) as c) as k
        cross join lateral unnest(array[%2$s]::double precision [], ($1).boost_weights)
            with ordinality as v (value, weight, n)
        where d._memory_id is not null
    ) as m
),
-- A curated memory stands for the turns it came from: it scores at least as its best evidence turn among
-- the candidates does (which has the conversation around it that a memory lacks) plus what being a memory
-- adds (memory_lift: importance, kind, status), and ranks ahead of it. Other candidates keep their score (and
-- do not look for evidence: each look reads every candidate).
placed as (
    select f.*, case when f._memory_evidence is null then f.own_score else greatest(f.own_score, f.memory_lift + (
        select max(e.own_score) from final as e where e.turn_id = any(f._memory_evidence)
    )) end as score
    from final as f
),
reranked as (
    select memory_internal._rerank(($1).query_text, array_agg(f._text order by f.fused_rank), ($1).settings) as answer
    from placed as f
    where ($1).settings ->> 'rerank' = 'http' and f.fused_rank <= (($1).settings ->> 'rerank_candidates')::integer
    having count(*) > 0
)
select f.turn_id, f.session_key, f.chunk_no, f.score, f.fused, rr.score as rerank_score,
       row_number() over (
           order by rr.score desc nulls last, f.score desc, f._memory_evidence is null, f.turn_id
       ) as ord,
       f.signal_values, f.contributions, f._ranks, f._zs, r.answer ->> 'error' as rerank_error, ($1).context,
       f._memory_id, f._memory_kind, f._memory_evidence
from placed as f
left join reranked as r on true
left join lateral (select (r.answer -> 'scores' ->> (f.fused_rank - 1)::integer)::double precision as score) as rr
    on true
$sql$
$fn$;

comment on function memory_internal._scoring_sql_turns() is
'Internal: recall''s scoring statement, its last part: the turn and memory stages, the boosts, the memories '
'placed, the rerank.';

-- The statement that scores the candidate chunks of one recall, of its three parts; its one parameter, $1,
-- is the recall (memory_internal._recall_context). %1$s and %2$s are the fusion and boost signal calls from
-- memory_internal._signal_calls; the features' columns and candidates come from memory_internal._feature_sql.
-- Columns the pipeline keeps for itself start with an underscore (a feature's name cannot).
create or replace function memory_internal._scoring_sql(fusion_calls text, boost_calls text) returns text
language sql
stable
as $fn$
select format(
    memory_internal._scoring_sql_chunks() || memory_internal._scoring_sql_sessions()
    || memory_internal._scoring_sql_turns(),
    fusion_calls, boost_calls, p.chunk_columns, p.chunk_candidate, p.turn_columns, p.turn_candidate, p.plain_turn
)
from memory_internal._feature_sql() as p
$fn$;

comment on function memory_internal._scoring_sql(text, text) is
'Internal: the statement that scores recall candidates, with the registry''s signal calls and features in it.';

-- Recall's statement with the registry as it is, built as a temporary view (and dropped): an error if it does
-- not parse, else what is wrong with the code it would run as the owner (memory_internal._object_problem of
-- each function, operator and type it uses that is not PostgreSQL's own), or null. memory.define_feature
-- calls it.
create or replace function memory_internal._scoring_code_problem() returns text
language plpgsql
volatile
as $$
declare
    v_fusion record;
    v_boost record;
    v_problem text;
begin
    select * into v_fusion from memory_internal._signal_calls('fusion', '{}');
    select * into v_boost from memory_internal._signal_calls('boost', '{}');
    execute format(
        'create temporary view memory_scoring_check as %s',
        replace(memory_internal._scoring_sql(v_fusion.calls, v_boost.calls), '($1)',
                '(null::memory_internal._recall_context)')
    );
    select string_agg(u.problem, '; ' order by u.problem) into v_problem
    from pg_catalog.pg_depend as d
    inner join pg_catalog.pg_rewrite as w on d.classid = 'pg_catalog.pg_rewrite'::regclass and d.objid = w.oid
    cross join lateral (
        select memory_internal._object_problem(format('function %s', p.oid::regprocedure), p.proowner, p.pronamespace)
        from pg_catalog.pg_proc as p where d.refclassid = 'pg_catalog.pg_proc'::regclass and p.oid = d.refobjid
        union all
        select memory_internal._object_problem(format('operator %s', o.oid::regoperator), o.oprowner, o.oprnamespace)
        from pg_catalog.pg_operator as o where d.refclassid = 'pg_catalog.pg_operator'::regclass and o.oid = d.refobjid
        union all
        select memory_internal._object_problem(format('type %s', t.oid::regtype), t.typowner, t.typnamespace)
        from pg_catalog.pg_type as t where d.refclassid = 'pg_catalog.pg_type'::regclass and t.oid = d.refobjid
    ) as u (problem)
    where w.ev_class = 'pg_temp.memory_scoring_check'::regclass and u.problem is not null;
    drop view pg_temp.memory_scoring_check;
    return v_problem;
end
$$;

comment on function memory_internal._scoring_code_problem() is
'Internal: builds recall''s scoring statement with the registry as it is (an error names what does not parse) '
'and says what code in it a role other than a superuser could change, or null.';

-- Every candidate turn with each signal's value and contribution and the final score, in final order
-- (ord). recall and explain_recall read it.
create or replace function memory_internal._recall_candidates(
    query text, agent_id text, since timestamptz, until timestamptz, source text,
    entities text[], entity_mode text, weights jsonb, query_vector vector, as_of timestamptz,
    include_ended boolean, intent text
) returns table (
    turn_id bigint, session_key bigint, chunk_no integer, score double precision, fused double precision,
    rerank_score double precision, ord bigint, signal_values double precision[], contributions double precision[],
    ranks integer[], zs double precision[], rerank_error text, context jsonb, memory_id bigint, memory_kind text,
    memory_evidence bigint[]
)
language plpgsql
volatile
-- Callers plan for about as many rows as recall_candidates gives (the default of 1000 made plans that
-- joined candidates to themselves look costly enough to compile with JIT, which cost more than the recall).
rows 100
-- The scoring statement is planned once per session (memory_internal._prepared); a generic plan suits it.
set plan_cache_mode = force_generic_plan
-- Its argument travels as text (a literal): times in ISO with their offset, numbers to the last digit.
set datestyle = 'ISO, MDY'
set extra_float_digits = 3
as $$
declare
    v_tenant text := memory.current_tenant();
    v_cfg jsonb;
    v_tuned jsonb;
    v_q memory_internal._recall_query;
    v_degraded text [] := '{}';
    v_model record;
    v_recall_model text;
    v_vector vector := query_vector;
    v_keys bigint [];
    v_chunks integer [];
    v_fusion record;
    v_boost record;
    v_context jsonb;
    v_tiers text [];
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
    if intent is not null and not intent = any (memory_internal._memory_kinds() || 'none'::text) then
        raise exception 'agent_memory: intent must be none or a memory kind (%), got %',
            array_to_string(memory_internal._memory_kinds(), ', '), intent using errcode = 'invalid_parameter_value';
    end if;
    if include_ended is null then
        raise exception 'agent_memory: include_ended must be true or false' using errcode = 'null_value_not_allowed';
    end if;
    select s.settings, s.tuned into v_cfg, v_tuned from memory_internal._recall_settings(weights, agent_id) as s;
    v_q := memory_internal._prepare_query(query, v_tenant, agent_id, v_cfg, entities, entity_mode, intent);
    v_tiers := array(select jsonb_array_elements_text(v_cfg -> 'recall_tiers'));

    -- Vectors: the query embedded in the database (or given), against the model recall may use.
    select * into v_model from memory_internal._embedding_model(v_cfg);
    v_recall_model := memory_internal._recall_model(v_model.model);
    if v_model is null then
        v_degraded := v_degraded || 'no embedder configured: full-text only'::text;
    elsif v_recall_model is null then
        v_degraded := v_degraded || 'no embeddings yet: full-text only'::text;
    elsif v_vector is null and v_recall_model = 'client' then
        v_degraded := v_degraded || 'client embedder and no query_vector: full-text only'::text;
    elsif v_vector is null then
        -- While a new model is built, the query is embedded with the model whose vectors recall reads.
        begin
            v_vector := (memory_internal._embed_texts(array[v_q.search_text], v_cfg,
                                                      nullif(v_recall_model, v_model.model)))[1];
        exception when others then
            v_degraded := v_degraded || ('query embedding failed: ' || sqlerrm || ': full-text only');
        end;
    end if;
    if query_vector is not null and vector_norm(query_vector) = 0 then
        raise exception 'agent_memory: query_vector is all zeros; it has no direction to compare'
            using errcode = 'invalid_parameter_value';
    end if;
    if v_vector is not null and query_vector is not null and vector_dims(query_vector) <> (
        select m.dimensions from memory.embedding_models as m where m.model = v_recall_model
    ) then
        raise exception 'agent_memory: query_vector has % dimensions but model % has %', vector_dims(query_vector),
            v_recall_model, (select m.dimensions from memory.embedding_models as m where m.model = v_recall_model);
    end if;

    select array_agg(c.turn_id), array_agg(c.chunk_no) into v_keys, v_chunks
    -- At as_of, nothing said after it is recalled.
    from memory_internal._candidate_chunks(
        v_tenant, agent_id, since, least(until, as_of), source, v_cfg, v_q, v_vector, v_recall_model,
        memory_internal._list_tiers(v_tenant, v_tiers)
    ) as c;

    select * into v_fusion from memory_internal._signal_calls('fusion', v_cfg);
    select * into v_boost from memory_internal._signal_calls('boost', v_cfg);
    v_context := jsonb_build_object(
        'model', v_recall_model, 'fusion', v_cfg ->> 'fusion', 'speakers_matched', to_jsonb(v_q.speakers),
        'entities_matched', to_jsonb(v_q.entity_names),
        'degraded', to_jsonb(v_degraded || v_fusion.skipped || v_boost.skipped),
        'signals', to_jsonb(v_fusion.names || v_boost.names),
        'fusion_signals', cardinality(v_fusion.names), 'weights', to_jsonb(v_fusion.weights || v_boost.weights),
        'rerank', v_cfg ->> 'rerank', 'as_of', as_of, 'include_ended', include_ended, 'tiers', to_jsonb(v_tiers),
        'tags', v_cfg -> 'recall_tags', 'tuned', v_tuned,
        'route', case when v_q.intent is not null then 'memory first: ' || v_q.intent else 'hybrid' end
    );
    -- One plan for the scoring statement, kept for the session (on Citus too, where this function's statements
    -- are planned per call: the statement names the tenant's shards here). The setting ends with the function.
    perform pg_catalog.set_config('plan_cache_mode', 'force_generic_plan', true);
    -- A prepared statement takes its argument as a value in the EXECUTE command (a quoted literal).
    return query execute format(
        'execute %I(%L)',
        memory_internal._prepared('recall_score', memory_internal._scoring_sql(v_fusion.calls, v_boost.calls),
                                  array['memory_internal._recall_context'], v_tenant),
        row(v_tenant, coalesce(v_keys, '{}'), coalesce(v_chunks, '{}'), v_q, query, v_vector, v_recall_model, v_cfg,
            v_fusion.weights, v_boost.weights, as_of, include_ended, v_context)::memory_internal._recall_context
    );
end
$$;

comment on function memory_internal._recall_candidates(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text
)
is 'Internal: every candidate turn of a recall with each signal''s value and contribution and the final score.';
