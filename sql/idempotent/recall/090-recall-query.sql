-- Recall, step 1: the query prepared once — settings in force, speakers it names, the text searched,
-- its lexemes with document frequencies and idf in the scope (tenant, and agent when given), the
-- entities it is about.

-- The factors fitted to a tenant's feedback (memory.tune_weights) that a recall of this agent applies to the
-- weights in force: the agent's own, else the tenant's (agent ''), else none. tuned says which: {"agent_id",
-- "fitted_at"}.
create or replace function memory_internal._tuned_factors(
    tenant text, agent_id text, out factors jsonb, out tuned jsonb
)
language sql
stable
as $$
    select w.factors, jsonb_build_object('agent_id', w.agent_id, 'fitted_at', w.fitted_at)
    from memory.tuned_weights as w
    where w.tenant_id = tenant and w.agent_id in ('', coalesce(_tuned_factors.agent_id, ''))
    order by w.agent_id desc
    limit 1
$$;

comment on function memory_internal._tuned_factors(text, text) is
'Internal: the tuned factors a recall of this agent applies (the agent''s, else the tenant''s), and which.';

-- The recall settings in force: the session's and memory.config's, each weight multiplied by its factor tuned
-- from feedback for this agent (use_tuned_weights, z-score fusion only; a weight the session set keeps its
-- value), then per-call weights (keys of memory.setting_definitions()) on top. tuned: which tuned factors were
-- used (null: none).
drop function if exists memory_internal._recall_settings(jsonb);
create or replace function memory_internal._recall_settings(
    weights jsonb, agent_id text, out settings jsonb, out tuned jsonb
)
language plpgsql
stable
as $$
declare
    v_key text;
    v_call jsonb := '{}';
    v_tuned record;
begin
    if jsonb_typeof(weights) <> 'object' then
        raise exception 'agent_memory: weights must be a JSON object of settings, got %', jsonb_typeof(weights);
    end if;
    settings := memory_internal._settings_json();
    for v_key in select jsonb_object_keys(weights) loop
        perform memory_internal._check_set_by(v_key, 'a call''s weights');
        v_call := v_call || jsonb_build_object(v_key, memory_internal._validated_setting(v_key, weights -> v_key));
    end loop;
    if (coalesce(v_call -> 'use_tuned_weights', settings -> 'use_tuned_weights'))::boolean
        and coalesce(v_call ->> 'fusion', settings ->> 'fusion') = 'zscore' then
        select * into v_tuned from memory_internal._tuned_factors(memory.current_tenant(), agent_id);
        if v_tuned.factors is not null then
            settings := settings || (
                select coalesce(jsonb_object_agg(
                    'weight_' || f.key, (settings ->> ('weight_' || f.key))::double precision * f.value::double precision
                ), '{}')
                from jsonb_each_text(v_tuned.factors) as f
                where settings ? ('weight_' || f.key) and not ('weight_' || f.key) = any(
                    array(select lower(n) from unnest(memory_internal._session_setting_names()) as n)
                )
            );
            tuned := v_tuned.tuned;
        end if;
    end if;
    settings := settings || v_call;
end
$$;

comment on function memory_internal._recall_settings(jsonb, text) is
'Internal: the settings in force for one recall of an agent: the session''s and configured ones, each weight '
'times its factor tuned from feedback (use_tuned_weights), per-call weights taking precedence; and which.';

-- The speakers of the scope whose names the query mentions (whole words, any case).
-- plpgsql for the plan it keeps across calls (see memory_internal._settings_json).
create or replace function memory_internal._query_speakers(query text, tenant text, agent text) returns text[]
language plpgsql
stable
as $$
begin
    return (
        select coalesce(array_agg(distinct s.speaker), '{}')
        from memory.speakers as s
        where s.tenant_id = tenant and (agent is null or s.agent_id = agent)
            and query ~* ('\m' || regexp_replace(s.speaker, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M')
    );
end
$$;

comment on function memory_internal._query_speakers(text, text, text) is
'Internal: speakers of the scope named in the query.';

create or replace function memory_internal._without_names(query text, names text[]) returns text
language sql
immutable
as $$
    select coalesce((
        select regexp_replace(query, '\m(' || string_agg(regexp_replace(n, '([.*+?^${}()|\[\]\\])', '\\\1', 'g'), '|')
                                     || ')(''s)?\M', ' ', 'gi')
        from unnest(names) as n
    ), query)
$$;

comment on function memory_internal._without_names(text, text[]) is
'Internal: the query with the given names taken out.';

-- The days a query names ("in March 2024", "on 3 May", "last week"), relative to today, or null;
-- English expressions (agent_memory_db.periods).
create or replace function memory_internal._named_period(query text, today date) returns daterange
language plpython3u
immutable strict parallel safe
as $$
@load_python@
import datetime
from agent_memory_db.periods import named_period
period = named_period(query, datetime.date.fromisoformat(today))
return None if period is None else "[%s,%s)" % period
$$;

comment on function memory_internal._named_period(text, date) is
'Internal: the days a query names (first day, day after the last), relative to today; null if none.';

-- The keys of the runs of one to four words of a query written as a name (capitalized, with a digit or
-- a symbol inside, or a name of the gazetteer that is not a common word): the names it mentions
-- entities by (agent_memory_db.entities.query).
create or replace function memory_internal._query_entity_names(query text, gazetteer jsonb) returns text[]
language plpython3u
immutable strict parallel safe
as $$
@load_python@
import json
from agent_memory_db.entities.query import query_names
return query_names(query, json.loads(gazetteer))
$$;

comment on function memory_internal._query_entity_names(text, jsonb) is
'Internal: the normalized keys of the runs of one to four words of a query written as a name (the names '
'of entities it may mention).';

-- The entities a recall is about, in the scope: those the caller passed and those the query names (a run
-- of its words written as a name that is an entity's key or alias; speaker names, matched by signal
-- speaker, are taken out of the searched text first). Each name is a group of the keys it stands for (one
-- per scope when no agent is given), weighted by how specific it is in the scope: ln(1 + N / n) / ln(1 + N)
-- for n turns mentioning it among N chunks, 1 for a name said once, near 0 for one said everywhere.
-- Their neighbours: the entities most often mentioned with them, by edge count. With entity_mode all, the
-- sessions that mention every passed entity (none when one is unknown).
create or replace function memory_internal._query_entities(
    inout q memory_internal._recall_query, tenant text, agent text, entities text[], entity_mode text,
    gazetteer jsonb
)
language plpgsql
stable
as $$
declare
    v_passed text [];
    v_names text [];
begin
    if exists (select from unnest(entities) as e where coalesce(memory.normalize_entity(e), '') = '') then
        raise exception 'agent_memory: entities must be names; these have nothing left once normalized: %',
            (select string_agg(coalesce(quote_literal(e), 'null'), ', ') from unnest(entities) as e
             where coalesce(memory.normalize_entity(e), '') = '');
    end if;
    v_passed := array(select distinct memory.normalize_entity(e) from unnest(entities) as e);
    v_names := v_passed || memory_internal._query_entity_names(q.search_text, gazetteer);
    -- Each entity found is grouped under the name that found it: its key, else the alias asked for.
    select coalesce(array_agg(f.entity_id order by f.entity_id), '{}'),
           coalesce(array_agg(f.name_group order by f.entity_id), '{}'),
           coalesce(array_agg(distinct f.name), '{}')
    into q.entity_ids, q.entity_groups, q.entity_names
    from (
        select e.entity_id, e.name,
               dense_rank() over (order by case when e.normalized = any(v_names) then e.normalized else (
                   select min(a) from unnest(e.aliases) as a where a = any(v_names)
               ) end)::integer as name_group
        from memory.entities as e
        where e.tenant_id = tenant and (agent is null or e.agent_id in (agent, ''))
            and (e.normalized = any(v_names) or e.aliases && v_names)
            -- An entity no turn mentions (one kept for its state alone) lifts nothing.
            and exists (select from memory.entity_mentions as m where m.tenant_id = tenant and m.entity_id = e.entity_id)
    ) as f;
    if cardinality(q.entity_ids) > 0 then
        select array_agg(w.weight order by k.entity_id) into q.entity_weights
        from unnest(q.entity_ids, q.entity_groups) as k (entity_id, name_group)
        inner join (
            select g.name_group,
                   ln(1 + greatest(q.chunks_in_scope, 1) / greatest(count(distinct m.turn_id), 1))
                   / ln(1 + greatest(q.chunks_in_scope, 1)) as weight
            from unnest(q.entity_ids, q.entity_groups) as g (entity_id, name_group)
            left join memory.entity_mentions as m on m.tenant_id = tenant and m.entity_id = g.entity_id
            group by g.name_group
        ) as w on w.name_group = k.name_group;
        select coalesce(array_agg(x.neighbor order by x.turns desc, x.neighbor), '{}') into q.neighbor_ids
        from (
            select case when g.entity_a = any(q.entity_ids) then g.entity_b else g.entity_a end as neighbor,
                   sum(g.turns) as turns
            from memory.entity_edges as g
            where g.tenant_id = tenant and (g.entity_a = any(q.entity_ids) or g.entity_b = any(q.entity_ids))
            group by 1
            order by 2 desc, 1
            limit 10 + cardinality(q.entity_ids)
        ) as x
        where x.neighbor <> all(q.entity_ids);
        q.neighbor_ids := q.neighbor_ids[1:10];
    end if;
    if entity_mode = 'all' and cardinality(v_passed) > 0 then
        select coalesce(array_agg(s.session_key), '{}') into q.entity_sessions
        from (
            select m.session_key
            from unnest(v_passed) as p (key)
            cross join lateral unnest(memory_internal._entity_ids(p.key, agent)) as e (entity_id)
            inner join memory.entity_mentions as m on m.tenant_id = tenant and m.entity_id = e.entity_id
            group by m.session_key
            having count(distinct p.key) = cardinality(v_passed)
        ) as s;
    end if;
end
$$;

comment on function memory_internal._query_entities(
    memory_internal._recall_query, text, text, text[], text, jsonb
) is
'Internal: the entities a recall is about (passed, or named in the query) with how specific each is in '
'the scope, their graph neighbours, and for entity_mode all the sessions mentioning every passed one.';

-- The query prepared for the candidate lists and the full-text score.
create or replace function memory_internal._prepare_query(
    query text, tenant text, agent text, settings jsonb, entities text[], entity_mode text, intent text
)
returns memory_internal._recall_query
language plpgsql
stable
as $$
declare
    v_tsconfig regconfig := (settings ->> 'text_search_config')::regconfig;
    q memory_internal._recall_query;
begin
    q.speakers := memory_internal._query_speakers(query, tenant, agent);
    q.search_text := query;
    -- Speaker names the query mentions are matched as speakers (signal speaker), so by default they are
    -- left out of what is searched as text and as a vector: indexed text holds no speaker names.
    if (settings ->> 'strip_speaker_names')::boolean and cardinality(q.speakers) > 0 then
        q.search_text := memory_internal._without_names(query, q.speakers);
        if btrim(regexp_replace(q.search_text, '\W', '', 'g')) = '' then
            q.search_text := query;
        end if;
    end if;
    q.lexemes := tsvector_to_array(to_tsvector(v_tsconfig, q.search_text));
    q.period := (
        select tstzrange(lower(p)::timestamptz, upper(p)::timestamptz)
        from memory_internal._named_period(query, current_date) as p
        where p is not null
    );
    select coalesce(sum(k.chunks), 0), coalesce(sum(k.total_length), 0) / greatest(coalesce(sum(k.chunks), 0), 1)
    into q.chunks_in_scope, q.avg_length
    from memory.corpus as k
    where k.tenant_id = tenant and (agent is null or k.agent_id = agent);
    select array_agg(coalesce(d.df, 0) order by l.n),
           array_agg(ln(1 + (q.chunks_in_scope - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) order by l.n)
    into q.df, q.idf
    from unnest(q.lexemes) with ordinality as l (lexeme, n)
    left join lateral (
        select sum(x.chunks) as df from memory.lexicon as x
        where x.tenant_id = tenant and x.lexeme = l.lexeme and (agent is null or x.agent_id = agent)
    ) as d on true;
    if cardinality(q.lexemes) > 0 then
        q.tsquery := array_to_string(array(select quote_literal(l) from unnest(q.lexemes) as l), ' | ')::tsquery;
        -- Terms in more than lexical_max_df chunks of the scope still count in every score, but do not
        -- bring candidates by themselves (the rarest term always does): a word in most chunks would make
        -- the list score nearly every chunk while adding little to any.
        q.generating := array_to_string(array(
            select quote_literal(g.lexeme) from unnest(q.lexemes, q.df) as g (lexeme, df)
            where g.df <= (settings ->> 'lexical_max_df')::bigint or g.df = (select min(m) from unnest(q.df) as m)
        ), ' | ')::tsquery;
    end if;
    q := memory_internal._query_entities(q, tenant, agent, entities, entity_mode, settings -> 'entity_gazetteer');
    q := memory_internal._fleet_scope(q, tenant, agent, settings);
    -- Tool results of these tools, with these statuses, alone (recall's tools and tool_statuses).
    q.tools := nullif(array(select jsonb_array_elements_text(settings -> 'recall_tools')), '{}');
    q.tool_statuses := nullif(array(select jsonb_array_elements_text(settings -> 'recall_tool_statuses')), '{}');
    q.run_id := nullif(settings ->> 'recall_run_id', '');
    -- The kind of memory the question asks for (the caller's intent, else the one its words name).
    q.intent := case when intent is null then memory.query_intent(query) when intent <> 'none' then intent end;
    q.intent_kinds := case when q.intent is not null then array[q.intent] end;
    return q;
end
$$;

comment on function memory_internal._prepare_query(text, text, text, jsonb, text[], text, text) is
'Internal: a recall query prepared once (text searched, speakers and entities named, lexemes with df '
'and idf in scope, the period it names, the kind of memory it asks for).';
