-- Remembering: curated memories created and updated. A memory's words are a turn of the agent's session
-- 'remembered' (one turn per distinct text), enriched as it is remembered (enrich => 'now'), so the next
-- recall, even in the same transaction, finds it. The same claim remembered again is the same memory; a
-- new claim under a key the agent already holds supersedes the one before it, which keeps its period.

comment on type memory.remembered is
'What memory.remember returns: the memory (the columns of memory.memory_items) and outcome: created, '
'updated (it superseded a version of its key, or a memory whose claim it changes), unchanged (the same '
'claim was already held) or merged (a paraphrase of a memory held, which gained its evidence).';

-- Subject names as stored: normalized like entity names, empty ones dropped, each once, sorted.
create or replace function memory_internal._memory_subjects(subjects text[]) returns text[]
language sql
immutable parallel safe
as $$
    select coalesce(array_agg(distinct n.normalized order by n.normalized), '{}')
    from unnest(subjects) as s (name)
    cross join lateral (select memory.normalize_entity(s.name) as normalized) as n
    where n.normalized <> ''
$$;

comment on function memory_internal._memory_subjects(text[]) is
'Internal: subject names normalized as entity names are (empty ones dropped), distinct and sorted.';

-- The canonical form of a claim: its kind, its subjects and its words normalized as entity names are
-- (case, look-alikes, white space, edge punctuation), hashed. Equal claims are one memory.
create or replace function memory_internal._memory_canonical(kind text, subjects text[], content text) returns bytea
language sql
immutable parallel safe
as $$
    select sha256(convert_to(
        kind || chr(31) || array_to_string(subjects, chr(30)) || chr(31) || memory.normalize_entity(content), 'UTF8'
    ))
$$;

comment on function memory_internal._memory_canonical(text, text[], text) is
'Internal: the hash that makes a repeated claim (same kind, subjects and normalized words) one memory.';

-- The turn of an agent's session 'remembered' with this message id, or null.
create or replace function memory_internal._remembered_turn(agent_id text, message_id text) returns bigint
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    -- A value, not a call, in its statement: Citus routes a statement by the tenant it names.
    v_tenant text := memory.current_tenant();
begin
    return (
        select t.turn_id
        from memory.turns as t
        inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
        where s.tenant_id = v_tenant and s.agent_id = _remembered_turn.agent_id
            and s.session_id = 'remembered' and t.message_id = _remembered_turn.message_id
    );
end
$$;

comment on function memory_internal._remembered_turn(text, text) is
'Internal: the turn of an agent''s session ''remembered'' with a message id, or null.';

-- The turn that carries a memory's words: committed to the agent's session 'remembered', its id the hash
-- of the text and the key (the same text under the same key, or without one, is one turn; under two keys,
-- two, so that recall finds each memory). A failed enrichment (an endpoint down) leaves the turn queued.
create or replace function memory_internal._memory_turn(
    content text, kind text, agent_id text, metadata jsonb, enrich text, key text default null
)
returns bigint
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_id text := 'remembered:' || encode(sha256(convert_to(coalesce(_memory_turn.key || chr(31), '') || content, 'UTF8')), 'hex');
    v_messages jsonb := jsonb_build_array(jsonb_build_object(
        'role', 'user', 'content', content, 'id', v_id, 'metadata', metadata || jsonb_build_object('kind', kind)
    ));
    v_turn bigint;
begin
    -- Words remembered before are that turn, and the session is left as it is. Before 0.4.0 the id was the
    -- hash of the text alone: such a turn is the key's too while no memory of another key (or none) has it.
    v_turn := memory_internal._remembered_turn(agent_id, v_id);
    if v_turn is null and _memory_turn.key is not null then
        v_turn := memory_internal._remembered_turn(
            agent_id, 'remembered:' || encode(sha256(convert_to(content, 'UTF8')), 'hex')
        );
        if exists (
            select from memory.memories as m
            where m.tenant_id = v_tenant and m.turn_id = v_turn and m.key is distinct from _memory_turn.key
        ) then
            v_turn := null;
        end if;
    end if;
    if v_turn is not null then
        return v_turn;
    end if;
    begin
        -- Remembering is the caller saying so: the session comes back even after a forget.
        perform from memory.commit('remembered', v_messages::json, agent_id => agent_id, source => 'remember',
                                   enrich => enrich, allow_forgotten => true);
    exception when others then
        if enrich is distinct from 'now' then
            raise;
        end if;
        raise notice 'agent_memory: remembered, but enriching it failed (%); it is queued instead', sqlerrm;
        perform from memory.commit('remembered', v_messages::json, agent_id => agent_id, source => 'remember',
                                   enrich => 'queue', allow_forgotten => true);
    end;
    return memory_internal._remembered_turn(agent_id, v_id);
end
$$;

comment on function memory_internal._memory_turn(text, text, text, jsonb, text, text) is
'Internal: the key of the turn of session ''remembered'' that carries a memory''s words under its key (committed '
'if new).';

-- The turn ids a caller gave as evidence, checked: every one must be a turn of this tenant.
create or replace function memory_internal._evidence_turns(turn_ids bigint[]) returns bigint[]
language plpgsql
stable
as $$
declare
    -- A value, not a call, in the statement: Citus routes a statement by the tenant it names.
    v_tenant text := memory.current_tenant();
    -- (Read first: Citus sends no statement that reads a list beside a turn it looks up for each.)
    v_turns bigint [] := array(
        select t.turn_id from memory.turns as t where t.tenant_id = v_tenant and t.turn_id = any(turn_ids)
    );
    v_missing bigint;
begin
    select e.id into v_missing
    from unnest(coalesce(turn_ids, '{}')) as e (id)
    where e.id is null or e.id <> all(v_turns)
    limit 1;
    if found then
        raise exception 'agent_memory: evidence turn % does not exist', coalesce(v_missing::text, 'null')
            using errcode = 'foreign_key_violation';
    end if;
    return (select coalesce(array_agg(distinct e.id order by e.id), '{}') from unnest(coalesce(turn_ids, '{}')) as e (id));
end
$$;

comment on function memory_internal._evidence_turns(bigint[]) is
'Internal: the distinct turn ids given as a memory''s evidence, each checked to be a turn of the tenant.';

-- Turns added to a memory's evidence (those it has already are left as they are).
create or replace function memory_internal._add_evidence(tenant text, memory_id bigint, turns bigint[]) returns void
language plpgsql
as $$
#variable_conflict use_column
begin
    insert into memory.memory_evidence (tenant_id, memory_id, turn_id)
    select tenant, _add_evidence.memory_id, e.turn_id from unnest(turns) as e (turn_id)
    order by e.turn_id
    on conflict do nothing;
end
$$;

comment on function memory_internal._add_evidence(text, bigint, bigint[]) is
'Internal: adds turns to a memory''s evidence (memory.memory_evidence).';

-- Takes the turn of the writers of one claim of a tenant, held to the end of the transaction: a row of
-- memory_internal._locks (one of 1,024 per tenant, by a hash of the claim), which no other role can lock,
-- and which only the tenant's own transactions share.
create or replace function memory_internal._lock_claim(tenant text, claim text) returns void
language plpgsql
as $$
declare
    v_name text := 'claim ' || (pg_catalog.hashtextextended(claim, 0) & 1023);
begin
    perform from memory_internal._locks as l where l.tenant_id = tenant and l.name = v_name for update;
    if not found then
        insert into memory_internal._locks as l (tenant_id, name) values (tenant, v_name) on conflict do nothing;
        perform from memory_internal._locks as l where l.tenant_id = tenant and l.name = v_name for update;
    end if;
end
$$;

comment on function memory_internal._lock_claim(text, text) is
'Internal: waits for, then holds to the end of the transaction, the turn of the writers of one claim of a tenant.';

-- The memory an agent holds for a claim: current (under the key, when there is one), or awaiting review
-- when the claim is a proposal (pending). Writers of one key (or, without a key, of one claim) of an agent
-- take turns: this takes the lock they share, held to the end of the transaction.
create or replace function memory_internal._held_claim(
    tenant text, agent_id text, canonical bytea, key text, pending boolean
) returns bigint
language plpgsql
as $$
#variable_conflict use_column
begin
    perform memory_internal._lock_claim(
        tenant, concat_ws(chr(31), _held_claim.agent_id, coalesce(_held_claim.key, encode(_held_claim.canonical, 'hex')))
    );
    return (
        select m.memory_id from memory.memories as m
        where m.tenant_id = tenant and m.agent_id = _held_claim.agent_id and m.canonical = _held_claim.canonical
            and m.valid_to is null and (_held_claim.key is null or m.key = _held_claim.key)
            and (m.status in ('active', 'ongoing') or pending and m.status = 'pending')
        order by m.status = 'pending', m.memory_id
        limit 1
    );
end
$$;

comment on function memory_internal._held_claim(text, text, bytea, text, boolean) is
'Internal: the memory an agent holds for a claim (current, or pending for a proposal), after taking the '
'lock writers of the claim share.';

-- What remember refuses, each with an error that names the problem.
drop function if exists memory_internal._check_remember(
    text, text, text, jsonb, text, double precision, double precision, text
);
create or replace function memory_internal._check_remember(
    content text, kind text, agent_id text, metadata jsonb, key text, importance double precision,
    confidence double precision, status text, run_id text
) returns void
language plpgsql
stable
as $$
begin
    if content is null or content = '' then
        raise exception 'agent_memory: remember needs some content' using errcode = 'invalid_parameter_value';
    end if;
    if kind is null or not kind = any (memory_internal._memory_kinds()) then
        raise exception 'agent_memory: remember kind must be one of %, got %',
            array_to_string(memory_internal._memory_kinds(), ', '), coalesce(kind, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    if status is null or status not in ('active', 'ongoing', 'pending') then
        raise exception 'agent_memory: remember status must be active, ongoing or pending, got %',
            coalesce(status, 'null') using errcode = 'invalid_parameter_value';
    end if;
    if status = 'pending' and key is not null then
        raise exception 'agent_memory: a pending memory cannot have a key'
            using errcode = 'invalid_parameter_value',
                  hint = 'remember it active under its key, or pending without one and approve it';
    end if;
    if agent_id is null then
        raise exception 'agent_memory: remember needs an agent_id' using errcode = 'invalid_parameter_value';
    end if;
    if metadata is null or jsonb_typeof(metadata) <> 'object' then
        raise exception 'agent_memory: remember metadata must be a JSON object' using errcode = 'invalid_parameter_value';
    end if;
    if importance is null or importance not between 0 and 1
        or confidence is null or confidence not between 0 and 1 then
        raise exception 'agent_memory: importance and confidence must be between 0 and 1, got % and %',
            coalesce(importance::text, 'null'), coalesce(confidence::text, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    if key is not null and nullif(btrim(key), '') is null then
        raise exception 'agent_memory: a memory key cannot be blank' using errcode = 'invalid_parameter_value';
    end if;
    perform memory_internal._check_run(run_id);
end
$$;

comment on function memory_internal._check_remember(
    text, text, text, jsonb, text, double precision, double precision, text, text
) is
'Internal: refuses remember''s arguments that make no memory (no content, an unknown kind or status, a '
'pending memory with a key, no agent, metadata not an object, importance or confidence outside 0-1, a blank '
'key or run), naming the problem.';

create or replace function memory.remember(
    content text, kind text default 'fact', agent_id text default 'default', metadata jsonb default '{}',
    enrich text default 'now', key text default null, subjects text[] default '{}', tags text[] default '{}',
    importance double precision default 0.5, confidence double precision default 1, valid_from timestamptz default null,
    evidence bigint[] default '{}', status text default 'active', shared boolean default null,
    run_id text default null
) returns setof memory.remembered
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_text text := btrim(remember.content);
    v_key text := nullif(btrim(remember.key), '');
    v_from timestamptz := coalesce(remember.valid_from, pg_catalog.now());
    v_subjects text [];
    v_canonical bytea;
    v_evidence bigint [];
    v_same bigint;
    v_before bigint;
    v_next timestamptz;
    v_turn bigint;
    v_id bigint;
    v_outcome text;
    v_settings jsonb := memory_internal._settings_json();
    v_paraphrased record;
    v_vector vector;
    v_shared boolean;
begin
    perform memory_internal._check_remember(v_text, remember.kind, remember.agent_id, remember.metadata, remember.key,
                                            remember.importance, remember.confidence, remember.status, remember.run_id);
    v_subjects := memory_internal._memory_subjects(coalesce(remember.subjects, '{}'));
    v_canonical := memory_internal._memory_canonical(remember.kind, v_subjects, v_text);
    v_evidence := memory_internal._evidence_turns(remember.evidence);
    -- The same claim, current (or, for a proposal, awaiting review), is the same memory: nothing changes.
    v_same := memory_internal._held_claim(v_tenant, remember.agent_id, v_canonical, v_key, remember.status = 'pending');
    select null::bigint as memory_id, null::double precision as similarity into v_paraphrased;
    if v_same is null and (v_settings ->> 'memory_dedup' <> 'off' or v_settings ->> 'memory_supersede' <> 'off') then
        v_vector := memory_internal._claim_vector(v_text, v_settings);
    end if;
    if v_same is null and v_settings ->> 'memory_dedup' <> 'off' then
        select * into v_paraphrased
        from memory_internal._paraphrased_memory(v_tenant, remember.agent_id, remember.kind, v_key, v_text, v_vector,
                                                 v_settings);
    end if;
    if v_same is not null then
        v_id := v_same;
        v_outcome := 'unchanged';
    elsif v_paraphrased.memory_id is not null and v_settings ->> 'memory_dedup' = 'merge' then
        -- A paraphrase of a memory held is that memory, with the claim's evidence added.
        perform memory_internal._add_evidence(v_tenant, v_paraphrased.memory_id, v_evidence);
        insert into memory.memory_merges (tenant_id, memory_id, agent_id, kind, content, similarity, merged)
        values (v_tenant, v_paraphrased.memory_id, remember.agent_id, remember.kind, v_text, v_paraphrased.similarity,
                true);
        v_id := v_paraphrased.memory_id;
        v_outcome := 'merged';
    else
        v_turn := memory_internal._memory_turn(v_text, remember.kind, remember.agent_id, remember.metadata,
                                               remember.enrich, v_key);
        -- Under a key, the new claim is placed in the key's history by valid_from: the version before it
        -- ends where it begins, and a backdated one ends where the next begins.
        if v_key is not null then
            select m.memory_id into v_before from memory.memories as m
            where m.tenant_id = v_tenant and m.agent_id = remember.agent_id and m.key = v_key
                and m.status <> 'retracted' and m.valid_from <= v_from
            order by m.valid_from desc, m.memory_id desc
            limit 1;
            select min(m.valid_from) into v_next from memory.memories as m
            where m.tenant_id = v_tenant and m.agent_id = remember.agent_id and m.key = v_key
                and m.status <> 'retracted' and m.valid_from > v_from;
            update memory.memories as m
            set valid_to = v_from, status = case when m.status in ('active', 'ongoing') then 'superseded' else m.status end
            where m.tenant_id = v_tenant and m.memory_id = v_before and (m.valid_to is null or m.valid_to > v_from);
        end if;
        -- Shared as the version before it unless shared says otherwise (read here: Citus takes no subquery in values).
        v_shared := coalesce(remember.shared, (select m.shared from memory.memories as m
                                               where m.tenant_id = v_tenant and m.memory_id = v_before), false);
        insert into memory.memories (tenant_id, agent_id, kind, content, key, subjects, tags, importance, confidence,
                                     status, valid_from, valid_to, canonical, turn_id, supersedes, metadata, shared,
                                     run_id)
        values (v_tenant, remember.agent_id, remember.kind, v_text, v_key, v_subjects,
                coalesce(remember.tags, '{}'), remember.importance, remember.confidence,
                case when v_next is null then remember.status else 'superseded' end, v_from, v_next, v_canonical,
                v_turn, v_before, remember.metadata, v_shared, remember.run_id)
        returning memory.memories.memory_id into v_id;
        perform memory_internal._add_evidence(v_tenant, v_id, v_evidence);
        -- The version after a backdated one now follows it.
        update memory.memories as m set supersedes = v_id
        where v_next is not null and m.tenant_id = v_tenant and m.agent_id = remember.agent_id and m.key = v_key
            and m.status <> 'retracted' and m.valid_from = v_next;
        v_outcome := case when v_before is null and v_next is null then 'created' else 'updated' end;
        -- Without a key, a claim that changes what a held memory states supersedes it (memory_supersede).
        if v_key is null and memory_internal._supersede(v_tenant, v_id, v_vector, v_settings) is not null then
            v_outcome := 'updated';
        end if;
        -- Shadow mode: the merge it would have made, recorded only.
        if v_paraphrased.memory_id is not null then
            insert into memory.memory_merges (tenant_id, memory_id, agent_id, kind, content, similarity, merged,
                                              created_memory_id)
            values (v_tenant, v_paraphrased.memory_id, remember.agent_id, remember.kind, v_text,
                    v_paraphrased.similarity, false, v_id);
        end if;
    end if;
    -- A claim held already, said again, is as certain as the more certain of the two sayings; the same claim
    -- has the metadata given with it too (a paraphrase keeps its own).
    update memory.memories as m
    set confidence = greatest(m.confidence, remember.confidence),
        metadata = case when v_outcome = 'unchanged' then m.metadata || remember.metadata else m.metadata end,
        shared = coalesce(remember.shared, m.shared)
    where v_outcome in ('unchanged', 'merged') and m.tenant_id = v_tenant and m.memory_id = v_id
        and (m.confidence < remember.confidence
             or v_outcome = 'unchanged' and m.metadata || remember.metadata <> m.metadata
             or m.shared <> remember.shared);
    -- Announced when something changed: a memory remembered the same again is not news.
    if v_outcome <> 'unchanged' or found then
        perform memory_internal._notify_memory(v_tenant, v_id, v_outcome);
    end if;
    return query select i.*, v_outcome from memory_internal._memory_items(v_tenant, array[v_id]) as i;
end
$$;

comment on function memory.remember(
    text, text, text, jsonb, text, text, text[], text[], double precision, double precision, timestamptz, bigint[],
    text, boolean, text
) is
'Keeps a memory of an agent: a fact, preference, rule, decision, skill, event, observation or task, with '
'optional key, subjects (normalized as entity names), tags, importance and confidence (0-1), valid_from '
'(default now), evidence (turn ids it came from) and status (active; ongoing for work in progress; pending '
'for a proposal awaiting review, without a key, which recall leaves out until memory.approve). The '
'same claim (kind, subjects and normalized words) remembered again is the same memory (outcome '
'unchanged; the metadata given adds its keys to the memory''s). A different claim under a key the agent '
'holds supersedes the current one, which ends at valid_from (outcome updated); a backdated one takes its '
'place in the key''s history. Its words are a turn '
'of session ''remembered'', enriched now by default (enrich: now, queue or none) and recalled like any '
'turn. A paraphrase of a memory the agent holds (setting memory_dedup: vectors within '
'memory_dedup_threshold, the same numbers, names and polarity) is merged into it (outcome merged, logged in '
'memory.memory_merges); a claim held already, said again with more confidence, raises the memory''s. '
'Without a key, a claim that changes what a memory the agent holds states ("I '
'switched from vim to helix" after "My editor is vim") supersedes it (setting memory_supersede; outcome '
'updated; why in memory.memory_supersessions), unless it is less certain than that memory. Returns the '
'memory and the outcome: created, updated, unchanged or merged. shared: shared with every agent of the '
'tenant (memory.share; null: as the version of its key it supersedes, else not shared). A change is '
'announced on memory.notification_channel(). run_id: the run (one task or process of the agent) it is '
'remembered in, which recall, bootstrap and list_memories can keep to.';

-- Facts remembered before memories had a table of their own (0.2.0) become memories, once.
with remembered as (
    select
        t.tenant_id,
        s.agent_id,
        t.turn_id,
        t.created_at,
        btrim(t.content) as content,
        coalesce((
            select k.kind from unnest(memory_internal._memory_kinds()) as k (kind)
            where k.kind = t.metadata ->> 'kind'
        ), 'fact') as kind
    from memory.turns as t
    inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
    where
        s.source = 'remember' and btrim(t.content) <> ''
        and not exists (
            select from memory.memories as m
            where m.tenant_id = t.tenant_id and m.turn_id = t.turn_id
        )
)

insert into memory.memories (tenant_id, agent_id, kind, content, canonical, turn_id, valid_from, recorded_at)
select
    r.tenant_id,
    r.agent_id,
    r.kind,
    r.content,
    memory_internal._memory_canonical(r.kind, '{}', r.content) as canonical,
    r.turn_id,
    r.created_at as valid_from,
    r.created_at as recorded_at
from remembered as r
on conflict do nothing;
