-- Bootstrap and task context: what an agent should know, within a character budget, when a new
-- conversation starts (bootstrap) or for a task at hand (context_for_task).

-- A character budget given by a caller: null (the setting's default) or at least 1.
create or replace function memory_internal._check_budget(max_chars integer) returns void
language plpgsql
immutable
as $$
begin
    if max_chars < 1 then
        raise exception 'agent_memory: max_chars must be at least 1, got %', max_chars
            using errcode = 'invalid_parameter_value';
    end if;
end
$$;

comment on function memory_internal._check_budget(integer) is 'Internal: rejects a character budget below 1.';

-- Bootstrap, in order until the budget is spent: the memories that hold now (rules, preferences, open
-- tasks and decisions first, the most important and newest first within a kind), the open loops and
-- decisions of the most recent sessions, then those sessions' summaries.
create or replace function memory.bootstrap(
    agent_id text default null, max_chars integer default null, sessions integer default 5, run_id text default null
) returns table (section text, session_id text, at timestamptz, content text, shared_by text)
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_fleet_sessions boolean := (memory.setting('share_sessions'))::boolean;
    v_chars integer;
    v_recent bigint [];
begin
    perform memory_internal._check_budget(bootstrap.max_chars);
    if bootstrap.sessions is null or bootstrap.sessions < 0 then
        raise exception 'agent_memory: sessions must be 0 or more, got %', coalesce(bootstrap.sessions::text, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    v_chars := coalesce(bootstrap.max_chars, (memory.setting('bootstrap_max_chars') #>> '{}')::integer);
    -- The most recent sessions, found first (Citus sends a statement with a limit inside in parts).
    v_recent := array(
        select s.session_key
        from memory.sessions as s
        where s.tenant_id = v_tenant and s.session_id <> 'remembered'
            and (bootstrap.agent_id is null or s.agent_id = bootstrap.agent_id or v_fleet_sessions)
            and (bootstrap.run_id is null or s.run_id = bootstrap.run_id)
        order by s.started_at desc, s.session_key desc
        limit bootstrap.sessions
    );
    return query
    with recent as (
        select s.tenant_id, s.session_key, s.session_id, s.started_at, s.agent_id
        from memory.sessions as s
        where s.tenant_id = v_tenant and s.session_key = any(v_recent)
    ),
    items as (
        select 1 as priority, 'remembered' as section, 'remembered' as session_id, m.valid_from as at, m.content,
               m.agent_id, row_number() over (
                   order by array_position(array['rule', 'preference', 'task', 'decision'], m.kind) nulls last,
                       m.importance desc, m.valid_from desc, m.memory_id desc
               ) as n
        from memory.memories as m
        where m.tenant_id = v_tenant and memory.memory_holds(m.status, m.valid_from, m.valid_to, null)
            and (bootstrap.agent_id is null or m.agent_id = bootstrap.agent_id or m.shared)
            and (bootstrap.run_id is null or m.run_id = bootstrap.run_id)
        union all
        select k.priority, k.section, r.session_id, r.started_at, l.item #>> '{}', r.agent_id,
               row_number() over (partition by k.section order by r.started_at desc, r.session_key desc, l.n)
        from recent as r
        inner join memory.summaries as m on m.tenant_id = v_tenant and r.session_key = m.session_key
        cross join lateral (values (2, 'open_loop', m.open_loops), (3, 'decision', m.decisions))
            as k (priority, section, items)
        cross join lateral jsonb_array_elements(k.items) with ordinality as l (item, n)
        union all
        select 4, 'recent_session', r.session_id, r.started_at, m.summary, r.agent_id,
               row_number() over (order by r.started_at desc, r.session_key desc)
        from recent as r
        inner join memory.summaries as m on m.tenant_id = v_tenant and r.session_key = m.session_key
    ),
    packed as (
        select i.*, sum(length(i.content)) over (order by i.priority, i.n rows unbounded preceding) as used
        from items as i
    )
    select p.section, p.session_id, p.at, p.content, memory_internal._shared_by(bootstrap.agent_id, p.agent_id)
    from packed as p
    where p.used <= v_chars
    order by p.priority, p.n;
end
$$;

comment on function memory.bootstrap(text, integer, integer, text) is
'Context for a new conversation of an agent (or every agent when null), at most max_chars characters '
'(default: setting bootstrap_max_chars): the memories that hold now (rules, preferences, open tasks and '
'decisions first; superseded, resolved and retracted ones left out), then the open loops, decisions and '
'summaries of the most recent sessions. Stops at the first item that would overflow the budget. For an agent, '
'what the other agents share is included: their shared memories, and their sessions when share_sessions; '
'shared_by names the agent that shared an item (null: the agent''s own). run_id: only the memories and '
'sessions of that run.';

-- Context for a task: the turns most relevant to it (by memory.recall), best first, within a budget.
create or replace function memory.context_for_task(
    task text, max_chars integer default null, agent_id text default null, k integer default 20,
    run_id text default null
) returns table (
    rank bigint, session_id text, turn_id bigint, at timestamptz, speaker text, content text, score double precision,
    shared_by text
)
language plpgsql
volatile
as $$
#variable_conflict use_column
begin
    perform memory_internal._check_budget(context_for_task.max_chars);
    return query
    with hits as (
        select row_number() over (order by r.score desc, r.turn_id) as rank, r.session_id, r.turn_id,
               r.created_at, coalesce(r.speaker, r.role) as speaker, r.content, r.score, r.shared_by
        from memory.recall(task, k => context_for_task.k, agent_id => context_for_task.agent_id,
                           run_id => context_for_task.run_id) as r
    ),
    packed as (
        select h.*, sum(length(h.content)) over (order by h.rank rows unbounded preceding) as used from hits as h
    )
    select p.rank, p.session_id, p.turn_id, p.created_at, p.speaker, p.content, p.score, p.shared_by
    from packed as p
    where p.used <= coalesce(context_for_task.max_chars, (memory.setting('context_max_chars') #>> '{}')::integer)
    order by p.rank;
end
$$;

comment on function memory.context_for_task(text, integer, text, integer, text) is
'The turns most relevant to a task (memory.recall of the task, up to k), best first, as many as fit in '
'max_chars characters (default: setting context_max_chars); stops at the first that would overflow. '
'shared_by: the agent that shared a turn or memory with agent_id (as recall''s); run_id: that run''s alone.';
