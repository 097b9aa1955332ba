-- Fleet sharing: what one agent shares, every agent of its tenant sees. A memory is shared by
-- memory.remember(shared => true) or memory.share; what was said is shared by the setting share_sessions.
-- Recall, bootstrap and context_for_task for one agent include what the others share, with shared_by
-- naming the agent. Commits and shared memories are announced on a channel of their tenant.

-- Whether a turn (or, turn_id null, a session) of agent owner is in the scope of a recall for agent (null:
-- every agent): its own, the turn of a memory another agent shares (q.fleet_turns), or another agent's
-- conversation when sessions are shared (q.fleet_sessions; 'remembered' sessions hold memories, shared
-- one by one).
create or replace function memory_internal._visible_to(
    agent text, q memory_internal._recall_query, owner text, session_key bigint, turn_id bigint
) returns boolean
language sql
immutable
as $$
    select agent is null or owner = agent or turn_id = any(q.fleet_turns)
        or q.fleet_sessions and session_key <> all(q.remembered_sessions)
$$;

comment on function memory_internal._visible_to(text, memory_internal._recall_query, text, bigint, bigint) is
'Internal: whether a turn (turn_id null: a session) of one agent is in the scope of a recall for another '
'(its own, a memory shared with the fleet, or a conversation when share_sessions).';

-- What the other agents of a tenant share with agent, for a recall (null agent: every agent is in scope).
create or replace function memory_internal._fleet_scope(
    inout q memory_internal._recall_query, tenant text, agent text, settings jsonb
)
language plpgsql
stable
as $$
begin
    if agent is null then
        return;
    end if;
    q.fleet_turns := array(
        select m.turn_id from memory.memories as m
        where m.tenant_id = tenant and m.shared and m.agent_id <> agent
    );
    q.fleet_sessions := coalesce((settings ->> 'share_sessions')::boolean, false);
    q.remembered_sessions := array(
        select s.session_key from memory.sessions as s
        where q.fleet_sessions and s.tenant_id = tenant and s.session_id = 'remembered'
    );
end
$$;

comment on function memory_internal._fleet_scope(memory_internal._recall_query, text, text, jsonb) is
'Internal: a recall query with what the other agents of the tenant share with its agent (the turns of their '
'shared memories, and whether their sessions are shared).';

-- The agent that shared an item with agent (null when it is agent's own, or every agent was asked for).
create or replace function memory_internal._shared_by(agent text, owner text) returns text
language sql
immutable
as $$ select case when agent is not null and owner <> agent then owner end $$;

comment on function memory_internal._shared_by(text, text) is
'Internal: who shared an item with an agent: its owner when that is another agent, else null.';

-- The channel a tenant's notifications go to: named with the owner's notification key, so that no role
-- can tell (and listen to, or notify) another tenant's. LISTEN itself checks no privilege. This and the two
-- functions that announce are plpgsql, which keeps its plans for the session: as `language sql` called from a
-- commit, each body was planned again on every call (a tenth of a commit's time).
create or replace function memory_internal._channel(tenant text) returns text
language plpgsql
stable
as $$
begin
    return (
        select 'agent_memory_' || left(encode(sha256(convert_to(k.value || chr(31) || tenant, 'UTF8')), 'hex'), 40)
        from memory_internal._secrets as k
        where k.name = 'notification_key'
    );
end
$$;

comment on function memory_internal._channel(text) is
'Internal: the name of a tenant''s notification channel (a hash of the notification key and the tenant).';

create or replace function memory.notification_channel() returns text
language plpgsql
stable
as $$
declare
    v_channel text := memory_internal._channel(memory.current_tenant());
begin
    if v_channel is null then
        raise exception 'agent_memory: this database has no notification key'
            using hint = 'alter extension agent_memory update', errcode = 'object_not_in_prerequisite_state';
    end if;
    return v_channel;
end
$$;

comment on function memory.notification_channel() is
'The channel to LISTEN on for this tenant''s notifications, sent when a transaction commits: {"event": '
'"session", session_id, agent_id, turns (added), shared} for a commit and {"event": "memory", memory_id, '
'agent_id, kind, shared, outcome} when a memory is remembered, shared or unshared. They carry ids, never '
'content, and no other tenant''s. Not on a standby (NOTIFY is not replicated), nor when the administrator''s '
'setting notifications is off.';

-- Announces an event of a tenant (unless the setting notifications is off); PostgreSQL delivers it when (and
-- if) the transaction commits.
create or replace function memory_internal._notify(tenant text, event jsonb, enabled boolean) returns void
language plpgsql
volatile
as $$
begin
    if enabled then
        perform pg_catalog.pg_notify(memory_internal._channel(tenant), event::text);
    end if;
end
$$;

comment on function memory_internal._notify(text, jsonb, boolean) is
'Internal: sends an event to a tenant''s notification channel (delivered at commit) when enabled (the setting '
'notifications, as the caller read it).';

-- A commit's announcement, for a caller to react to once it is durable: new turns of a conversation (a
-- memory's are announced as the memory).
create or replace function memory_internal._notify_commit(
    tenant text, session_id text, agent_id text, turns integer, settings jsonb
)
returns void
language plpgsql
volatile
as $$
begin
    if turns > 0 and session_id <> 'remembered' then
        perform memory_internal._notify(tenant, jsonb_build_object(
            'event', 'session', 'session_id', session_id, 'agent_id', agent_id, 'turns', turns,
            'shared', (settings -> 'share_sessions')::boolean
        ), (settings -> 'notifications')::boolean);
    end if;
end
$$;

comment on function memory_internal._notify_commit(text, text, text, integer, jsonb) is
'Internal: announces a commit''s new turns on its tenant''s channel (not those of session ''remembered''), '
'with the settings commit read (notifications, share_sessions).';

-- A memory's announcement: what changed and whether the fleet shares it.
create or replace function memory_internal._notify_memory(tenant text, memory_id bigint, outcome text)
returns void
language plpgsql
volatile
as $$
#variable_conflict use_column
begin
    perform memory_internal._notify(tenant, jsonb_build_object(
        'event', 'memory', 'memory_id', m.memory_id, 'agent_id', m.agent_id, 'kind', m.kind, 'shared', m.shared,
        'outcome', outcome
    ), (memory.setting('notifications'))::boolean)
    from memory.memories as m
    where m.tenant_id = tenant and m.memory_id = _notify_memory.memory_id;
end
$$;

comment on function memory_internal._notify_memory(text, bigint, text) is
'Internal: announces a memory remembered, shared or unshared on its tenant''s channel.';

create or replace function memory.share(memory_id bigint, shared boolean default true)
returns setof memory.memory_items
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_was boolean;
begin
    if share.shared is null then
        raise exception 'agent_memory: shared must be true or false' using errcode = 'null_value_not_allowed';
    end if;
    select m.shared into v_was from memory.memories as m
    where m.tenant_id = v_tenant and m.memory_id = share.memory_id
    for update;
    if not found then
        raise exception 'agent_memory: no memory % in tenant "%"', share.memory_id, v_tenant
            using errcode = 'no_data_found';
    end if;
    if v_was <> share.shared then
        update memory.memories as m set shared = share.shared
        where m.tenant_id = v_tenant and m.memory_id = share.memory_id;
        perform memory_internal._notify_memory(
            v_tenant, share.memory_id, case when share.shared then 'shared' else 'unshared' end
        );
    end if;
    return query select i.* from memory_internal._memory_items(v_tenant, array[share.memory_id]) as i;
end
$$;

comment on function memory.share(bigint, boolean) is
'Shares a memory with every agent of its tenant (shared false: keeps it to its agent again): recall, '
'bootstrap and context_for_task for another agent then include it, with shared_by naming its agent. A new '
'version under its key stays shared. Announced on memory.notification_channel(). Returns the memory.';
