-- Requests in plain words ("top 10 recent decisions", "observations tagged docker and error", "user messages
-- mentioning Redis last week", "failed bash calls"): memory.query reads one as filters over memories, sessions,
-- turns or tool executions, shows the SQL it runs and names the words it did not understand. The words are
-- read by agent_memory_db.plain_query (a fixed vocabulary, no model), or by the chat endpoint when the
-- configuration allows it (query_reader).

-- The filters a request asks for, read from its words relative to today; an error names an empty request or a
-- k (how many rows) out of bounds.
create or replace function memory_internal._read_plain_query(request text, today date) returns jsonb
language plpython3u
immutable strict parallel safe
as $$
@load_python@
import datetime, json
from agent_memory_db import plain_query
try:
    return json.dumps(plain_query.read(request, datetime.date.fromisoformat(today)))
except ValueError as exc:
    plpy.error("agent_memory: %s" % exc, sqlstate="22023")
$$;

comment on function memory_internal._read_plain_query(text, date) is
'Internal: the filters a request in plain words asks for (target, kinds, statuses, importance, tags, entity '
'types, about, containing, roles, agent, period, order, k), what each phrase set and the words not '
'understood (agent_memory_db.plain_query).';

-- The same filters as the chat endpoint proposes them, checked as the words' own are.
create or replace function memory_internal._read_plain_query_by_llm(request text, today date) returns jsonb
language plpython3u
as $$
@load_python@
import json
from agent_memory_db import openai_compat, plain_query
ask = plpy.prepare("select memory_internal._llm_chat('query', $1, memory_internal._settings_json()) as a", ["jsonb"])
answer = plpy.execute(ask, [json.dumps({"request": request, "today": today})])[0]["a"]
try:
    return json.dumps(plain_query.from_llm(openai_compat.json_object(answer, "the filters")))
except ValueError as exc:
    plpy.error("agent_memory: llm query reading failed: %s" % exc)
$$;

comment on function memory_internal._read_plain_query_by_llm(text, date) is
'Internal: the filters of a request in plain words as the chat endpoint proposes them (setting query_reader '
'llm), checked as memory_internal._read_plain_query''s are.';

-- The text array a JSON array of strings holds (empty for null).
create or replace function memory_internal._json_texts(value jsonb) returns text[]
language sql
immutable parallel safe
as $$
    select coalesce(array(select jsonb_array_elements_text(value)), '{}')
$$;

comment on function memory_internal._json_texts(jsonb) is
'Internal: the strings of a JSON array as a text array (empty for null).';

-- The condition that a row of a target is about a phrase (about) or contains it: a memory whose subject is
-- the phrase (about) or whose words contain it; a session whose summary or one of whose turns contains it; a
-- turn whose words contain it.
create or replace function memory_internal._plain_phrase_condition(target text, phrase text, about boolean)
returns text
language sql
immutable parallel safe
as $$
    select case target
        when 'memories' then case when about then format('(i.subjects @> array[memory.normalize_entity(%L)] or ', phrase)
                             else '(' end || format('strpos(lower(i.content), lower(%L)) > 0)', phrase)
        when 'turns' then format('strpos(lower(t.content), lower(%L)) > 0', phrase)
        when 'tool_executions' then format('(strpos(lower(x.result), lower(%1$L)) > 0 '
                                           'or strpos(lower(x.arguments::text), lower(%1$L)) > 0)', phrase)
        else format('(strpos(lower(coalesce(y.summary, %L)), lower(%L)) > 0 or exists (select 1 from memory.turns as n '
                    'where n.tenant_id = s.tenant_id and n.session_key = s.session_key '
                    'and strpos(lower(n.content), lower(%2$L)) > 0))', '', phrase)
    end
$$;

comment on function memory_internal._plain_phrase_condition(text, text, boolean) is
'Internal: the SQL condition that a memory, session, turn or tool execution (its result or arguments) is about '
'(a memory: a subject) or contains a phrase.';

-- The conditions of a request's memory filters (alias i: the view memory.memory_items, this tenant's): what
-- holds now unless statuses are named, kinds, importance, tags (all or any), entity types of the subjects.
create or replace function memory_internal._plain_memory_conditions(filters jsonb) returns text[]
language sql
immutable parallel safe
as $$
    select array_remove(array[
        case when filters ? 'statuses'
             then format('i.status = any (%L::text[])', memory_internal._json_texts(filters -> 'statuses'))
             else 'memory.memory_holds(i.status, i.valid_from, i.valid_to, null)' end,
        case when filters ? 'kinds'
             then format('i.kind = any (%L::text[])', memory_internal._json_texts(filters -> 'kinds')) end,
        case when filters -> 'importance' ? 'min'
             then format('i.importance >= %L', (filters #>> '{importance,min}')::float8) end,
        case when filters -> 'importance' ? 'max'
             then format('i.importance <= %L', (filters #>> '{importance,max}')::float8) end,
        case when filters -> 'tags' ? 'all'
             then format('i.tags @> %L::text[]', memory_internal._json_texts(filters #> '{tags,all}')) end,
        case when filters -> 'tags' ? 'any'
             then format('i.tags && %L::text[]', memory_internal._json_texts(filters #> '{tags,any}')) end,
        case when filters ? 'entity_types'
             then format('exists (select 1 from memory.entities as e where e.tenant_id = memory.current_tenant() '
                         'and e.agent_id in (i.agent_id, '''') and e.normalized = any (i.subjects) and e.type = any (%L::text[]))',
                         memory_internal._json_texts(filters -> 'entity_types')) end
    ], null)
$$;

comment on function memory_internal._plain_memory_conditions(jsonb) is
'Internal: the SQL conditions of a request''s memory filters (statuses, else what holds now; kinds, importance, '
'tags, entity types), values quoted as literals.';

-- The conditions of a request's filters, each value quoted as a literal. Memories: as above. Sessions (s,
-- summary y) and turns (t): this tenant's conversations (not the session 'remembered'); turns' roles. Tool
-- executions (x, the view memory.tool_executions): tools, statuses, a least duration. Every target: agent,
-- period (when a memory began to hold, a session started, a turn was said, a tool was called), the phrases it
-- is about or contains.
create or replace function memory_internal._plain_query_conditions(filters jsonb) returns text[]
language plpgsql
immutable parallel safe
as $$
declare
    v_target text := filters ->> 'target';
    v_alias text := case v_target when 'memories' then 'i' when 'sessions' then 's' when 'turns' then 't' else 'x' end;
    v_when text := case v_target when 'memories' then 'i.valid_from' when 'sessions' then 's.started_at'
                   when 'turns' then 't.created_at' else 'x.called_at' end;
    v_all text[] := array[]::text[];
begin
    if v_target = 'memories' then
        v_all := memory_internal._plain_memory_conditions(filters);
    elsif v_target in ('sessions', 'turns') then  -- the conversations alone: 'remembered' holds memories' words
        v_all := array[format('%s.tenant_id = memory.current_tenant()', v_alias), 's.session_id <> ''remembered'''];
    end if;
    if filters ? 'roles' then
        v_all := v_all || format('t.role = any (%L::text[])', memory_internal._json_texts(filters -> 'roles'));
    end if;
    if filters ? 'tools' then
        v_all := v_all || format('x.tool = any (%L::text[])', memory_internal._json_texts(filters -> 'tools'));
    end if;
    if filters ? 'tool_statuses' then
        v_all := v_all || format('x.status = any (%L::text[])', memory_internal._json_texts(filters -> 'tool_statuses'));
    end if;
    if filters ? 'min_duration_ms' then
        v_all := v_all || format('x.duration_ms >= %L', (filters ->> 'min_duration_ms')::bigint);
    end if;
    if filters ? 'agent_id' then
        v_all := v_all || format('%s.agent_id = %L', v_alias, filters ->> 'agent_id');
    end if;
    if filters ? 'run_id' then
        v_all := v_all || case v_target
            when 'memories' then format('i.run_id = %L', filters ->> 'run_id')
            when 'tool_executions' then format('exists (select from memory.sessions as r where r.tenant_id = '
                'memory.current_tenant() and r.agent_id = x.agent_id and r.session_id = x.session_id and r.run_id = %L)',
                filters ->> 'run_id')
            else format('s.run_id = %L', filters ->> 'run_id')
        end;
    end if;
    if jsonb_typeof(filters -> 'period') = 'array' then
        v_all := v_all || format('%1$s >= %2$L::date and %1$s < %3$L::date', v_when, filters #>> '{period,0}',
                                 filters #>> '{period,1}');
    end if;
    return v_all
        || array(select memory_internal._plain_phrase_condition(v_target, p, true)
                 from unnest(memory_internal._json_texts(filters -> 'about')) as p)
        || array(select memory_internal._plain_phrase_condition(v_target, p, false)
                 from unnest(memory_internal._json_texts(filters -> 'containing')) as p);
end
$$;

comment on function memory_internal._plain_query_conditions(jsonb) is
'Internal: the SQL conditions of a request''s filters (memories: statuses, else what holds now, kinds, '
'importance, tags, entity types; turns: roles; tool executions: tools, statuses, least duration; all: tenant, '
'agent, run, period, phrases), values quoted as literals.';

-- The query a request's filters make: the columns of its target, its conditions, its order and its k rows.
create or replace function memory_internal._plain_query_sql(filters jsonb) returns text
language plpgsql
immutable parallel safe
as $$
declare
    v_target text := filters ->> 'target';
    v_k integer := (filters ->> 'k')::integer;
begin
    if v_target is null or v_target not in ('memories', 'sessions', 'turns', 'tool_executions') then
        raise exception 'agent_memory: a query''s target must be memories, sessions, turns or tool_executions, got %',
            coalesce(v_target, 'null') using errcode = 'invalid_parameter_value';
    end if;
    if v_k is null or v_k not between 1 and 1000 then
        raise exception 'agent_memory: a query lists 1 to 1000 rows, got %', coalesce(v_k::text, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    return case v_target
        when 'memories' then 'select i.memory_id, i.agent_id, i.kind, i.content, i.key, i.subjects, i.tags, '
            'i.importance, i.status, i.valid_from, i.valid_to' || E'\nfrom memory.memory_items as i'
        when 'sessions' then 'select s.session_id, s.agent_id, s.source, s.started_at, s.updated_at, (select count(*) '
            'from memory.turns as n where n.tenant_id = s.tenant_id and n.session_key = s.session_key) as turns, '
            's.tier, y.summary' || E'\nfrom memory.sessions as s left join memory.summaries as y '
            'on y.tenant_id = s.tenant_id and y.session_key = s.session_key'
        when 'turns' then 'select t.turn_id, s.session_id, t.agent_id, t.position, t.role, t.speaker, t.content, '
            't.tool_calls, t.created_at' || E'\nfrom memory.turns as t join memory.sessions as s '
            'on s.tenant_id = t.tenant_id and s.session_key = t.session_key'
        else 'select x.result_turn_id, x.session_id, x.agent_id, x.tool, x.status, x.duration_ms, x.arguments, '
            'x.result, x.called_at' || E'\nfrom memory.tool_executions as x'
    end
    || coalesce(E'\nwhere ' || nullif(array_to_string(memory_internal._plain_query_conditions(filters),
                                                       E'\n  and '), ''), '')
    || E'\norder by ' || case (filters ->> 'order') || ' ' || v_target
        when 'importance memories' then 'i.importance desc, i.valid_from desc, i.memory_id desc'
        when 'oldest memories' then 'i.valid_from, i.memory_id'
        when 'oldest sessions' then 's.started_at, s.session_key'
        when 'oldest turns' then 't.created_at, t.turn_id'
        when 'oldest tool_executions' then 'x.called_at, x.result_turn_id'
        when 'slowest tool_executions' then 'x.duration_ms desc nulls last, x.result_turn_id desc'
        when 'newest tool_executions' then 'x.called_at desc, x.result_turn_id desc'
        when 'newest memories' then 'i.valid_from desc, i.memory_id desc'
        else case v_target when 'sessions' then 's.started_at desc, s.session_key desc'
             else 't.created_at desc, t.turn_id desc' end
    end
    || E'\nlimit ' || v_k;
end
$$;

comment on function memory_internal._plain_query_sql(jsonb) is
'Internal: the query a request''s filters make over memories, sessions, turns or tool executions (columns, '
'conditions, order and k rows), every value quoted as a literal.';

-- A request in plain words, read and run: its filters, the SQL, the words not understood and the rows.
create or replace function memory.query(
    request text, agent_id text default null, explain boolean default false, llm boolean default false
) returns jsonb
language plpgsql
as $$
declare
    v_read jsonb;
    v_filters jsonb;
    v_sql text;
    v_rows jsonb;
begin
    if request is null or btrim(request) = '' then
        raise exception 'agent_memory: the request is empty: say what to list, e.g. ''top 10 recent decisions'''
            using errcode = 'invalid_parameter_value';
    end if;
    v_read := case when query.llm then memory_internal._read_plain_query_by_llm(request, current_date)
                   else memory_internal._read_plain_query(request, current_date) end;
    v_filters := v_read - 'understood' - 'not_understood';
    if query.agent_id is not null and not v_filters ? 'agent_id' then
        v_filters := v_filters || jsonb_build_object('agent_id', query.agent_id);
    end if;
    v_sql := memory_internal._plain_query_sql(v_filters);
    if not coalesce(query.explain, false) then
        execute format('select coalesce(jsonb_agg(to_jsonb(r)), %L) from (%s) as r', '[]', v_sql) into v_rows;
    end if;
    return jsonb_strip_nulls(jsonb_build_object(
        'request', request, 'read_by', case when query.llm then 'llm' else 'words' end, 'filters', v_filters,
        'understood', v_read -> 'understood', 'not_understood', v_read -> 'not_understood', 'sql', v_sql,
        'rows', v_rows));
end
$$;

comment on function memory.query(text, text, boolean, boolean) is
'A request in plain words ("top 10 recent decisions", "high-importance unresolved projects from last week", '
'"observations tagged docker and error", "user messages mentioning Redis") read as filters over this tenant''s '
'memories, sessions, turns or tool executions ("failed bash calls last week"), and run: a JSON object with '
'the filters, what each phrase was read as, the words not understood, the SQL and its rows (explain: not '
'run). agent_id: the agent when the request names none; llm: the chat endpoint reads the request (setting '
'query_reader llm). No model otherwise.';
