-- Recall, step 1: the query prepared once — settings in force, speakers it names, the text searched,
-- its lexemes with document frequencies and idf in the scope (tenant, and agent when given).

-- The recall settings in force, with per-call weights (keys of memory.setting_definitions()) on top.
create or replace function memory_internal._recall_settings(weights jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    v_key text;
    v_settings jsonb;
begin
    if weights is null then
        return memory_internal._settings_json();
    end if;
    if jsonb_typeof(weights) <> 'object' then
        raise exception 'agent_memory: weights must be a JSON object of settings, got %', jsonb_typeof(weights);
    end if;
    v_settings := memory_internal._settings_json();
    for v_key in select jsonb_object_keys(weights) loop
        perform memory_internal._check_set_by(v_key, 'a call''s weights');
        v_settings := v_settings || jsonb_build_object(v_key, memory_internal._validated_setting(v_key, weights -> v_key));
    end loop;
    return v_settings;
end
$$;

comment on function memory_internal._recall_settings(jsonb) is
'Internal: the settings in force for one recall, per-call weights taking precedence.';

-- The speakers of the scope whose names the query mentions (whole words, any case).
-- plpgsql for the plan it keeps across calls (see memory_internal._settings_json).
create or replace function memory_internal._query_speakers(query text, tenant text, agent text) returns text[]
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
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import datetime
from agent_memory_db.periods import named_period
period = named_period(query, datetime.date.fromisoformat(today))
return None if period is None else "[%s,%s)" % period
$$;

comment on function memory_internal._named_period(text, date) is
'Internal: the days a query names (first day, day after the last), relative to today; null if none.';

-- The query prepared for the candidate lists and the full-text score.
create or replace function memory_internal._prepare_query(query text, tenant text, agent text, settings jsonb)
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
    return q;
end
$$;

comment on function memory_internal._prepare_query(text, text, text, jsonb) is
'Internal: a recall query prepared once (text searched, speakers named, lexemes with df and idf in scope, '
'the period it names).';
