-- Forgetting sessions. forget() removes a session, forget_agent() all of an agent's, and
-- forget_range() what was said in a time range, with everything
-- derived from them (turns, chunks, vectors, summaries, jobs, feedback, the memories extracted from them
-- alone; full-text statistics, speakers and entities follow) in one transaction, and leaves a tombstone:
-- what was forgotten, when, by whom and how much, never the content. A forgotten session is not stored
-- again by a later commit or import unless the caller says so (commit's allow_forgotten).

-- The memories enrichment's extractor proposed from these turns alone (every evidence turn among them):
-- what goes when the turns go.
create or replace function memory_internal._extracted_from(tenant text, turns bigint[]) returns setof bigint
language sql
stable
as $$
    select m.memory_id from memory.memories as m
    where m.tenant_id = tenant and m.origin <> 'remember'
        and m.memory_id in (
            select e.memory_id from memory.memory_evidence as e where e.tenant_id = tenant and e.turn_id = any(turns)
        )
        and not exists (
            select from memory.memory_evidence as e
            where e.tenant_id = tenant and e.memory_id = m.memory_id and e.turn_id <> all(turns)
        )
$$;

comment on function memory_internal._extracted_from(text, bigint[]) is
'Internal: the memories extracted from the given turns alone (they are removed with the turns).';

-- The memories that memories now gone had superseded, reopened: a forgotten claim no longer ends what it
-- changed. Each holds again until the next version under its key, or from now on (active).
create or replace function memory_internal._reopen_memories(tenant text, memories bigint[]) returns void
language sql
as $$
    with reopened as (
        select p.memory_id, (
            select min(v.valid_from) from memory.memories as v
            where v.tenant_id = tenant and p.key is not null and v.agent_id = p.agent_id and v.key = p.key
                and v.status <> 'retracted' and v.valid_from > p.valid_from
        ) as next
        from memory.memories as p
        where p.tenant_id = tenant and p.memory_id = any(memories) and p.status = 'superseded'
            and not exists (
                select from memory.memories as s
                where s.tenant_id = tenant and s.supersedes = p.memory_id and s.status <> 'retracted'
            )
    )

    update memory.memories as m
    set valid_to = r.next, status = case when r.next is null then 'active' else 'superseded' end
    from reopened as r
    where m.tenant_id = tenant and m.memory_id = r.memory_id
$$;

comment on function memory_internal._reopen_memories(text, bigint[]) is
'Internal: reopens the given superseded memories that nothing (not retracted) supersedes any more: each holds '
'until the next version under its key, or is active again.';

-- The histories of entity attributes that lost a value, chained again: each active value holds until the
-- next one begins (the last has no end), so the value a forgotten one had ended holds again.
create or replace function memory_internal._rechain_entity_states(tenant text, entities bigint[], attributes text[])
returns void
language sql
as $$
    with chained as (
        select s.state_id,
               lead(s.valid_from) over (partition by s.entity_id, s.attribute order by s.valid_from) as next
        from memory.entity_states as s
        inner join unnest(entities, attributes) as k (entity_id, attribute)
            on s.entity_id = k.entity_id and s.attribute = k.attribute
        where s.tenant_id = tenant and s.status = 'active'
    )

    update memory.entity_states as s set valid_to = c.next
    from chained as c
    where s.tenant_id = tenant and s.state_id = c.state_id and s.valid_to is distinct from c.next
$$;

comment on function memory_internal._rechain_entity_states(text, bigint[], text[]) is
'Internal: chains the active values of the given entity attributes again (each ends where the next begins).';

-- Turns and everything derived from them; the caller holds their sessions' row locks. Memories extracted
-- from these turns alone go with them (what they superseded holds again, and so do the entity state values
-- the values read from them had ended), and so do the turns that carry their words (unless another memory
-- has the same words); memories whose words are among them go too. Chunks, vectors, feedback, mentions
-- and other memories' evidence in these turns follow by foreign key, full-text statistics
-- by the chunk triggers; speakers and entities nothing else has are removed. A session that keeps other
-- turns loses, in the same transaction, what was derived from the whole of it (summary, session vector)
-- and the context its later turns were indexed with (the index_context_turns turns before one may hold a
-- removed one's words: every later turn is indexed on its own words until then), and is queued to be
-- enriched again from what is left.
create or replace function memory_internal._forget_turns(tenant text, turns bigint[])
returns table (turns_removed integer, chunks_removed integer, memories_removed integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_said bigint [] := array(select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.turn_id = any(turns));
    v_turns integer := cardinality(v_said);
    v_chunks integer := (select count(*) from memory.chunks as c where c.tenant_id = tenant and c.turn_id = any(v_said));
    v_memories integer := (select count(*) from memory.memories as m where m.tenant_id = tenant and m.turn_id = any(v_said));
    v_words bigint [];
    v_gone bigint [];
    v_speakers text [];
    v_entities bigint [];
    v_sessions bigint [];
    v_firsts integer [];
    v_config regconfig := (memory.setting('text_search_config') #>> '{}')::regconfig;
    v_extracted bigint [] := array(select memory_internal._extracted_from(tenant, v_said));
    v_superseded bigint [];
    v_states record;
begin
    -- What the memories and entity state values that go had ended, to reopen once they are gone.
    v_superseded := array(
        select m.supersedes from memory.memories as m
        where m.tenant_id = tenant and m.supersedes is not null
            and (m.memory_id = any(v_extracted) or m.turn_id = any(v_said))
    );
    select coalesce(array_agg(s.entity_id), '{}') as entities, coalesce(array_agg(s.attribute), '{}') as attributes
    into v_states
    from memory.entity_states as s
    where s.tenant_id = tenant and s.evidence_turn_id = any(v_said) and s.status = 'active';
    with derived as (
        delete from memory.memories as m
        where m.tenant_id = tenant and m.memory_id = any(v_extracted)
        returning m.turn_id
    )

    select coalesce(array_agg(d.turn_id), '{}') into v_words from derived as d;
    v_memories := v_memories + cardinality(v_words);
    -- The turns that go: those said, and the words of the memories that went that no other memory carries.
    v_gone := v_said || array(
        select t.turn_id from memory.turns as t
        where t.tenant_id = tenant and t.turn_id = any(v_words) and not t.turn_id = any(v_said)
            and not exists (select from memory.memories as o where o.tenant_id = tenant and o.turn_id = t.turn_id)
    );
    v_speakers := array(
        select distinct t.agent_id || chr(31) || t.speaker from memory.turns as t
        where t.tenant_id = tenant and t.turn_id = any(v_gone) and t.speaker is not null
    );
    v_entities := array(
        select distinct m.entity_id from memory.entity_mentions as m where m.tenant_id = tenant and m.turn_id = any(v_gone)
    );
    -- Per session, the position of its first turn that goes: its later turns may hold it as context.
    select coalesce(array_agg(g.session_key), '{}'), coalesce(array_agg(g.first), '{}') into v_sessions, v_firsts
    from (
        select t.session_key, min(t.position) as first from memory.turns as t
        where t.tenant_id = tenant and t.turn_id = any(v_gone)
        group by t.session_key
    ) as g;
    delete from memory.turns as t where t.tenant_id = tenant and t.turn_id = any(v_gone);
    perform memory_internal._reopen_memories(tenant, v_superseded);
    perform memory_internal._rechain_entity_states(tenant, v_states.entities, v_states.attributes);

    -- What the sessions that keep turns derived from the removed ones.
    update memory.chunks as c
    set tsv = to_tsvector(v_config, c.text), context_turn_id = null, context_length = 0
    from unnest(v_sessions, v_firsts) as g (session_key, first)
    inner join memory.turns as t on t.tenant_id = tenant and t.session_key = g.session_key and t.position > g.first
    where c.tenant_id = tenant and c.turn_id = t.turn_id and c.context_length > 0;
    delete from memory.summaries as m
    where m.tenant_id = tenant and m.session_key = any(v_sessions) and m.method <> 'caller';
    delete from memory.session_embeddings as e where e.tenant_id = tenant and e.session_key = any(v_sessions);
    insert into memory.jobs (tenant_id, kind, session_key)
    select tenant, 'enrich', s.session_key from memory.sessions as s
    where s.tenant_id = tenant and s.session_key = any(v_sessions)
        and exists (select from memory.turns as t where t.tenant_id = tenant and t.session_key = s.session_key)
    on conflict (tenant_id, kind, session_key) where status = 'queued' do nothing;

    delete from memory.speakers as p
    where p.tenant_id = tenant and p.agent_id || chr(31) || p.speaker = any(v_speakers)
        and not exists (
            select from memory.turns as t
            where t.tenant_id = tenant and t.agent_id = p.agent_id and t.speaker = p.speaker
        );
    -- Entities only these turns mentioned, and that no recorded state keeps, go with them.
    delete from memory.entities as e
    where e.tenant_id = tenant and e.entity_id = any(v_entities)
        and not exists (select from memory.entity_mentions as m where m.tenant_id = tenant and m.entity_id = e.entity_id)
        and not exists (select from memory.entity_states as s where s.tenant_id = tenant and s.entity_id = e.entity_id);
    return query select v_turns, v_chunks, v_memories;
end
$$;

comment on function memory_internal._forget_turns(text, bigint[]) is
'Internal: removes turns and everything derived from them (see memory.forget_range).';

-- One session and everything derived from it; the caller holds the session's row lock.
create or replace function memory_internal._forget_session(tenant text, session bigint)
returns table (turns_removed integer, chunks_removed integer, memories_removed integer)
language plpgsql
as $$
declare
    -- (Read first: Citus runs no function that writes beside a read of a table in one statement.)
    v_turns bigint [] := array(
        select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.session_key = session
    );
begin
    return query select * from memory_internal._forget_turns(tenant, v_turns);
    -- The summary, session vector and jobs go with the session (foreign keys cascade).
    delete from memory.sessions as s where s.tenant_id = tenant and s.session_key = session;
end
$$;

comment on function memory_internal._forget_session(text, bigint) is
'Internal: removes one session and everything derived from it (see memory.forget).';

comment on type memory.forgotten is
'What memory.forget, forget_agent or forget_range removed (sessions, turns, chunks, memories) and its tombstone.';

-- The tombstone of a forget, and the sessions it removed (by a hash of their id). Only the API writes
-- them (as memory_owner), so none can be forged or taken back; the tenant is the caller's.
create or replace function memory_internal._bury(selector jsonb, removed jsonb, agents text[], session_ids text[])
returns bigint
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_tombstone bigint;
begin
    insert into memory.tombstones as t (tenant_id, selector, removed, forgotten_by)
    values (v_tenant, selector, removed, memory_internal._actor())
    returning t.tombstone_id into v_tombstone;
    insert into memory.forgotten_sessions as f (tenant_id, agent_id, session_sha256, tombstone_id)
    select v_tenant, r.agent_id, sha256(convert_to(r.session_id, 'UTF8')), v_tombstone
    from unnest(agents, session_ids) as r (agent_id, session_id)
    on conflict on constraint forgotten_sessions_pkey do update set tombstone_id = excluded.tombstone_id;
    return v_tombstone;
end
$$;

comment on function memory_internal._bury(jsonb, jsonb, text[], text[]) is
'Internal: writes the tombstone of a forget and the sessions it removed (for memory.forget).';

-- Whether a session of this tenant was forgotten: its tombstone, or none. With allow it is forgotten no
-- more (memory.commit storing it again).
create or replace function memory_internal._forgotten(agent_id text, session_id text, allow boolean)
returns table (tombstone_id bigint, forgotten_at timestamptz)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_hash bytea := sha256(convert_to(session_id, 'UTF8'));
begin
    return query
    select f.tombstone_id, t.forgotten_at
    from memory.forgotten_sessions as f
    inner join memory.tombstones as t on f.tenant_id = t.tenant_id and f.tombstone_id = t.tombstone_id
    where f.tenant_id = v_tenant and f.agent_id = _forgotten.agent_id and f.session_sha256 = v_hash;
    if coalesce(allow, false) then
        delete from memory.forgotten_sessions as f
        where f.tenant_id = v_tenant and f.agent_id = _forgotten.agent_id and f.session_sha256 = v_hash;
    end if;
end
$$;

comment on function memory_internal._forgotten(text, text, boolean) is
'Internal: the tombstone of a forgotten session, if any; with allow, the session is no longer forgotten.';

-- Locks sessions for a forget, in key order with each agent's session of remembered words last (a worker
-- enriching one of an agent's sessions writes that one after its own), and returns those that still exist.
create or replace function memory_internal._lock_sessions(tenant text, sessions bigint[]) returns bigint[]
language plpgsql
as $$
declare
    v_session bigint;
    v_locked bigint [] := '{}';
begin
    for v_session in
        select s.session_key from memory.sessions as s
        where s.tenant_id = tenant and s.session_key = any(sessions)
        order by s.session_id = 'remembered', s.session_key
    loop
        perform from memory.sessions as s where s.tenant_id = tenant and s.session_key = v_session for update;
        if found then
            v_locked := v_locked || v_session;
        end if;
    end loop;
    return v_locked;
end
$$;

comment on function memory_internal._lock_sessions(text, bigint[]) is
'Internal: locks sessions in the order forgets take them (remembered words last); those that still exist.';

-- Removes the given sessions and the given loose turns of other sessions, with everything derived from
-- them, under one tombstone with the selector and the counts, plus the counts in also (what the caller
-- removed besides). Sessions gone meanwhile (a concurrent forget) are not counted; when nothing is left to
-- remove, nothing is written and null is returned.
create or replace function memory_internal._forget_sessions(
    tenant text, sessions bigint[], selector jsonb, turns bigint[] default '{}', also jsonb default '{}'
)
returns memory.forgotten
language plpgsql
as $$
declare
    v_locked bigint [] := memory_internal._lock_sessions(tenant, sessions);
    v_session bigint;
    v_agents text [];
    v_ids text [];
    v_removed record;
    v_result memory.forgotten;
begin
    v_result := row(0, 0, 0, 0, null)::memory.forgotten;
    select array_agg(s.agent_id order by s.session_key), array_agg(s.session_id order by s.session_key)
    into v_agents, v_ids
    from memory.sessions as s where s.tenant_id = tenant and s.session_key = any(v_locked);
    foreach v_session in array v_locked loop
        select * into v_removed from memory_internal._forget_session(tenant, v_session);
        v_result.turns_removed := v_result.turns_removed + v_removed.turns_removed;
        v_result.chunks_removed := v_result.chunks_removed + v_removed.chunks_removed;
        v_result.memories_removed := v_result.memories_removed + v_removed.memories_removed;
    end loop;
    if cardinality(turns) > 0 then
        select * into v_removed from memory_internal._forget_turns(tenant, turns);
        v_result.turns_removed := v_result.turns_removed + v_removed.turns_removed;
        v_result.chunks_removed := v_result.chunks_removed + v_removed.chunks_removed;
        v_result.memories_removed := v_result.memories_removed + v_removed.memories_removed;
    end if;
    if v_result.turns_removed = 0 and cardinality(v_locked) = 0 and also = '{}' then
        return null;
    end if;
    v_result.sessions_removed := cardinality(v_locked);
    v_result.tombstone_id := memory_internal._bury(
        selector,
        jsonb_build_object('sessions', v_result.sessions_removed, 'turns', v_result.turns_removed,
                           'chunks', v_result.chunks_removed, 'memories', v_result.memories_removed) || also,
        coalesce(v_agents, '{}'), coalesce(v_ids, '{}')
    );
    return v_result;
end
$$;

comment on function memory_internal._forget_sessions(text, bigint[], jsonb, bigint[], jsonb) is
'Internal: removes sessions and loose turns and what derives from them under one tombstone (every forget).';

-- Of locked sessions, removes the turns given: a session all of whose turns are given as a session (it
-- stays forgotten), of the others those turns alone.
create or replace function memory_internal._forget_said(
    tenant text, sessions bigint[], turns bigint[], selector jsonb, also jsonb default '{}'
) returns memory.forgotten
language plpgsql
as $$
declare
    v_whole bigint [] := array(
        select s.session_key from memory.sessions as s
        where s.tenant_id = tenant and s.session_key = any(sessions)
            and not exists (
                select from memory.turns as t
                where t.tenant_id = tenant and t.session_key = s.session_key and not t.turn_id = any(turns)
            )
        order by s.session_id = 'remembered', s.session_key
    );
begin
    return memory_internal._forget_sessions(
        tenant, v_whole, selector,
        array(
            select t.turn_id from memory.turns as t
            where t.tenant_id = tenant and t.turn_id = any(turns) and not t.session_key = any(v_whole)
        ),
        also
    );
end
$$;

comment on function memory_internal._forget_said(text, bigint[], bigint[], jsonb, jsonb) is
'Internal: removes turns of locked sessions, whole sessions as sessions, under one tombstone.';

create or replace function memory.forget(session_id text, agent_id text default null)
returns setof memory.forgotten
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_session bigint := memory_internal._session_key(forget.session_id, forget.agent_id);
    v_agent text := (select s.agent_id from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = v_session);
    v_result memory.forgotten;
begin
    v_result := memory_internal._forget_sessions(
        v_tenant, array[v_session], jsonb_build_object('agent_id', v_agent, 'session_id', forget.session_id)
    );
    if v_result is null then
        raise exception 'agent_memory: session % of agent % was forgotten meanwhile', forget.session_id, v_agent
            using errcode = 'no_data_found';
    end if;
    return next v_result;
end
$$;

comment on function memory.forget(text, text) is
'Removes a session (of agent_id, or of whichever agent has it) and everything derived from it (turns, '
'chunks, vectors, summary, jobs, feedback, full-text statistics, speakers and entities no other turn has, '
'the memories extracted from its turns alone; other memories lose its turns from their evidence), in one '
'transaction. Leaves a tombstone (memory.tombstones: what, when, by whom, counts; not the content), and a '
'later commit of the session is refused unless allow_forgotten. Returns what was removed and the tombstone.';

create or replace function memory.forget_agent(agent_id text)
returns setof memory.forgotten
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_result memory.forgotten;
    v_entities integer;
begin
    if forget_agent.agent_id is null then
        raise exception 'agent_memory: forget_agent needs an agent_id' using errcode = 'invalid_parameter_value';
    end if;
    -- Sessions in key order, the agent's session of remembered words last: a worker enriching one of its
    -- sessions writes that one after its own.
    v_result := memory_internal._forget_sessions(
        v_tenant,
        array(
            select s.session_key from memory.sessions as s
            where s.tenant_id = v_tenant and s.agent_id = forget_agent.agent_id
            order by s.session_id = 'remembered', s.session_key
        ),
        jsonb_build_object('agent_id', forget_agent.agent_id)
    );
    -- What outlives the sessions: entities no remaining turn mentions (with their states and edges), and
    -- full-text statistics left at zero.
    delete from memory.entities as e
    where e.tenant_id = v_tenant and e.agent_id = forget_agent.agent_id
        and not exists (select from memory.entity_mentions as m where m.tenant_id = v_tenant and m.entity_id = e.entity_id);
    get diagnostics v_entities = row_count;
    delete from memory.lexicon as x where x.tenant_id = v_tenant and x.agent_id = forget_agent.agent_id and x.chunks <= 0;
    delete from memory.corpus as k where k.tenant_id = v_tenant and k.agent_id = forget_agent.agent_id and k.chunks <= 0;
    if v_result is null and v_entities = 0 then
        raise exception 'agent_memory: agent % has nothing to forget in this tenant', forget_agent.agent_id
            using errcode = 'no_data_found';
    elsif v_result is null then
        v_result := row(0, 0, 0, 0, null)::memory.forgotten;
        v_result.tombstone_id := memory_internal._bury(
            jsonb_build_object('agent_id', forget_agent.agent_id),
            jsonb_build_object('sessions', 0, 'turns', 0, 'chunks', 0, 'memories', 0, 'entities', v_entities),
            '{}', '{}'
        );
    end if;
    return next v_result;
end
$$;

comment on function memory.forget_agent(text) is
'Removes all of an agent''s memory in this tenant: every session as memory.forget removes one, its '
'remembered and extracted memories, its entities (with their states and edges) and statistics, in one '
'transaction, under one tombstone; a later commit of any of its sessions is refused unless '
'allow_forgotten. Returns what was removed and the tombstone.';

create or replace function memory.forget_range(since timestamptz, until timestamptz, agent_id text default null)
returns setof memory.forgotten
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_locked bigint [];
    v_result memory.forgotten;
begin
    if forget_range.since is null or forget_range.until is null or forget_range.since >= forget_range.until then
        raise exception 'agent_memory: forget_range needs since before until, got % and %', forget_range.since,
            forget_range.until using errcode = 'invalid_parameter_value';
    end if;
    -- The sessions with a turn in the range, locked; what is in the range is read again under the locks.
    v_locked := memory_internal._lock_sessions(v_tenant, array(
        select t.session_key from memory.turns as t
        where t.tenant_id = v_tenant and (forget_range.agent_id is null or t.agent_id = forget_range.agent_id)
            and t.created_at >= forget_range.since and t.created_at < forget_range.until
    ));
    v_result := memory_internal._forget_said(
        v_tenant, v_locked,
        array(
            select t.turn_id from memory.turns as t
            where t.tenant_id = v_tenant and t.session_key = any(v_locked)
                and t.created_at >= forget_range.since and t.created_at < forget_range.until
        ),
        jsonb_strip_nulls(jsonb_build_object('since', forget_range.since, 'until', forget_range.until,
                                             'agent_id', forget_range.agent_id))
    );
    if v_result is null then
        raise exception 'agent_memory: nothing in this tenant was said between % and %', forget_range.since,
            forget_range.until using errcode = 'no_data_found';
    end if;
    return next v_result;
end
$$;

comment on function memory.forget_range(timestamptz, timestamptz, text) is
'Removes everything said in [since, until) in this tenant (or by one agent), in one transaction: sessions '
'said wholly within it as memory.forget removes one (a later commit of one is refused unless '
'allow_forgotten), and of the others the turns in the range with what derives from them; those sessions '
'are queued to be summarized and indexed again from what is left. Leaves one tombstone. Returns what was '
'removed (sessions_removed: the whole sessions) and the tombstone.';

-- Everything about an entity: the turns that mention it (a session that is nothing else as a session),
-- the memories about it (their subjects name it), and the entity with its aliases, states and edges.
create or replace function memory.forget_entity(entity text, agent_id text default null)
returns setof memory.forgotten
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_keys bigint [] := memory_internal._named_entities(forget_entity.entity, forget_entity.agent_id);
    v_names text [] := array(
        select n.name from memory.entities as e
        cross join lateral unnest(e.normalized || e.aliases) as n (name)
        where e.tenant_id = v_tenant and e.entity_id = any(v_keys)
    );
    v_locked bigint [];
    v_turns bigint [];
    v_entities integer;
begin
    -- The turns about it (mentions of it, the words of memories about it), read again under the locks of
    -- their sessions. For one agent, what that agent said and kept: an entity its tenant shares (entity_scope)
    -- stays for the others.
    v_locked := memory_internal._lock_sessions(v_tenant, array(
        select t.session_key from memory_internal._turns_about(v_tenant, v_keys, v_names, null) as a
        inner join memory.turns as t on t.tenant_id = v_tenant and t.turn_id = a.turn_id
        where forget_entity.agent_id is null or t.agent_id = forget_entity.agent_id
    ));
    v_turns := array(select a.turn_id from memory_internal._turns_about(v_tenant, v_keys, v_names, v_locked) as a);
    delete from memory.entities as e
    where e.tenant_id = v_tenant and e.entity_id = any(v_keys)
        and (forget_entity.agent_id is null or e.agent_id = forget_entity.agent_id);
    get diagnostics v_entities = row_count;
    return next memory_internal._forget_said(
        v_tenant, v_locked, v_turns,
        jsonb_strip_nulls(jsonb_build_object('entity', forget_entity.entity, 'agent_id', forget_entity.agent_id)),
        jsonb_build_object('entities', v_entities)
    );
end
$$;

comment on function memory.forget_entity(text, text) is
'Removes everything about an entity (by name or alias; of one agent, or of every agent that has one of '
'that name) in this tenant, in one transaction: every turn that mentions it with what derives from it (a '
'session that is nothing else as memory.forget removes one: a later commit is refused unless '
'allow_forgotten; the others are summarized and indexed again from what is left), the memories whose '
'subjects name it, and the entity with its aliases, states and edges. Leaves one tombstone (counts '
'entities too). Returns what was removed and the tombstone; an unknown entity is an error.';

-- The turns about entities: those that mention one, and the words of memories whose subjects name one
-- (of the sessions given, or of all).
create or replace function memory_internal._turns_about(tenant text, keys bigint[], names text[], sessions bigint[])
returns table (turn_id bigint)
language sql
stable
as $$
    select m.turn_id from memory.entity_mentions as m
    inner join memory.turns as t on t.tenant_id = m.tenant_id and t.turn_id = m.turn_id
    where m.tenant_id = tenant and m.entity_id = any(keys) and (sessions is null or t.session_key = any(sessions))
    union
    select m.turn_id from memory.memories as m
    inner join memory.turns as t on t.tenant_id = m.tenant_id and t.turn_id = m.turn_id
    where m.tenant_id = tenant and m.subjects && names and (sessions is null or t.session_key = any(sessions))
$$;

comment on function memory_internal._turns_about(text, bigint[], text[], bigint[]) is
'Internal: the turns that mention the entities or carry the words of memories about them (of the sessions '
'given, or of all).';
