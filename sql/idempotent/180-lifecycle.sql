-- Forgetting and exporting sessions. forget() removes a session, or all of an agent's, and everything
-- derived from them (turns, chunks, vectors, summaries, jobs, feedback, the memories extracted from them
-- alone; full-text statistics, speakers and entities follow) in one transaction, and leaves a tombstone:
-- what was forgotten, when, by whom and how much, never the content. A forgotten session is not stored
-- again by a later commit or import unless the caller says so (commit's allow_forgotten).
-- export() gives sessions back in the shape memory.commit takes, so an export re-imports idempotently.

-- One session and everything derived from it; the caller holds the session's row lock.
create or replace function memory_internal._forget_session(tenant text, session bigint)
returns table (turns_removed integer, chunks_removed integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := tenant;
    v_session bigint := session;
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
    return query select v_turns, v_chunks;
end
$$;

comment on function memory_internal._forget_session(text, bigint) is
'Internal: removes one session and everything derived from it (see memory.forget).';

create or replace function memory.forget(session_id text default null, agent_id text default null)
returns table (
    sessions_removed integer, turns_removed integer, chunks_removed integer, memories_removed integer,
    tombstone_id bigint
)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_sessions bigint [];
    v_agents text [];
    v_ids text [];
    v_session bigint;
    v_removed record;
    v_turns integer := 0;
    v_chunks integer := 0;
    v_memories bigint := (select count(*) from memory.memories as m where m.tenant_id = v_tenant);
    v_tombstone bigint;
begin
    if forget.session_id is null and forget.agent_id is null then
        raise exception 'agent_memory: forget needs a session_id, an agent_id, or both'
            using errcode = 'invalid_parameter_value';
    end if;
    if forget.session_id is not null then
        v_sessions := array[memory_internal._session_key(forget.session_id, forget.agent_id)];
    else
        v_sessions := array(
            select s.session_key from memory.sessions as s
            where s.tenant_id = v_tenant and s.agent_id = forget.agent_id
            order by s.session_key
        );
        if cardinality(v_sessions) = 0 then
            raise exception 'agent_memory: agent % has no sessions in this tenant', forget.agent_id
                using errcode = 'no_data_found';
        end if;
    end if;
    -- The lock order of commit and workers: the sessions first, in key order.
    perform from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = any(v_sessions)
    order by s.session_key for update;
    select array_agg(s.agent_id order by s.session_key), array_agg(s.session_id order by s.session_key)
    into v_agents, v_ids
    from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = any(v_sessions);
    foreach v_session in array v_sessions loop
        select * into v_removed from memory_internal._forget_session(v_tenant, v_session);
        v_turns := v_turns + v_removed.turns_removed;
        v_chunks := v_chunks + v_removed.chunks_removed;
    end loop;
    if forget.session_id is null then
        -- Of a whole agent, what is not in a session goes too: its memories, entities (with their states,
        -- mentions and edges) and full-text statistics.
        delete from memory.memories as m where m.tenant_id = v_tenant and m.agent_id = forget.agent_id;
        delete from memory.entities as e where e.tenant_id = v_tenant and e.scope = forget.agent_id;
        delete from memory.lexicon as x where x.tenant_id = v_tenant and x.agent_id = forget.agent_id;
        delete from memory.corpus as k where k.tenant_id = v_tenant and k.agent_id = forget.agent_id;
    end if;
    v_memories := v_memories - (select count(*) from memory.memories as m where m.tenant_id = v_tenant);

    insert into memory.tombstones (tenant_id, selector, removed)
    values (
        v_tenant,
        jsonb_strip_nulls(jsonb_build_object('agent_id', coalesce(forget.agent_id, v_agents[1]),
                                             'session_id', forget.session_id)),
        jsonb_build_object('sessions', cardinality(v_sessions), 'turns', v_turns, 'chunks', v_chunks,
                           'memories', v_memories)
    )
    returning tombstone_id into v_tombstone;
    insert into memory.forgotten_sessions as f (tenant_id, agent_id, session_sha256, tombstone_id)
    select v_tenant, r.agent_id, sha256(convert_to(r.session_id, 'UTF8')), v_tombstone
    from unnest(v_agents, v_ids) as r (agent_id, session_id)
    on conflict on constraint forgotten_sessions_pkey do update set tombstone_id = excluded.tombstone_id;
    return query select cardinality(v_sessions), v_turns, v_chunks, v_memories::integer, v_tombstone;
end
$$;

comment on function memory.forget(text, text) is
'Removes a session (of agent_id, or of whichever agent has it), or with only agent_id every session, '
'memory and entity of that agent, with everything derived from them (turns, chunks, vectors, summaries, '
'jobs, feedback, full-text statistics, speakers and entities no other turn has, the memories extracted from '
'their turns alone; other memories lose those turns from their evidence), in one transaction. Leaves a '
'tombstone (memory.tombstones: what, when, by whom, counts; not the content), and a later commit of a '
'forgotten session is refused unless allow_forgotten. Returns what was removed and the tombstone.';

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
