-- A tenant's whole memory as JSON records, and back: memory.export_tenant() gives every session (with each
-- turn's trust, access count and times, the session's tier and its summary), every curated memory (its
-- versions, evidence and supersede chain), the log of merged paraphrases, the entities with their aliases
-- and states, and the feedback given; memory.import_tenant() stores such records in this database, so
-- that the same recall answers the same. What enrichment derives again (chunks, vectors, full-text
-- statistics, mentions, edges) is not exported: the import queues its sessions for enrichment. A record
-- names a turn by [agent_id, session_id, n], the n-th message of its session's record (the import maps it
-- to the turn that message is here), and a memory by its id in the export (mapped to its id here).

-- A session as JSON in the shape memory.commit takes; with state, also what the database holds about it
-- (record "session": record and update times, tier, the summary enrichment made) and about each turn
-- (trust, access count, times, the caller's vector).
create or replace function memory_internal._session_json(tenant text, session bigint, with_state boolean)
returns jsonb
language sql
stable
as $$
    select memory_internal._without_nulls(jsonb_build_object(
        'agent_id', s.agent_id, 'session_id', s.session_id, 'source', s.source, 'model', s.model,
        'started_at', s.started_at, 'tokens_in', s.tokens_in, 'tokens_out', s.tokens_out,
        'metadata', s.metadata, 'run_id', s.run_id,
        'summary', (select m.summary from memory.summaries as m
                    where m.tenant_id = tenant and m.session_key = s.session_key and m.method = 'caller'),
        -- (The turn as a row built of its columns: on Citus, where the statement reads a shard, a whole row would be
        -- of the shard's type.)
        'messages', (
            select coalesce(jsonb_agg(memory_internal._message_json(row(t.*)::memory.turns) || case when with_state then
                memory_internal._without_nulls(jsonb_build_object(
                    'trust', t.trust, 'access_count', nullif(t.access_count, 0),
                    'last_accessed_at', t.last_accessed_at, 'recorded_at', t.recorded_at,
                    'embedding', t.client_embedding::text::jsonb
                ))
            else '{}' end order by t.position), '[]')
            from memory.turns as t
            where t.tenant_id = tenant and t.session_key = s.session_key
        )
    ) || case when with_state then jsonb_build_object(
        'record', 'session', 'recorded_at', s.recorded_at, 'updated_at', s.updated_at, 'tier', s.tier,
        'tier_since', s.tier_since, 'used_at', s.used_at,
        'derived_summary', (
            select jsonb_build_object('method', m.method, 'summary', m.summary, 'decisions', m.decisions,
                                      'open_loops', m.open_loops)
            from memory.summaries as m
            where m.tenant_id = tenant and m.session_key = s.session_key and m.method <> 'caller'
        )
    ) else '{}' end)
    from memory.sessions as s
    where s.tenant_id = tenant and s.session_key = session
$$;

comment on function memory_internal._session_json(text, bigint, boolean) is
'Internal: a session as memory.commit takes it; with_state, as a record of memory.export_tenant.';

-- memory.export gives sessions back in the shape memory.commit takes, so an export re-imports idempotently.
create or replace function memory_internal._export(tenant text, agent text, session text)
returns table (agent_id text, session_id text, session jsonb)
language sql
stable
as $$
    select s.agent_id, s.session_id, memory_internal._session_json(tenant, s.session_key, false)
    from memory.sessions as s
    where s.tenant_id = tenant
        and (agent is null or s.agent_id = agent)
        and (_export.session is null or s.session_id = _export.session)
    order by s.agent_id, s.started_at, s.session_key
$$;

comment on function memory_internal._export(text, text, text) is
'Internal: memory.export of a tenant (named by value, as Citus routes a statement).';

-- (As memory.stats: the API's names, over a SQL function whose parameters have other names.)
create or replace function memory.export(agent_id text default null, session_id text default null)
returns table (agent_id text, session_id text, session jsonb)
language sql
stable
as $$ select * from memory_internal._export(memory.current_tenant(), export.agent_id, export.session_id) $$;

comment on function memory.export(text, text) is
'Sessions of this tenant (all, one agent''s, or one) as JSON in the shape memory.commit takes: '
'{agent_id, session_id, source, model, started_at, tokens_in, tokens_out, metadata, run_id, summary (the '
'caller''s), messages}. Committing an export again adds nothing.';

-- How an export names a turn: [agent_id, session_id, n], the n-th message of its session's record.
create or replace function memory_internal._turn_ref(tenant text, turn bigint) returns jsonb
language sql
stable
as $$
    select jsonb_build_array(s.agent_id, s.session_id, (
        select count(*) from memory.turns as x
        where x.tenant_id = tenant and x.session_key = t.session_key and x.position <= t.position
    ))
    from memory.turns as t
    inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
    where t.tenant_id = tenant and t.turn_id = turn
$$;

comment on function memory_internal._turn_ref(text, bigint) is
'Internal: a turn as export records name it, [agent_id, session_id, n] (the n-th turn of its session).';

-- The records of the sessions, memories and entities given, in an order an import can follow: sessions,
-- then memories (each after the one it supersedes), the merge log, entities, entity states and feedback
-- (on the sessions, their turns, the memories and the turns that carry the memories' words).
create or replace function memory_internal._export_records(
    tenant text, sessions bigint[], memories bigint[], entities bigint[]
) returns setof jsonb
language plpgsql
stable
as $$
begin
    return query
    select jsonb_build_object('record', 'header', 'format', 'agent_memory', 'format_version', 1,
                              'extension_version', memory.version(), 'exported_at', pg_catalog.now());
    return query
    select memory_internal._session_json(tenant, s.session_key, true)
    from memory.sessions as s
    where s.tenant_id = tenant and s.session_key = any(sessions)
    order by s.agent_id, s.started_at, s.session_key;

    return query
    with recursive chain as (
        select m.memory_id, 0 as depth from memory.memories as m
        where m.tenant_id = tenant and m.memory_id = any(memories)
            and (m.supersedes is null or m.supersedes <> all(memories))
        union all
        select m.memory_id, c.depth + 1 from chain as c
        inner join memory.memories as m on m.tenant_id = tenant and m.supersedes = c.memory_id
        where m.memory_id = any(memories)
    )
    select memory_internal._without_nulls(jsonb_build_object(
        'record', 'memory', 'id', m.memory_id, 'agent_id', m.agent_id, 'kind', m.kind, 'content', m.content,
        'key', m.key, 'subjects', m.subjects, 'tags', m.tags, 'importance', m.importance,
        'confidence', m.confidence, 'status', m.status, 'origin', m.origin, 'valid_from', m.valid_from,
        'valid_to', m.valid_to, 'recorded_at', m.recorded_at, 'recorded_by', m.recorded_by,
        'canonical', encode(m.canonical, 'hex'), 'tier', m.tier, 'tier_since', m.tier_since, 'used_at', m.used_at,
        'supersedes', case when m.supersedes = any(memories) then m.supersedes end,
        'metadata', nullif(m.metadata, '{}'), 'shared', nullif(m.shared, false), 'run_id', m.run_id,
        'words_trust', (select w.trust from memory.turns as w where w.tenant_id = tenant and w.turn_id = m.turn_id),
        'evidence', (
            select coalesce(jsonb_agg(memory_internal._turn_ref(tenant, t.turn_id) order by t.turn_id), '[]')
            from memory.turns as t
            inner join memory.memory_evidence as e on t.tenant_id = e.tenant_id and t.turn_id = e.turn_id
            where e.tenant_id = tenant and e.memory_id = m.memory_id
        )
    ))
    from chain as c
    inner join memory.memories as m on m.tenant_id = tenant and m.memory_id = c.memory_id
    order by c.depth, m.memory_id;

    return query
    select jsonb_strip_nulls(jsonb_build_object(
        'record', 'memory_merge', 'memory', g.memory_id, 'agent_id', g.agent_id, 'kind', g.kind,
        'content', g.content, 'similarity', g.similarity, 'merged', g.merged, 'created_memory', g.created_memory_id,
        'recorded_at', g.recorded_at, 'recorded_by', g.recorded_by
    ))
    from memory.memory_merges as g
    where g.tenant_id = tenant and g.memory_id = any(memories)
        and (g.created_memory_id is null or g.created_memory_id = any(memories))
    order by g.merge_id;

    return query
    select jsonb_build_object(
        'record', 'memory_supersession', 'memory', x.memory_id, 'by_memory', x.by_memory_id, 'judge', x.judge,
        'action', x.action, 'reason', x.reason, 'applied', x.applied, 'recorded_at', x.recorded_at,
        'recorded_by', x.recorded_by
    )
    from memory.memory_supersessions as x
    where x.tenant_id = tenant and x.memory_id = any(memories) and x.by_memory_id = any(memories)
    order by x.supersession_id;

    return query
    select jsonb_build_object('record', 'entity', 'agent_id', e.agent_id, 'name', e.name, 'normalized', e.normalized,
                              'type', e.type, 'aliases', e.aliases)
    from memory.entities as e
    where e.tenant_id = tenant and e.entity_id = any(entities)
    order by e.agent_id, e.normalized;

    return query
    select memory_internal._without_nulls(jsonb_build_object(
        'record', 'entity_state', 'agent_id', e.agent_id, 'entity', e.normalized, 'attribute', x.attribute,
        'value', x.value, 'valid_from', x.valid_from, 'valid_to', x.valid_to, 'recorded_at', x.recorded_at,
        'recorded_by', x.recorded_by, 'status', nullif(x.status, 'active'), 'origin', nullif(x.origin, 'caller'),
        'evidence', memory_internal._turn_ref(tenant, x.evidence_turn_id)
    ))
    from memory.entity_states as x
    inner join memory.entities as e on x.tenant_id = e.tenant_id and x.entity_id = e.entity_id
    where x.tenant_id = tenant and e.entity_id = any(entities)
    order by e.agent_id, e.normalized, x.attribute, x.valid_from;

    return query
    select jsonb_strip_nulls(jsonb_build_object(
        'record', 'feedback',
        'turn', case when t.session_key = any(sessions) then memory_internal._turn_ref(tenant, t.turn_id) end,
        'memory_words', case when t.session_key <> all(sessions) then (
            select min(m.memory_id) from memory.memories as m
            where m.tenant_id = tenant and m.turn_id = t.turn_id and m.memory_id = any(memories)
        ) end,
        'session', case when f.session_key is not null then jsonb_build_array(s.agent_id, s.session_id) end,
        'memory', f.memory_id, 'verdict', f.verdict, 'query', f.query, 'note', f.note,
        'trust_before', f.trust_before, 'trust_after', f.trust_after, 'given_by', f.given_by,
        'judged_by', f.judged_by, 'counted', f.counted, 'effect', f.effect, 'created_at', f.created_at
    ))
    from memory.feedback as f
    left join memory.turns as t on f.tenant_id = t.tenant_id and f.turn_id = t.turn_id
    left join memory.sessions as s on f.tenant_id = s.tenant_id and f.session_key = s.session_key
    where f.tenant_id = tenant
        and (
            t.session_key = any(sessions) or f.session_key = any(sessions) or f.memory_id = any(memories)
            or exists (
                select from memory.memories as m
                where m.tenant_id = tenant and m.turn_id = f.turn_id and m.memory_id = any(memories)
            )
        )
    order by f.created_at, f.feedback_id;
end
$$;

comment on function memory_internal._export_records(text, bigint[], bigint[], bigint[]) is
'Internal: the export records of a tenant''s sessions, memories and entities given (memory.export_tenant, '
'retention archives).';

create or replace function memory.export_tenant(agent_id text default null)
returns setof jsonb
language sql
volatile
as $$
    select r.record
    from memory_internal._export_records(
        memory.current_tenant(),
        array(select s.session_key from memory.sessions as s
              where s.tenant_id = memory.current_tenant()
                  and (export_tenant.agent_id is null or s.agent_id = export_tenant.agent_id)),
        array(select m.memory_id from memory.memories as m
              where m.tenant_id = memory.current_tenant()
                  and (export_tenant.agent_id is null or m.agent_id = export_tenant.agent_id)),
        array(select e.entity_id from memory.entities as e
              where e.tenant_id = memory.current_tenant()
                  and (export_tenant.agent_id is null or e.agent_id = export_tenant.agent_id))
    ) as r (record)
$$;

comment on function memory.export_tenant(text) is
'The whole memory of this tenant (or of one agent) as JSON records, one per row, for memory.import_tenant or '
'`agent-memory import jsonl`: a header, then each session as memory.commit takes it plus its tier, summary and '
'each turn''s trust and access count (record "session"), each curated memory version with its evidence and '
'supersede chain ("memory"), merged paraphrases ("memory_merge"), supersessions without a key '
'("memory_supersession"), entities with aliases ("entity"), their '
'states ("entity_state") and the feedback given ("feedback"). Chunks, vectors and mentions are derived again '
'by enrichment; tombstones, settings and metrics stay with this database.';

-- The turn a record names as [agent_id, session_id, n]: the turn the n-th message of that session's record
-- is here when this transaction imported the record, else the n-th turn of the session here (as a record
-- of this database names it), or null.
create or replace function memory_internal._imported_turn(tenant text, ref jsonb) returns bigint
language plpgsql
stable
as $$
declare
    v_turn bigint;
begin
    if jsonb_typeof(ref) is distinct from 'array' or jsonb_typeof(ref -> 2) is distinct from 'number' then
        return null;
    end if;
    -- A turn this import wrote, else the turn of the session here (in statements of their own: Citus reads no
    -- temporary table beside its tables).
    select i.turn_id into v_turn from pg_temp._agent_memory_import_turns as i
    where i.agent_id = ref ->> 0 and i.session_id = ref ->> 1 and i.n = (ref ->> 2)::bigint;
    if v_turn is null then
        select t.turn_id into v_turn
        from memory.sessions as s
        inner join memory.turns as t on s.tenant_id = t.tenant_id and s.session_key = t.session_key
        where s.tenant_id = tenant and s.agent_id = ref ->> 0 and s.session_id = ref ->> 1
        order by t.position
        offset (ref ->> 2)::bigint - 1
        limit 1;
    end if;
    return v_turn;
end
$$;

comment on function memory_internal._imported_turn(text, jsonb) is
'Internal: the turn an import record names as [agent_id, session_id, n] (the n-th message of its session''s '
'record), or null.';

-- The messages of a session record as the turns they are of a session here: a message with an id is the
-- turn with that id; one without is, by its words, the k-th turn with those words when it is the k-th
-- message with them (so a session with gaps, or with turns of its own, is matched all the same).
create or replace function memory_internal._message_turns(tenant text, session bigint, messages jsonb)
returns table (n bigint, turn_id bigint)
language sql
stable
as $$
    with given as (
        select m.n, m.message ->> 'id' as message_id,
               memory_internal._message_sha256(m.message, memory_internal._message_text(m.message)) as content_sha256
        from jsonb_array_elements(messages) with ordinality as m (message, n)
    ),
    numbered as (
        select g.*, row_number() over (partition by g.message_id is null, g.content_sha256 order by g.n) as k
        from given as g
    ),
    turns as (
        select t.turn_id, t.message_id, t.content_sha256,
               row_number() over (partition by t.message_id is null, t.content_sha256 order by t.position) as k
        from memory.turns as t
        where t.tenant_id = tenant and t.session_key = session
    )

    select g.n, coalesce(
        (select t.turn_id from turns as t where g.message_id is not null and t.message_id = g.message_id),
        (select t.turn_id from turns as t
         where g.message_id is null and t.message_id is null and t.content_sha256 = g.content_sha256 and t.k = g.k)
    )
    from numbered as g
$$;

comment on function memory_internal._message_turns(text, bigint, jsonb) is
'Internal: the turn of a session each message of a session record is (by id, else by its words), or null.';

-- One session record: committed (queued for enrichment); when the import created it, the turns' and the
-- session's state and its summary are restored. Returns imported, unchanged or forgotten.
create or replace function memory_internal._import_session(tenant text, r jsonb, allow_forgotten boolean)
returns text
language plpgsql
as $$
declare
    v_agent text := coalesce(r ->> 'agent_id', 'default');
    v_state text [] := array['trust', 'access_count', 'last_accessed_at', 'recorded_at'];
    v_commit record;
    v_session bigint;
    v_before record;
    v_new jsonb;
    v_present bigint[];
    v_restored jsonb;
    v_given memory.sessions;
    v_summary jsonb := r -> 'derived_summary';
    v_config regconfig := (memory.setting('text_search_config') #>> '{}')::regconfig;
begin
    if jsonb_typeof(r -> 'messages') is distinct from 'array' then
        raise exception 'agent_memory: a session record needs "messages", a JSON array'
            using errcode = 'invalid_parameter_value';
    end if;
    if not allow_forgotten
        and exists (select from memory_internal._forgotten(v_agent, r ->> 'session_id', false) as f
                    where f.tombstone_id is not null) then
        return 'forgotten';
    end if;
    select s.session_key, s.updated_at, s.tier, s.tier_since into v_before
    from memory.sessions as s
    where s.tenant_id = tenant and s.agent_id = v_agent and s.session_id = r ->> 'session_id';
    -- Of a session here already, only the messages it does not have are committed.
    select coalesce(jsonb_agg(m.message - v_state order by m.n), '[]') into v_new
    from jsonb_array_elements(r -> 'messages') with ordinality as m (message, n)
    where v_before is null or not exists (
        select from memory_internal._message_turns(tenant, v_before.session_key, r -> 'messages') as k
        where k.n = m.n and k.turn_id is not null
    );
    v_present := array(
        select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.session_key = v_before.session_key
    );
    select c.* into v_commit
    from memory.commit(
        r ->> 'session_id',
        v_new::json,
        agent_id => v_agent, source => r ->> 'source', started_at => (r ->> 'started_at')::timestamptz,
        model => r ->> 'model', tokens_in => (r ->> 'tokens_in')::bigint, tokens_out => (r ->> 'tokens_out')::bigint,
        metadata => coalesce(r -> 'metadata', '{}'), enrich => 'queue', allow_forgotten => allow_forgotten,
        run_id => r ->> 'run_id'
    ) as c;
    v_session := memory_internal._session_key(r ->> 'session_id', v_agent);
    insert into pg_temp._agent_memory_import_turns (agent_id, session_id, n, turn_id)
    select v_agent, r ->> 'session_id', k.n, k.turn_id
    from memory_internal._message_turns(tenant, v_session, r -> 'messages') as k
    where k.turn_id is not null
    on conflict (agent_id, session_id, n) do update set turn_id = excluded.turn_id;
    -- The turns this import added get their state back; those that were here keep theirs. (The state read
    -- first: Citus takes no function of a row's columns that is not immutable, a time read from text, in an
    -- update.)
    select jsonb_agg(jsonb_build_object(
               'turn_id', k.turn_id, 'trust', m.message -> 'trust', 'access_count', m.message -> 'access_count',
               'last_accessed_at', (m.message ->> 'last_accessed_at')::timestamptz,
               'recorded_at', (m.message ->> 'recorded_at')::timestamptz
           ))
    into v_restored
    from memory_internal._message_turns(tenant, v_session, r -> 'messages') as k
    inner join jsonb_array_elements(r -> 'messages') with ordinality as m (message, n) on k.n = m.n
    where k.turn_id <> all(v_present);
    update memory.turns as t
    set trust = coalesce(u.trust, t.trust), access_count = coalesce(u.access_count, t.access_count),
        last_accessed_at = u.last_accessed_at, recorded_at = coalesce(u.recorded_at, t.recorded_at)
    from jsonb_to_recordset(v_restored)
        as u (turn_id bigint, trust real, access_count bigint, last_accessed_at timestamptz, recorded_at timestamptz)
    where t.tenant_id = tenant and t.turn_id = u.turn_id;
    if not v_commit.created and v_commit.turns_added = 0 then
        -- Nothing new: the session is as it was before (commit counts a write as use).
        update memory.sessions as s
        set updated_at = v_before.updated_at, tier = v_before.tier, tier_since = v_before.tier_since
        where s.tenant_id = tenant and s.session_key = v_session;
        return 'unchanged';
    elsif not v_commit.created then
        return 'imported';
    end if;

    -- (The record's times read first: Citus takes no function that is not immutable, a time read from text, in an
    -- update's coalesce.)
    v_given := jsonb_populate_record(null::memory.sessions, r);
    update memory.sessions as s
    set recorded_at = coalesce(v_given.recorded_at, s.recorded_at),
        updated_at = coalesce(v_given.updated_at, s.updated_at),
        tier = coalesce(v_given.tier, s.tier),
        tier_since = coalesce(v_given.tier_since, s.tier_since),
        used_at = v_given.used_at
    where s.tenant_id = tenant and s.session_key = v_session;

    if r ->> 'summary' is not null then
        perform memory.set_summary(r ->> 'session_id', r ->> 'summary', agent_id => v_agent);
    elsif v_summary is not null then
        -- Made from these very turns: enrichment keeps it.
        insert into memory.summaries (tenant_id, session_key, method, summary, decisions, open_loops, source_sha256,
                                      tsv, cold)
        values (tenant, v_session, v_summary ->> 'method', v_summary ->> 'summary',
                coalesce(v_summary -> 'decisions', '[]'), coalesce(v_summary -> 'open_loops', '[]'),
                memory_internal._session_source_sha256(tenant, v_session),
                to_tsvector(v_config, v_summary ->> 'summary'), memory_internal._session_is_cold(tenant, v_session));
    end if;
    return 'imported';
end
$$;

comment on function memory_internal._import_session(text, jsonb, boolean) is
'Internal: stores one session record of an import (memory.import_tenant).';

-- One memory record: its words are the agent's remembered turn (committed if new), its evidence the turns
-- the record names that are here. A version held already (same claim, key and times) is not stored again.
-- The record's id is mapped to the memory's id here, for the records after it.
create or replace function memory_internal._import_memory(tenant text, r jsonb) returns text
language plpgsql
as $$
declare
    v_agent text := coalesce(r ->> 'agent_id', 'default');
    v_subjects text [] := array(select jsonb_array_elements_text(coalesce(r -> 'subjects', '[]')));
    v_tags text [] := array(select jsonb_array_elements_text(coalesce(r -> 'tags', '[]')));
    v_canonical bytea := coalesce(
        decode(r ->> 'canonical', 'hex'),
        memory_internal._memory_canonical(
            r ->> 'kind', memory_internal._memory_subjects(v_subjects), btrim(r ->> 'content')
        )
    );
    v_turn bigint;
    v_supersedes bigint;
    v_memory bigint;
    v_outcome text := 'unchanged';
begin
    if jsonb_typeof(r -> 'id') is distinct from 'number' or r ->> 'content' is null or r ->> 'kind' is null then
        raise exception 'agent_memory: a memory record needs "id" (a number), "kind" and "content"'
            using errcode = 'invalid_parameter_value';
    elsif r ->> 'kind' <> all(memory_internal._memory_kinds()) then
        raise exception 'agent_memory: memory kind must be one of %, got %',
            array_to_string(memory_internal._memory_kinds(), ', '), r ->> 'kind' using errcode = 'invalid_parameter_value';
    elsif coalesce(jsonb_typeof(r -> 'metadata'), 'object') <> 'object' then
        raise exception 'agent_memory: a memory record''s "metadata" must be a JSON object, got %', r -> 'metadata'
            using errcode = 'invalid_parameter_value';
    elsif coalesce(jsonb_typeof(r -> 'shared'), 'boolean') <> 'boolean' then
        raise exception 'agent_memory: a memory record''s "shared" must be true or false, got %', r -> 'shared'
            using errcode = 'invalid_parameter_value';
    end if;
    select m.memory_id into v_memory
    from memory.memories as m
    where m.tenant_id = tenant and m.agent_id = v_agent and m.canonical = v_canonical
        and m.key is not distinct from r ->> 'key'
        and (
            m.valid_from = (r ->> 'valid_from')::timestamptz and m.recorded_at = (r ->> 'recorded_at')::timestamptz
            -- The same claim holding now here as there: that one.
            or m.valid_to is null and m.status in ('active', 'ongoing') and r ->> 'valid_to' is null
            and coalesce(r ->> 'status', 'active') in ('active', 'ongoing')
        )
    order by m.memory_id
    limit 1;
    if v_memory is null then
        -- (What the row takes from other tables, read first: Citus takes no subquery in an insert's values.)
        v_turn := memory_internal._memory_turn(r ->> 'content', r ->> 'kind', v_agent, '{}', 'queue', r ->> 'key');
        select i.memory_id into v_supersedes from pg_temp._agent_memory_import_memories as i
        where i.source_id = (r ->> 'supersedes')::bigint;
        insert into memory.memories (
            tenant_id, agent_id, kind, content, key, subjects, tags, importance, confidence, status, origin,
            valid_from, valid_to, recorded_at, recorded_by, canonical, turn_id, supersedes, tier,
            tier_since, used_at, metadata, shared, run_id
        )
        values (tenant, v_agent, r ->> 'kind', r ->> 'content', r ->> 'key', v_subjects, v_tags,
                coalesce((r ->> 'importance')::double precision, 0.5), coalesce((r ->> 'confidence')::double precision, 1),
                coalesce(r ->> 'status', 'active'), coalesce(r ->> 'origin', 'remember'),
                coalesce((r ->> 'valid_from')::timestamptz, pg_catalog.now()), (r ->> 'valid_to')::timestamptz,
                coalesce((r ->> 'recorded_at')::timestamptz, pg_catalog.now()),
                coalesce(r ->> 'recorded_by', memory_internal._actor()), v_canonical, v_turn, v_supersedes,
                coalesce(r ->> 'tier', 'hot'), coalesce((r ->> 'tier_since')::timestamptz, pg_catalog.now()),
                (r ->> 'used_at')::timestamptz, coalesce(r -> 'metadata', '{}'), coalesce((r -> 'shared')::boolean, false),
                r ->> 'run_id')
        returning memory_id into v_memory;
        perform memory_internal._add_evidence(tenant, v_memory, array(
            select k.turn_id
            from jsonb_array_elements(coalesce(r -> 'evidence', '[]')) as e (ref)
            cross join lateral (select memory_internal._imported_turn(tenant, e.ref) as turn_id) as k
            where k.turn_id is not null
        ));
        v_outcome := 'imported';
        update memory.turns as t set trust = (r ->> 'words_trust')::real
        where t.tenant_id = tenant and r ? 'words_trust' and t.turn_id = v_turn;
    end if;
    insert into pg_temp._agent_memory_import_memories (source_id, memory_id)
    values ((r ->> 'id')::bigint, v_memory)
    on conflict (source_id) do update set memory_id = excluded.memory_id;
    return v_outcome;
end
$$;

comment on function memory_internal._import_memory(text, jsonb) is
'Internal: stores one memory record of an import (memory.import_tenant).';

-- The memory an import record names by its id in the export, as mapped by this transaction's import.
create or replace function memory_internal._imported_memory(ref jsonb) returns bigint
language sql
stable
as $$
    select i.memory_id from pg_temp._agent_memory_import_memories as i where i.source_id = (ref #>> '{}')::bigint
$$;

comment on function memory_internal._imported_memory(jsonb) is
'Internal: the memory here of a memory id of the export, mapped by this transaction''s import.';

-- The rest: the merge and supersession logs, entities, their states and feedback, each stored once (a
-- record whose like is here already is unchanged). A record naming a memory, entity or turn that is not
-- here is an error.
create or replace function memory_internal._import_other(tenant text, r jsonb) returns text
language plpgsql
as $$
declare
    v_kind text := r ->> 'record';
    v_entity bigint;
    v_aliases text [];
    v_kept text [];
    v_target record;
    v_rows bigint;
begin
    if v_kind = 'memory_merge' then
        if memory_internal._imported_memory(r -> 'memory') is null
            or r ? 'created_memory' and memory_internal._imported_memory(r -> 'created_memory') is null then
            raise exception 'agent_memory: the memory it names is not among the memories imported before it'
                using errcode = 'foreign_key_violation';
        end if;
        insert into memory.memory_merges (tenant_id, memory_id, agent_id, kind, content, similarity, merged,
                                          created_memory_id, recorded_at, recorded_by)
        select tenant, memory_internal._imported_memory(r -> 'memory'), r ->> 'agent_id', r ->> 'kind', r ->> 'content',
               (r ->> 'similarity')::double precision, (r ->> 'merged')::boolean,
               memory_internal._imported_memory(r -> 'created_memory'), (r ->> 'recorded_at')::timestamptz,
               coalesce(r ->> 'recorded_by', memory_internal._actor())
        where not exists (
            select from memory.memory_merges as g
            where g.tenant_id = tenant and g.memory_id = memory_internal._imported_memory(r -> 'memory')
                and g.content = r ->> 'content' and g.recorded_at = (r ->> 'recorded_at')::timestamptz
        );
    elsif v_kind = 'memory_supersession' then
        if memory_internal._imported_memory(r -> 'memory') is null
            or memory_internal._imported_memory(r -> 'by_memory') is null then
            raise exception 'agent_memory: the memory it names is not among the memories imported before it'
                using errcode = 'foreign_key_violation';
        end if;
        insert into memory.memory_supersessions (tenant_id, memory_id, by_memory_id, judge, action, reason, applied,
                                                 recorded_at, recorded_by)
        select tenant, memory_internal._imported_memory(r -> 'memory'), memory_internal._imported_memory(r -> 'by_memory'),
               r ->> 'judge', r ->> 'action', r ->> 'reason', (r ->> 'applied')::boolean,
               (r ->> 'recorded_at')::timestamptz, coalesce(r ->> 'recorded_by', memory_internal._actor())
        where not exists (
            select from memory.memory_supersessions as x
            where x.tenant_id = tenant and x.memory_id = memory_internal._imported_memory(r -> 'memory')
                and x.by_memory_id = memory_internal._imported_memory(r -> 'by_memory')
                and x.recorded_at = (r ->> 'recorded_at')::timestamptz
        );
    elsif v_kind = 'entity' then
        -- (The aliases, with those of the entity when it is here, read first: Citus takes no subquery in an
        -- insert.)
        v_aliases := array(select jsonb_array_elements_text(coalesce(r -> 'aliases', '[]')));
        select array(select distinct a from unnest(e.aliases || v_aliases) as a order by a) into v_kept
        from memory.entities as e
        where e.tenant_id = tenant and e.agent_id = r ->> 'agent_id' and e.normalized = r ->> 'normalized';
        insert into memory.entities as e (tenant_id, agent_id, name, normalized, type, aliases)
        values (tenant, r ->> 'agent_id', r ->> 'name', r ->> 'normalized', coalesce(r ->> 'type', 'other'),
                coalesce(v_kept, v_aliases))
        on conflict (tenant_id, agent_id, normalized) do update
        set aliases = excluded.aliases
        where not e.aliases @> excluded.aliases;
    elsif v_kind = 'entity_state' then
        select e.entity_id into v_entity from memory.entities as e
        where e.tenant_id = tenant and e.agent_id = r ->> 'agent_id' and e.normalized = r ->> 'entity';
        if v_entity is null then
            raise exception 'agent_memory: entity "%" of agent "%" is not here (its entity record comes first)',
                r ->> 'entity', r ->> 'agent_id' using errcode = 'foreign_key_violation';
        end if;
        insert into memory.entity_states (tenant_id, entity_id, attribute, value, valid_from, valid_to, recorded_at,
                                          recorded_by, status, origin, evidence_turn_id)
        select tenant, v_entity, r ->> 'attribute', r -> 'value', (r ->> 'valid_from')::timestamptz,
               (r ->> 'valid_to')::timestamptz, coalesce((r ->> 'recorded_at')::timestamptz, pg_catalog.now()),
               coalesce(r ->> 'recorded_by', memory_internal._actor()), coalesce(r ->> 'status', 'active'),
               coalesce(r ->> 'origin', 'caller'), memory_internal._imported_turn(tenant, r -> 'evidence')
        where not exists (
            select from memory.entity_states as x
            where x.tenant_id = tenant and x.entity_id = v_entity and x.attribute = r ->> 'attribute'
                and x.valid_from = (r ->> 'valid_from')::timestamptz and x.value = r -> 'value'
        );
    elsif v_kind = 'feedback' then
        select coalesce(
                   memory_internal._imported_turn(tenant, r -> 'turn'),
                   (select m.turn_id from memory.memories as m
                    where m.tenant_id = tenant and m.memory_id = memory_internal._imported_memory(r -> 'memory_words'))
               ) as turn_id,
               (select s.session_key from memory.sessions as s
                where s.tenant_id = tenant and s.agent_id = r -> 'session' ->> 0
                    and s.session_id = r -> 'session' ->> 1) as session_key,
               memory_internal._imported_memory(r -> 'memory') as memory_id
        into v_target;
        if num_nonnulls(v_target.turn_id, v_target.session_key, v_target.memory_id) <> 1 then
            raise exception 'agent_memory: feedback names no turn, session or memory that is here'
                using errcode = 'foreign_key_violation';
        end if;
        insert into memory.feedback (tenant_id, turn_id, session_key, memory_id, helpful, verdict, query, note,
                                     trust_before, trust_after, given_by, judged_by, counted, effect, created_at)
        select tenant, v_target.turn_id, v_target.session_key, v_target.memory_id, r ->> 'verdict' = 'helpful',
               r ->> 'verdict', r ->> 'query', r ->> 'note', (r ->> 'trust_before')::real, (r ->> 'trust_after')::real,
               coalesce(r ->> 'given_by', memory_internal._actor()), coalesce(r ->> 'judged_by', r ->> 'given_by', memory_internal._actor()),
               coalesce((r ->> 'counted')::boolean, true), r ->> 'effect',
               coalesce((r ->> 'created_at')::timestamptz, pg_catalog.now())
        where not exists (
            select from memory.feedback as f
            where f.tenant_id = tenant and f.created_at = (r ->> 'created_at')::timestamptz
                and f.verdict = r ->> 'verdict' and f.judged_by = coalesce(r ->> 'judged_by', r ->> 'given_by')
                and f.turn_id is not distinct from v_target.turn_id
                and f.session_key is not distinct from v_target.session_key
                and f.memory_id is not distinct from v_target.memory_id
        );
    else
        raise exception 'agent_memory: unknown record "%" (expected header, session, memory, memory_merge, '
            'memory_supersession, entity, entity_state, feedback or tool_result)', v_kind
            using errcode = 'invalid_parameter_value';
    end if;
    get diagnostics v_rows = row_count;
    return case when v_rows > 0 then 'imported' else 'unchanged' end;
end
$$;

comment on function memory_internal._import_other(text, jsonb) is
'Internal: stores one merge, entity, entity state or feedback record of an import (memory.import_tenant).';

-- What tool results said, as retention archives it before clearing it (data tool_results): a record per turn,
-- which an import puts back.
create or replace function memory_internal._tool_result_records(tenant text, turns bigint[]) returns setof jsonb
language sql
stable
as $$
    select jsonb_build_object('record', 'tool_result', 'turn', memory_internal._turn_ref(tenant, t.turn_id),
                              'content', t.content)
    from memory.turns as t
    where t.tenant_id = tenant and t.turn_id = any(turns)
    order by t.turn_id
$$;

comment on function memory_internal._tool_result_records(text, bigint[]) is
'Internal: export records of what tool results said, {record: tool_result, turn, content}, as retention '
'archives them.';

-- A tool_result record imported: the words retention cleared from that turn come back (the same words: their
-- hash is the turn's), and its session is queued for enrichment. Anything else is left as it is.
create or replace function memory_internal._import_tool_result(tenant text, r jsonb) returns text
language plpgsql
as $$
declare
    v_turn bigint := memory_internal._imported_turn(tenant, r -> 'turn');
    v_session bigint;
begin
    if jsonb_typeof(r -> 'content') is distinct from 'string' or jsonb_typeof(r -> 'turn') is distinct from 'array' then
        raise exception 'agent_memory: a tool_result record needs "turn" ([agent_id, session_id, n]) and "content" (text)'
            using errcode = 'invalid_parameter_value';
    end if;
    update memory.turns as t
    set content = r ->> 'content', metadata = t.metadata - 'content_removed_at' - 'content_sha256'
    where t.tenant_id = tenant and t.turn_id = v_turn and t.metadata ? 'content_removed_at'
        and t.content_sha256 = sha256(convert_to(r ->> 'content', 'UTF8'))
    returning t.session_key into v_session;
    if v_session is null then
        return 'unchanged';
    end if;
    insert into memory.jobs (tenant_id, kind, session_key) values (tenant, 'enrich', v_session)
    on conflict (tenant_id, kind, session_key) where status = 'queued' do nothing;
    return 'imported';
end
$$;

comment on function memory_internal._import_tool_result(text, jsonb) is
'Internal: puts back the words retention cleared from a tool result (a tool_result record of an archive).';

-- Whether this transaction's import tables exist (false: none yet). They live in the caller's session, whose
-- temporary schema the caller may write: each must be an ordinary table the import made (owned by the role it
-- runs as, memory_owner), without triggers or rules, else the import stops (a view or a trigger of the
-- caller's there would run the caller's code as the owner).
create or replace function memory_internal._import_tables_ready() returns boolean
language plpgsql
stable
as $$
declare
    v_names text [] := array[
        '_agent_memory_import_turns', '_agent_memory_import_memories', '_agent_memory_import_records',
        '_agent_memory_import_counts'
    ];
    v_found integer;
    v_ours integer;
begin
    select count(*), count(*) filter (
        where c.relkind = 'r' and c.relowner = (select r.oid from pg_catalog.pg_roles as r where r.rolname = current_user)
            and not c.relhastriggers and not c.relhasrules
    )
    into v_found, v_ours
    from pg_catalog.pg_class as c
    where c.relnamespace = pg_catalog.pg_my_temp_schema() and c.relname = any(v_names);
    if v_found = 0 then
        return false;
    end if;
    if v_ours < cardinality(v_names) then
        raise exception 'agent_memory: this session has temporary relations named like the import''s own (%)',
            array_to_string(v_names, ', ')
            using errcode = 'object_not_in_prerequisite_state',
                  hint = 'drop them, or import from another session';
    end if;
    return true;
end
$$;

comment on function memory_internal._import_tables_ready() is
'Internal: whether this transaction''s import tables exist; an error if relations of those names are not the '
'import''s own.';

create or replace function memory.import_tenant(records jsonb, allow_forgotten boolean default false)
returns table (record_type text, imported integer, unchanged integer, forgotten integer)
language plpgsql
volatile
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_record jsonb;
    v_n bigint;
    v_before bigint;
    v_kind text;
    v_outcome text;
    v_message text;
    v_state text;
    v_detail text;
    v_hint text;
begin
    if jsonb_typeof(records) is distinct from 'array' then
        raise exception 'agent_memory: import_tenant takes a JSON array of export records'
            using errcode = 'invalid_parameter_value';
    end if;
    -- This transaction's import: the turn each message named is, the id each memory got, how many records.
    if not memory_internal._import_tables_ready() then
        create temporary table _agent_memory_import_turns (
            agent_id text, session_id text, n bigint, turn_id bigint not null, primary key (agent_id, session_id, n)
        ) on commit drop;
        create temporary table _agent_memory_import_memories (
            source_id bigint primary key, memory_id bigint not null
        ) on commit drop;
        create temporary table _agent_memory_import_records (records bigint not null) on commit drop;
        create temporary table _agent_memory_import_counts (
            record_type text primary key, imported integer not null default 0, unchanged integer not null default 0,
            forgotten integer not null default 0
        ) on commit drop;
    end if;
    -- Records are numbered across the calls of one transaction, as one export read in batches.
    select coalesce(max(x.records), 0) into v_before from pg_temp._agent_memory_import_records as x;
    truncate pg_temp._agent_memory_import_counts;
    begin
        for v_record, v_n in select e.r, e.n from jsonb_array_elements(records) with ordinality as e (r, n) loop
            v_kind := null;
            if jsonb_typeof(v_record) <> 'object' then
                raise exception 'agent_memory: it is not a JSON object' using errcode = 'invalid_parameter_value';
            end if;
            -- Lines of memory.export (sessions without a record type) are session records.
            v_kind := coalesce(v_record ->> 'record', case when v_record ? 'messages' then 'session' end);
            if v_kind = 'header' then
                if (v_record ->> 'format_version')::integer > 1 then
                    raise exception 'agent_memory: format_version % is newer than this version reads (1)',
                        v_record ->> 'format_version' using errcode = 'invalid_parameter_value';
                end if;
                continue;
            end if;
            v_outcome := case v_kind
                when 'session' then memory_internal._import_session(v_tenant, v_record, allow_forgotten)
                when 'memory' then memory_internal._import_memory(v_tenant, v_record)
                when 'tool_result' then memory_internal._import_tool_result(v_tenant, v_record)
                else memory_internal._import_other(v_tenant, v_record)
            end;
            insert into pg_temp._agent_memory_import_counts as c (record_type, imported, unchanged, forgotten)
            values (v_kind, (v_outcome = 'imported')::integer, (v_outcome = 'unchanged')::integer,
                    (v_outcome = 'forgotten')::integer)
            on conflict (record_type) do update
            set imported = c.imported + excluded.imported, unchanged = c.unchanged + excluded.unchanged,
                forgotten = c.forgotten + excluded.forgotten;
        end loop;
    exception when others then
        get stacked diagnostics v_message = message_text, v_state = returned_sqlstate, v_detail = pg_exception_detail,
            v_hint = pg_exception_hint;
        raise exception 'agent_memory: import record % (%): %', v_before + v_n, coalesce(v_kind, 'no record type'),
            regexp_replace(v_message, '^agent_memory: ', '')
            using errcode = v_state, detail = v_detail, hint = v_hint;
    end;
    delete from pg_temp._agent_memory_import_records;
    insert into pg_temp._agent_memory_import_records (records) values (v_before + jsonb_array_length(records));
    return query select c.record_type, c.imported, c.unchanged, c.forgotten from pg_temp._agent_memory_import_counts as c
    order by array_position(array['session', 'memory', 'memory_merge', 'memory_supersession', 'entity', 'entity_state',
                                  'feedback', 'tool_result'],
                            c.record_type);
end
$$;

comment on function memory.import_tenant(jsonb, boolean) is
'Stores records of memory.export_tenant (a JSON array; lines of memory.export count as session records) in '
'this tenant, all or nothing: sessions as memory.commit does (queued for enrichment; a session it creates gets '
'back its tier, summary and each turn''s trust and access count), memories with their evidence and supersede '
'chain, merges, supersessions, entities, entity states and feedback, and the words of tool results retention '
'cleared (tool_result records of an archive). What is here already is left as it is, '
'so importing again changes nothing. A forgotten session is skipped unless allow_forgotten. An export sent in several '
'calls must be imported in one transaction: memories are mapped to their ids here for the records after '
'them, and an error names a record by its number among all the transaction''s records. Returns per record '
'type how many were imported, unchanged and skipped as forgotten.';
