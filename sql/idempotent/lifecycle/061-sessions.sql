-- The sessions of a tenant, most recently updated first: what a person browsing memory picks from (the HTTP
-- server's inspector, `agent-memory list-sessions`). A session's turns are memory.export(session_id => ...).
create or replace function memory.list_sessions(
    agent_id text default null, search text default null, k integer default 50, before timestamptz default null,
    run_id text default null
) returns setof memory.session_item
language plpgsql
stable
as $$
declare
    v_tenant text := memory.current_tenant();
begin
    if list_sessions.k is null or list_sessions.k < 1 or list_sessions.k > 1000 then
        raise exception 'agent_memory: k must be 1 to 1000, got %', coalesce(list_sessions.k::text, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    return query
    select s.session_id, s.agent_id, s.source, s.started_at, s.updated_at,
        (select count(*) from memory.turns as t where t.tenant_id = v_tenant and t.session_key = s.session_key),
        s.tier, y.summary, s.run_id
    from memory.sessions as s
    left join memory.summaries as y on y.tenant_id = s.tenant_id and y.session_key = s.session_key
    where s.tenant_id = v_tenant
        and (list_sessions.agent_id is null or s.agent_id = list_sessions.agent_id)
        and (list_sessions.before is null or s.updated_at < list_sessions.before)
        and (list_sessions.run_id is null or s.run_id = list_sessions.run_id)
        and (list_sessions.search is null or strpos(lower(s.session_id), lower(list_sessions.search)) > 0
             or strpos(lower(coalesce(y.summary, '')), lower(list_sessions.search)) > 0)
    order by s.updated_at desc, s.session_key desc
    limit list_sessions.k;
end
$$;

comment on function memory.list_sessions(text, text, integer, timestamptz, text) is
'This tenant''s sessions, most recently updated first, at most k (1 to 1000, default 50): id, agent, source, '
'when started and updated, turns, tier and summary. Filters: agent_id, search (words in the id or summary, any '
'case), before (updated before it: the next page), run_id (the sessions of that run).';
