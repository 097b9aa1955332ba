-- Forgetting and exporting sessions. forget() removes a session and everything derived from it (turns,
-- chunks, vectors, summary, jobs, feedback, the memories extracted from it alone; full-text statistics and
-- speakers follow) in one transaction.
-- export() gives sessions back in the shape memory.commit takes, so an export re-imports idempotently.
create or replace function memory.forget(session_id text, agent_id text default null)
returns table (session_key bigint, turns_removed integer, chunks_removed integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_session bigint := memory_internal._session_key(forget.session_id, forget.agent_id);
    v_turns integer;
    v_chunks integer;
    v_names text [];
    v_agent text := (select s.agent_id from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = v_session);
    v_entities bigint [] := (select coalesce(array_agg(distinct m.entity_key), '{}') from memory.entity_mentions as m
                             where m.tenant_id = v_tenant and m.session_key = v_session);
    v_said bigint [] := array(select t.turn_key from memory.turns as t where t.tenant_id = v_tenant and t.session_key = v_session);
    v_words bigint [];
begin
    select count(*), coalesce(array_agg(distinct t.name) filter (where t.name is not null), '{}')
    into v_turns, v_names
    from memory.turns as t where t.tenant_id = v_tenant and t.session_key = v_session;
    select count(*) into v_chunks from memory.chunks as c where c.tenant_id = v_tenant and c.session_key = v_session;
    -- Memories extracted from this session's turns alone go with it, and so do the turns that carry their
    -- words (unless another memory has the same words); other memories lose these turns from their evidence.
    with derived as (
        delete from memory.memories as m
        where m.tenant_id = v_tenant and m.origin <> 'remember' and m.evidence_turns <@ v_said
        returning m.turn_key
    )

    select coalesce(array_agg(d.turn_key), '{}') into v_words from derived as d;
    delete from memory.turns as t
    where t.tenant_id = v_tenant and t.turn_key = any(v_words)
        and not exists (select from memory.memories as o where o.tenant_id = v_tenant and o.turn_key = t.turn_key);
    update memory.memories as m
    set evidence_turns = array(select e.turn_key from unnest(m.evidence_turns) as e (turn_key) where e.turn_key <> all(v_said))
    where m.tenant_id = v_tenant and m.evidence_turns && v_said;
    -- Turns, chunks, vectors, summary, jobs and feedback go with the session (foreign keys cascade).
    delete from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = v_session;
    delete from memory.speakers as p
    where p.tenant_id = v_tenant and p.agent_id = v_agent and p.name = any (v_names)
        and not exists (
            select from memory.turns as t
            where t.tenant_id = v_tenant and t.agent_id = p.agent_id and t.name = p.name
        );
    -- Entities only this session mentioned, and that no recorded state keeps, go with it.
    delete from memory.entities as e
    where e.tenant_id = v_tenant and e.entity_key = any(v_entities)
        and not exists (select from memory.entity_mentions as m where m.tenant_id = v_tenant and m.entity_key = e.entity_key)
        and not exists (select from memory.entity_states as s where s.tenant_id = v_tenant and s.entity_key = e.entity_key);
    return query select v_session, v_turns, v_chunks;
end
$$;

comment on function memory.forget(text, text) is
'Removes a session (of agent_id, or of whichever agent has it) and everything derived from it (turns, chunks, '
'vectors, summary, jobs, feedback, full-text statistics, speakers and entities no other turn has, the '
'memories extracted from its turns alone; other memories lose its turns from their evidence) in one '
'transaction. '
'Returns what was removed.';

create or replace function memory.export(agent_id text default null, session_id text default null)
returns table (agent_id text, session_id text, session jsonb)
language sql
stable
as $$
    select s.agent_id, s.session_id,
           jsonb_strip_nulls(jsonb_build_object(
               'agent_id', s.agent_id, 'session_id', s.session_id, 'source', s.source, 'model', s.model,
               'started_at', s.started_at, 'tokens_in', s.tokens_in, 'tokens_out', s.tokens_out,
               'metadata', s.metadata,
               'summary', (select m.summary from memory.summaries as m
                           where m.tenant_id = s.tenant_id and m.session_key = s.session_key and m.method = 'caller'),
               'messages', (
                   select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                       'id', t.message_id, 'role', t.role, 'name', t.name, 'content', t.content,
                       'tool_calls', t.tool_calls, 'tool_call_id', t.tool_call_id, 'tokens', t.tokens,
                       'metadata', nullif(t.metadata, '{}'), 'created_at', t.created_at
                   )) order by t.position), '[]')
                   from memory.turns as t
                   where t.tenant_id = s.tenant_id and t.session_key = s.session_key
               )
           ))
    from memory.sessions as s
    where s.tenant_id = memory.current_tenant()
        and (export.agent_id is null or s.agent_id = export.agent_id)
        and (export.session_id is null or s.session_id = export.session_id)
    order by s.agent_id, s.started_at, s.session_key
$$;

comment on function memory.export(text, text) is
'Sessions of this tenant (all, one agent''s, or one) as JSON in the shape memory.commit takes: '
'{agent_id, session_id, source, model, started_at, tokens_in, tokens_out, metadata, summary (the caller''s), '
'messages}. Committing an export again adds nothing.';
