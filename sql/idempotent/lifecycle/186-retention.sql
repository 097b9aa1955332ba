-- Retention: a tenant's policies bound what it keeps. A policy covers one kind of data (sessions, or
-- curated memories), of one agent or all, optionally only those in one tier (and, for memories, of some
-- statuses), and sets max_age (unused for longer: last written, recalled or judged helpful) and/or
-- keep_last (the agent's newest that many, by last use, of what the policy covers are kept). An item goes
-- when it is over every limit its policy sets. The memories extracted from sessions that go alone go with
-- them. memory.retention_preview() lists what would go; maintenance archives it (gzipped JSON lines of
-- export records, in memory.archives) and removes it in the same transaction. Removal by retention leaves
-- no tombstone: an archive imported again brings its sessions back.

-- Export records as the bytes of a gzipped JSON lines file.
create or replace function memory_internal._gzip_lines(lines text[]) returns bytea
language plpython3u
immutable strict
as $$
@load_python@
from agent_memory_db.archive import gzip_lines
return gzip_lines(lines)
$$;

comment on function memory_internal._gzip_lines(text[]) is
'Internal: lines as a gzip file, one per line (retention archives).';

create or replace function memory.set_retention(
    data text,
    max_age interval default null,
    keep_last integer default null,
    tier text default null,
    agent_id text default null,
    statuses text[] default null
) returns memory.retention_policies
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_policy memory.retention_policies;
begin
    if data is null or data not in ('sessions', 'memories', 'tool_results') then
        raise exception 'agent_memory: retention covers sessions, memories or tool_results, got %', coalesce(data, 'null')
            using errcode = 'invalid_parameter_value';
    elsif max_age is null and keep_last is null then
        raise exception 'agent_memory: a retention policy needs max_age or keep_last (or both)'
            using errcode = 'invalid_parameter_value';
    elsif max_age <= interval '0' then
        raise exception 'agent_memory: retention max_age must be positive, got %', max_age
            using errcode = 'invalid_parameter_value';
    elsif keep_last < 0 then
        raise exception 'agent_memory: retention keep_last must be 0 or more, got %', keep_last
            using errcode = 'invalid_parameter_value';
    elsif tier not in ('hot', 'warm', 'cold') then
        raise exception 'agent_memory: retention tier must be hot, warm or cold, got %', tier
            using errcode = 'invalid_parameter_value';
    elsif statuses is not null and data <> 'memories' then
        raise exception 'agent_memory: retention statuses are for memories, not %', data
            using errcode = 'invalid_parameter_value';
    elsif exists (
        select from unnest(statuses) as s (status)
        where s.status is null or s.status not in ('active', 'ongoing', 'resolved', 'superseded', 'retracted', 'pending')
    ) then
        raise exception 'agent_memory: retention statuses must be among active, ongoing, resolved, superseded, '
            'retracted and pending, got %', statuses using errcode = 'invalid_parameter_value';
    end if;
    insert into memory.retention_policies as p (tenant_id, data, agent_id, max_age, keep_last, tier, statuses)
    values (v_tenant, set_retention.data, set_retention.agent_id, set_retention.max_age,
            set_retention.keep_last, set_retention.tier, set_retention.statuses)
    returning p.* into v_policy;
    return v_policy;
end
$$;

comment on function memory.set_retention(text, interval, integer, text, text, text[]) is
'Adds a retention policy for this tenant: data sessions, memories or tool_results, of agent_id (null: every '
'agent), only those in tier and (memories) of statuses if given; an item goes when it is over every limit set: '
'unused for longer than max_age, and not among its agent''s keep_last newest that the policy covers. '
'memory.maintain() archives and removes what the policies select (memory.retention_preview shows it): a session '
'or memory with everything derived from it; a tool result''s words alone (the turn stays, marked '
'metadata.content_removed_at, so a commit of the same conversation still skips it).';

create or replace function memory.drop_retention(policy_id bigint) returns boolean
language sql
as $$
    with dropped as (
        delete from memory.retention_policies as p
        where p.tenant_id = memory.current_tenant() and p.policy_id = drop_retention.policy_id
        returning 1
    )

    select exists (select from dropped)
$$;

comment on function memory.drop_retention(bigint) is
'Removes a retention policy of this tenant; whether there was one.';

create or replace function memory.list_retention_policies()
returns setof memory.retention_policies
language sql
stable
as $$
    select * from memory.retention_policies as p where p.tenant_id = memory.current_tenant() order by p.policy_id
$$;

comment on function memory.list_retention_policies() is 'The retention policies of this tenant.';

-- What a tenant's policies select at a time: each item once, under the first policy that selects it, and
-- the memories extracted from selected sessions alone (they go with them).
drop function if exists memory_internal._retention_items(text, timestamptz);
create or replace function memory_internal._retention_items(tenant text, at timestamptz)
returns table (
    policy_id bigint, data text, agent_id text, session_key bigint, memory_id bigint, turn_id bigint, tier text,
    last_used timestamptz, reason text
)
language sql
stable
as $$
    with items as (
        select case i.item when 'session' then 'sessions' else 'memories' end as data, i.agent_id, i.session_key,
               i.memory_id, null::bigint as turn_id, i.tier, i.status, i.last_used
        from memory_internal._lifecycle_items(tenant, null) as i
        union all
        -- Tool results whose words are still there, in their session's tier, last used when said or recalled.
        select 'tool_results', t.agent_id, t.session_key, null, t.turn_id, s.tier, null,
               greatest(t.created_at, t.last_accessed_at)
        from memory.turns as t
        inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
        where t.tenant_id = tenant and t.role = 'tool' and not t.metadata ? 'content_removed_at'
            and exists (select from memory.retention_policies as p where p.tenant_id = tenant and p.data = 'tool_results')
    ),
    covered as (
        select p.policy_id, p.max_age, p.keep_last, i.*,
               row_number() over (
                   partition by p.policy_id, i.agent_id
                   order by i.last_used desc, coalesce(i.turn_id, i.session_key, i.memory_id) desc
               ) as place
        from memory.retention_policies as p
        inner join items as i
            on i.data = p.data and (p.agent_id is null or i.agent_id = p.agent_id)
            and (p.tier is null or i.tier = p.tier) and (p.statuses is null or i.status = any(p.statuses))
        where p.tenant_id = tenant
    ),
    selected as (
        select distinct on (c.data, coalesce(c.turn_id, c.session_key, c.memory_id))
            c.policy_id, c.data, c.agent_id, c.session_key, c.memory_id, c.turn_id, c.tier, c.last_used,
            concat_ws(' and ',
                      case when c.max_age is not null then format('unused for more than %s', c.max_age) end,
                      case when c.keep_last is not null then format('not among the agent''s newest %s', c.keep_last) end
            ) as reason
        from covered as c
        where (c.max_age is null or c.last_used < at - c.max_age) and (c.keep_last is null or c.place > c.keep_last)
        order by c.data, coalesce(c.turn_id, c.session_key, c.memory_id), c.policy_id
    ),
    -- Memories extracted from the selected sessions' turns alone, as forgetting those sessions removes them.
    extracted as (
        select x.memory_id, (
            select min(s.policy_id)
            from memory.memory_evidence as e
            inner join memory.turns as t on t.tenant_id = e.tenant_id and t.turn_id = e.turn_id
            inner join selected as s on s.data = 'sessions' and s.session_key = t.session_key
            where e.tenant_id = tenant and e.memory_id = x.memory_id
        ) as policy_id
        from memory_internal._extracted_from(tenant, array(
            select t.turn_id from memory.turns as t
            inner join selected as s on s.data = 'sessions' and t.tenant_id = tenant and t.session_key = s.session_key
        )) as x (memory_id)
    )

    -- A tool result of a session that goes goes with it.
    select * from selected as x
    where x.data <> 'tool_results' or not exists (
        select from selected as s where s.data = 'sessions' and s.session_key = x.session_key
    )
    union all
    select e.policy_id, 'memories', m.agent_id, null, m.memory_id, null, m.tier, greatest(m.recorded_at, m.used_at),
           'extracted from sessions that go'
    from extracted as e
    inner join memory.memories as m on m.tenant_id = tenant and m.memory_id = e.memory_id
    where not exists (select from selected as s where s.memory_id = e.memory_id)
$$;

comment on function memory_internal._retention_items(text, timestamptz) is
'Internal: the sessions, memories and tool results a tenant''s retention policies select at a time, with the '
'policy and the reason (memory.retention_preview, memory.maintain).';

create or replace function memory.retention_preview(at timestamptz default pg_catalog.now())
returns table (
    policy_id bigint, data text, agent_id text, session_id text, memory_id bigint, turn_id bigint, tier text,
    last_used timestamptz, reason text
)
language sql
stable
as $$
    select i.policy_id, i.data, i.agent_id, s.session_id, i.memory_id, i.turn_id, i.tier, i.last_used, i.reason
    from memory_internal._retention_items(memory.current_tenant(), retention_preview.at) as i
    left join memory.sessions as s on s.tenant_id = memory.current_tenant() and s.session_key = i.session_key
    order by i.data = 'tool_results', i.data desc, i.agent_id, i.last_used, coalesce(i.turn_id, i.session_key, i.memory_id)
$$;

comment on function memory.retention_preview(timestamptz) is
'The dry run of retention: the sessions, memories and tool results (turn_id) of this tenant that '
'memory.maintain() would archive and remove (at: as if it ran then), each with the policy that selects it and '
'why.';

-- What a tool result said, cleared: its words, chunks (with their vectors), the caller's vector and mentions
-- go; the turn stays with its content's hash (a commit of the same conversation skips it), in its metadata
-- too (content_removed_at, content_sha256: an export of it, committed or imported again, is that turn).
create or replace function memory_internal._clear_tool_results(tenant text, turns bigint[]) returns void
language sql
volatile
as $$
    delete from memory.entity_mentions as e where e.tenant_id = tenant and e.turn_id = any(turns);
    delete from memory.chunks as c where c.tenant_id = tenant and c.turn_id = any(turns);
    update memory.turns as t
    set content = '', client_embedding = null,
        -- (On the row's columns, functions that are immutable: Citus takes no other in an update.)
        metadata = pg_catalog.jsonb_set(
            t.metadata || pg_catalog.jsonb_build_object('content_removed_at', pg_catalog.now()), '{content_sha256}',
            coalesce('"' || encode(t.content_sha256, 'hex') || '"', 'null')::jsonb
        )
    where t.tenant_id = tenant and t.turn_id = any(turns);
$$;

comment on function memory_internal._clear_tool_results(text, bigint[]) is
'Internal: removes what tool results said (words, chunks, mentions), keeping the turns and their content hash '
'(retention of tool_results).';

-- Applies a tenant's retention, at most batch items a run (the least recently used first): archives what
-- its policies select, then removes it (sessions with everything derived from them, memories with the turns
-- that carry their words when no other memory has them, what tool results said). Rows are locked in the
-- order forgets take them (sessions, each agent's session of remembered words last, then memories) and the
-- selection is made again once they are: a session written to meanwhile stays. Runs as the tenant, so that
-- what removal reads of the settings is the tenant's. Returns the archive's id and counts, or null when
-- nothing goes.
create or replace function memory_internal._apply_retention(tenant text, at timestamptz, batch integer)
returns jsonb
language plpgsql
as $$
declare
    v_caller text := pg_catalog.current_setting('memory.tenant_id', true);
    v_policies bigint[];
    v_sessions bigint[];
    v_memories bigint[];
    v_results bigint[];
    v_words bigint[];
    v_entities bigint[];
    v_session bigint;
    v_turns bigint;
    v_chunks bigint;
    v_lines text[];
    v_data bytea;
    v_archive bigint;
begin
    perform pg_catalog.set_config('memory.tenant_id', tenant, true);
    for attempt in 1..2 loop
        select coalesce(array_agg(distinct i.policy_id order by i.policy_id), '{}'),
               coalesce(array_agg(i.session_key order by i.session_key) filter (where i.data = 'sessions'), '{}'),
               coalesce(array_agg(i.memory_id order by i.memory_id) filter (where i.memory_id is not null), '{}'),
               coalesce(array_agg(i.turn_id order by i.turn_id) filter (where i.turn_id is not null), '{}')
        into v_policies, v_sessions, v_memories, v_results
        from (
            select * from memory_internal._retention_items(tenant, at) as x
            where attempt = 1 or x.data = 'sessions' and x.session_key = any(v_sessions) or x.memory_id = any(v_memories)
                or x.turn_id = any(v_results)
            order by x.reason = 'extracted from sessions that go', x.last_used,
                coalesce(x.turn_id, x.session_key, x.memory_id)
            limit batch
        ) as i;
        exit when attempt = 2 or cardinality(v_policies) = 0;
        perform memory_internal._lock_sessions(tenant, v_sessions || array(
            select distinct t.session_key from memory.memories as m
            inner join memory.turns as t on m.tenant_id = t.tenant_id and m.turn_id = t.turn_id
            where m.tenant_id = tenant and m.memory_id = any(v_memories)
        ));
        perform from memory.memories as m
        where m.tenant_id = tenant and m.memory_id = any(v_memories)
        order by m.memory_id
        for update;
    end loop;
    if cardinality(v_policies) = 0 then
        perform pg_catalog.set_config('memory.tenant_id', coalesce(v_caller, ''), true);
        return null;
    end if;
    -- What goes with them, as forgetting them removes it: the memories extracted from these sessions alone,
    -- the turns that carry the words of the memories that go, the entities nothing else mentions.
    v_memories := v_memories || array(
        select x.memory_id from memory_internal._extracted_from(tenant, array(
            select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.session_key = any(v_sessions)
        )) as x (memory_id)
        where x.memory_id <> all(v_memories)
    );
    -- Those memories, then every turn that goes or may, are locked too: a memory remembered with the same
    -- words, or feedback given, meanwhile (each takes a share of the turn's row) is waited for and counted,
    -- or waits for this run and finds the turn gone; it is never removed unseen.
    perform from memory.memories as m
    where m.tenant_id = tenant and m.memory_id = any(v_memories)
    order by m.memory_id
    for update;
    perform from memory.turns as t
    where t.tenant_id = tenant and (
        t.session_key = any(v_sessions) or t.turn_id = any(v_results)
        or t.turn_id in (select m.turn_id from memory.memories as m where m.tenant_id = tenant and m.memory_id = any(v_memories))
    )
    order by t.turn_id
    for update;
    v_words := array(
        select distinct m.turn_id from memory.memories as m
        where m.tenant_id = tenant and m.memory_id = any(v_memories)
            and not exists (
                select from memory.memories as o
                where o.tenant_id = tenant and o.turn_id = m.turn_id and o.memory_id <> all(v_memories)
            )
    );
    v_entities := array(
        select distinct e.entity_id from memory.entity_mentions as e
        where e.tenant_id = tenant and (e.session_key = any(v_sessions) or e.turn_id = any(v_words))
            and not exists (
                select from memory.entity_mentions as o
                where o.tenant_id = tenant and o.entity_id = e.entity_id
                    and o.session_key <> all(v_sessions) and o.turn_id <> all(v_words)
            )
            and not exists (select from memory.entity_states as x where x.tenant_id = tenant and x.entity_id = e.entity_id)
    );
    select count(*), coalesce(sum((select count(*) from memory.chunks as c
                                   where c.tenant_id = tenant and c.turn_id = t.turn_id)), 0)
    into v_turns, v_chunks
    from memory.turns as t
    where t.tenant_id = tenant and (t.session_key = any(v_sessions) or t.turn_id = any(v_words));
    v_lines := array(
        select r::text from memory_internal._export_records(tenant, v_sessions, v_memories, v_entities) as r
    ) || array(select r::text from memory_internal._tool_result_records(tenant, v_results) as r);
    v_data := memory_internal._gzip_lines(v_lines);

    foreach v_session in array v_sessions loop
        perform from memory_internal._forget_session(tenant, v_session);
    end loop;
    delete from memory.memories as m where m.tenant_id = tenant and m.memory_id = any(v_memories);
    perform from memory_internal._forget_turns(tenant, v_words);
    perform memory_internal._clear_tool_results(tenant, v_results);

    insert into memory.archives as a (tenant_id, policies, removed, records, data, sha256)
    values (tenant, v_policies,
            jsonb_build_object('sessions', cardinality(v_sessions), 'turns', v_turns, 'chunks', v_chunks,
                               'memories', cardinality(v_memories), 'entities', cardinality(v_entities),
                               'tool_results', cardinality(v_results)),
            cardinality(v_lines), v_data, sha256(v_data))
    returning a.archive_id into v_archive;
    perform pg_catalog.set_config('memory.tenant_id', coalesce(v_caller, ''), true);
    return jsonb_build_object('archive_id', v_archive, 'sessions', cardinality(v_sessions), 'turns', v_turns,
                              'memories', cardinality(v_memories), 'tool_results', cardinality(v_results));
end
$$;

comment on function memory_internal._apply_retention(text, timestamptz, integer) is
'Internal: archives at most batch of the items a tenant''s retention policies select at a time, then removes '
'them (memory.maintain).';

create or replace function memory.list_archives()
returns table (
    archive_id bigint, created_at timestamptz, created_by text, policies bigint[], removed jsonb, records bigint,
    bytes integer, sha256 text, dropped_at timestamptz
)
language sql
stable
as $$
    select a.archive_id, a.created_at, a.created_by, a.policies, a.removed, a.records, octet_length(a.data),
           encode(a.sha256, 'hex'), a.dropped_at
    from memory.archives as a
    where a.tenant_id = memory.current_tenant()
    order by a.archive_id
$$;

comment on function memory.list_archives() is
'The archives of this tenant''s retention, oldest first: when, by whom, under which policies, how much went, '
'the size of the gzipped data (null once dropped) and its sha256.';

create or replace function memory.archive(archive_id bigint) returns bytea
language sql
stable
as $$
    select a.data from memory.archives as a where a.tenant_id = memory.current_tenant() and a.archive_id = archive.archive_id
$$;

comment on function memory.archive(bigint) is
'The data of an archive of this tenant: a gzipped JSON lines file that `agent-memory import jsonl` reads back '
'(null once dropped).';

-- Drops an archive's data and keeps its row as the record (only the API writes archives, so none can be
-- forged or altered).
create or replace function memory.drop_archive(archive_id bigint) returns boolean
language sql
as $$
    with dropped as (
        update memory.archives as a set data = null, dropped_at = pg_catalog.now()
        where a.tenant_id = memory.current_tenant() and a.archive_id = drop_archive.archive_id and a.data is not null
        returning 1
    )

    select exists (select from dropped)
$$;

comment on function memory.drop_archive(bigint) is
'Drops the data of an archive of this tenant (once saved elsewhere), keeping its row with the counts and '
'sha256 as the record; whether it held data.';
