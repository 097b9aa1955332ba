-- Tiers: every session and curated memory is hot, warm or cold. Its importance (a memory's own, a
-- session's the setting session_importance) decays with the days since it was last used (written,
-- returned by recall, judged helpful): at the hot half-life while it is at least tier_warm_below, then at
-- the warm one while at least tier_cold_below, then at the cold one. Maintenance moves items down a tier
-- once their decayed importance falls below tier_warm_below or tier_cold_below, and when an agent has
-- more than tier_hot_capacity hot or tier_warm_capacity warm items (the least important go first, the
-- least recently used first among equals). Recall and helpful feedback move items back to hot. Recall
-- leaves cold items out unless its tiers say otherwise; tier and decayed importance are recall signals.

-- Importance halved every tier_hot_half_life_days without use down to tier_warm_below, then every
-- tier_warm_half_life_days down to tier_cold_below, then every tier_cold_half_life_days: one curve, so the
-- tier it puts an item in depends on how long it has gone unused, not on how often maintenance ran. The
-- exponent is capped where the value is 0 in all but name (0.5 ^ 1000): a float underflow is an error.
create or replace function memory.decayed_importance(
    importance double precision, last_used timestamptz, at timestamptz, settings jsonb
) returns double precision
language plpgsql
immutable parallel safe
as $$
declare
    v_days double precision := greatest(0, extract(epoch from at - last_used) / 86400.0);
    v_hot_half_life double precision := (settings ->> 'tier_hot_half_life_days')::double precision;
    v_warm_half_life double precision := (settings ->> 'tier_warm_half_life_days')::double precision;
    v_cold_half_life double precision := (settings ->> 'tier_cold_half_life_days')::double precision;
    v_warm_below double precision := (settings ->> 'tier_warm_below')::double precision;
    v_cold_below double precision := (settings ->> 'tier_cold_below')::double precision;
    -- How long each stretch lasts, and the value it leaves off at.
    v_hot_left double precision := least(importance, v_warm_below);
    v_warm_left double precision := least(v_hot_left, v_cold_below);
    v_hot_days double precision := case when importance <= v_warm_below then 0
                                        when v_warm_below <= 0 then 'infinity'
                                        else v_hot_half_life * pg_catalog.ln(importance / v_warm_below) / pg_catalog.ln(2) end;
    v_warm_days double precision := case when v_hot_left <= v_cold_below then 0
                                         when v_cold_below <= 0 then 'infinity'
                                         else v_warm_half_life * pg_catalog.ln(v_hot_left / v_cold_below) / pg_catalog.ln(2) end;
begin
    return case
        when v_days <= v_hot_days
            then importance * pg_catalog.power(0.5, least(1000, v_days / v_hot_half_life))
        when v_days <= v_hot_days + v_warm_days
            then v_hot_left * pg_catalog.power(0.5, least(1000, (v_days - v_hot_days) / v_warm_half_life))
        else v_warm_left
             * pg_catalog.power(0.5, least(1000, (v_days - v_hot_days - v_warm_days) / v_cold_half_life))
    end;
end
$$;

comment on function memory.decayed_importance(double precision, timestamptz, timestamptz, jsonb) is
'The importance left after the days from last_used to at without use: halved every tier_hot_half_life_days '
'down to tier_warm_below, then every tier_warm_half_life_days down to tier_cold_below, then every '
'tier_cold_half_life_days.';

-- A session or memory as tiers see it: its tier, importance and when it was last used. The session
-- that holds an agent's memories' words ('remembered') is not an item: each memory is.
create or replace view memory.tier_items as
select
    'session' as item,
    s.agent_id,
    s.session_id,
    null::bigint as memory_id,
    s.tier,
    s.tier_since,
    (memory.setting('session_importance') #>> '{}')::double precision as importance,
    greatest(s.updated_at, s.used_at) as last_used,
    memory.decayed_importance(
        (memory.setting('session_importance') #>> '{}')::double precision, greatest(s.updated_at, s.used_at),
        pg_catalog.now(), (select pg_catalog.jsonb_object_agg(x.key, x.value) from memory.settings as x)
    ) as decayed_importance
from memory.sessions as s
where s.tenant_id = (select memory.current_tenant()) and s.session_id <> 'remembered'
union all
select
    'memory' as item,
    m.agent_id,
    null as session_id,
    m.memory_id,
    m.tier,
    m.tier_since,
    m.importance,
    greatest(m.recorded_at, m.used_at) as last_used,
    memory.decayed_importance(
        m.importance, greatest(m.recorded_at, m.used_at), pg_catalog.now(),
        (select pg_catalog.jsonb_object_agg(x.key, x.value) from memory.settings as x)
    ) as decayed_importance
from memory.memories as m
where m.tenant_id = (select memory.current_tenant());

-- The items tiers and retention rank: each session but an agent's session 'remembered' (whose memories
-- are items each), of importance session_importance, and each memory, with its tier, status and last use.
create or replace function memory_internal._lifecycle_items(tenant text, session_importance double precision)
returns table (
    item text, agent_id text, session_key bigint, memory_id bigint, tier text, importance double precision,
    status text, last_used timestamptz
)
language sql
stable
as $$
    select 'session', s.agent_id, s.session_key, null::bigint, s.tier, session_importance, null::text,
           greatest(s.updated_at, s.used_at)
    from memory.sessions as s
    where s.tenant_id = tenant and s.session_id <> 'remembered'
    union all
    select 'memory', m.agent_id, null, m.memory_id, m.tier, m.importance, m.status, greatest(m.recorded_at, m.used_at)
    from memory.memories as m
    where m.tenant_id = tenant
$$;

comment on function memory_internal._lifecycle_items(text, double precision) is
'Internal: a tenant''s sessions (but ''remembered'') and memories with tier, importance, status and last use, '
'as tiers and retention rank them.';

-- The moves maintenance would make in a tenant's tiers at a time, with these settings: down by decay
-- first, then down by each agent's capacity, most decayed (then least recently used) first. Never up:
-- use moves items up. last_used and tier are as read, so that applying a move can check nothing changed.
create or replace function memory_internal._tier_moves(tenant text, at timestamptz, settings jsonb)
returns table (
    item text, agent_id text, session_key bigint, memory_id bigint, tier text, new_tier text,
    decayed_importance double precision, last_used timestamptz, reason text
)
language sql
stable
as $$
    with items as (
        select * from memory_internal._lifecycle_items(tenant, (settings ->> 'session_importance')::double precision)
    ),
    decayed as (
        select i.*, memory.decayed_importance(i.importance, i.last_used, at, settings) as decayed,
               array_position(array['hot', 'warm', 'cold'], i.tier) as level
        from items as i
    ),
    -- By decay: below tier_cold_below is cold, below tier_warm_below warm.
    by_decay as (
        select d.*, greatest(d.level, case
            when d.decayed < (settings ->> 'tier_cold_below')::double precision then 3
            when d.decayed < (settings ->> 'tier_warm_below')::double precision then 2
            else 1
        end) as decay_level
        from decayed as d
    ),
    -- By capacity, each agent's items from the most important (then most recently used) down ...
    ranked as (
        select b.*, row_number() over (
            partition by b.agent_id
            order by b.decayed desc, b.last_used desc, b.item, coalesce(b.session_key, b.memory_id)
        ) as place
        from by_decay as b
    ),
    -- ... the hot ones past tier_hot_capacity go warm ...
    hot_placed as (
        select r.*, case when r.decay_level = 1 and count(*) filter (where r.decay_level = 1) over w
                              > (settings ->> 'tier_hot_capacity')::bigint then 2 else r.decay_level end as hot_level
        from ranked as r
        window w as (partition by r.agent_id order by r.place)
    ),
    -- ... and the warm ones past tier_warm_capacity go cold.
    warm_placed as (
        select h.*, case when h.hot_level = 2 and count(*) filter (where h.hot_level = 2) over w
                              > (settings ->> 'tier_warm_capacity')::bigint then 3 else h.hot_level end as new_level
        from hot_placed as h
        window w as (partition by h.agent_id order by h.place)
    )

    select w.item, w.agent_id, w.session_key, w.memory_id, w.tier, (array['hot', 'warm', 'cold'])[w.new_level],
           w.decayed, w.last_used,
           case
               when w.new_level = w.decay_level and w.decay_level = 3 then 'decayed below tier_cold_below'
               when w.new_level = w.decay_level then 'decayed below tier_warm_below'
               when w.new_level = 2 then 'over tier_hot_capacity'
               else 'over tier_warm_capacity'
           end
    from warm_placed as w
    where w.new_level > w.level
$$;

comment on function memory_internal._tier_moves(text, timestamptz, jsonb) is
'Internal: the tier moves maintenance would make in a tenant at a time with these settings (down by decay, '
'then by each agent''s capacity), with the reason for each.';

create or replace function memory.tier_moves(at timestamptz default pg_catalog.now())
returns table (
    item text, agent_id text, session_id text, memory_id bigint, tier text, new_tier text,
    decayed_importance double precision, last_used timestamptz, reason text
)
language sql
stable
as $$
    select m.item, m.agent_id, s.session_id, m.memory_id, m.tier, m.new_tier, m.decayed_importance, m.last_used,
           m.reason
    from memory_internal._tier_moves(
        memory.current_tenant(), tier_moves.at, memory_internal._configured_settings(memory.current_tenant())
    ) as m
    left join memory.sessions as s on s.tenant_id = memory.current_tenant() and s.session_key = m.session_key
    order by m.agent_id, m.item, m.decayed_importance
$$;

comment on function memory.tier_moves(timestamptz) is
'The sessions and memories of the tenant the next maintenance would move down a tier (at: as if it ran then, '
'to see what time does), with their decayed importance and the reason: decayed below tier_warm_below or '
'tier_cold_below, or over an agent''s tier_hot_capacity or tier_warm_capacity (settings as memory.config '
'stores them).';

-- Applies a tenant's tier moves at a time: an item used or moved since it was read stays where it is, and
-- so does one another transaction holds (it is in use), so that maintenance never waits for a tenant's rows.
-- Returns how many items went to warm and to cold.
create or replace function memory_internal._move_tiers(tenant text, at timestamptz) returns jsonb
language sql
as $$
    with moves as (
        select * from memory_internal._tier_moves(tenant, at, memory_internal._configured_settings(tenant))
    ),
    sessions_moved as (
        update memory.sessions as s set tier = m.new_tier, tier_since = at
        from moves as m
        where m.item = 'session' and s.tenant_id = tenant and s.session_key = m.session_key and s.tier = m.tier
            and greatest(s.updated_at, s.used_at) = m.last_used
            and s.session_key in (
                select x.session_key from memory.sessions as x
                inner join moves as n on n.item = 'session' and x.session_key = n.session_key
                where x.tenant_id = tenant
                for update of x skip locked
            )
        returning s.tier
    ),
    memories_moved as (
        update memory.memories as x set tier = m.new_tier, tier_since = at
        from moves as m
        where m.item = 'memory' and x.tenant_id = tenant and x.memory_id = m.memory_id and x.tier = m.tier
            and greatest(x.recorded_at, x.used_at) = m.last_used
            and x.memory_id in (
                select y.memory_id from memory.memories as y
                inner join moves as n on n.item = 'memory' and y.memory_id = n.memory_id
                where y.tenant_id = tenant
                for update of y skip locked
            )
        returning x.tier
    )

    select jsonb_build_object('to_warm', count(*) filter (where a.tier = 'warm'),
                              'to_cold', count(*) filter (where a.tier = 'cold'))
    from (select * from sessions_moved union all select * from memories_moved) as a
$$;

comment on function memory_internal._move_tiers(text, timestamptz) is
'Internal: makes a tenant''s tier moves (memory_internal._tier_moves) at a time, leaving items used, moved or locked '
'meanwhile; how many went to warm and to cold.';

-- Use brings items back to hot: the sessions given, and the memories whose words are the turns given.
-- At most once an hour per item (decay counts in days), never waiting for a row another transaction holds.
create or replace function memory_internal._mark_used(tenant text, sessions bigint[], turns bigint[]) returns void
language plpgsql
as $$
declare
    -- (Values, not calls: Citus takes no call of a function that is not immutable in an update's case.)
    v_now timestamptz := pg_catalog.now();
    v_used_before timestamptz := pg_catalog.now() - interval '1 hour';
begin
    update memory.sessions as s
    set tier = 'hot', tier_since = case when s.tier = 'hot' then s.tier_since else v_now end, used_at = v_now
    where s.tenant_id = tenant and s.session_key in (
        select x.session_key from memory.sessions as x
        where x.tenant_id = tenant and x.session_key = any(sessions)
            and (x.tier <> 'hot' or x.used_at is null or x.used_at < v_used_before)
        for update skip locked
    );
    update memory.memories as m
    set tier = 'hot', tier_since = case when m.tier = 'hot' then m.tier_since else v_now end, used_at = v_now
    where m.tenant_id = tenant and m.memory_id in (
        select x.memory_id from memory.memories as x
        where x.tenant_id = tenant and x.turn_id = any(turns)
            and (x.tier <> 'hot' or x.used_at is null or x.used_at < v_used_before)
        for update skip locked
    );
end
$$;

comment on function memory_internal._mark_used(text, bigint[], bigint[]) is
'Internal: marks sessions, and the memories carried by turns, used now and moves them to hot (once an hour '
'at most, skipping rows other transactions hold).';

-- Cold out of the indexes: a chunk, its vectors and a session's vector say whether their item is cold, and the
-- full-text and HNSW indexes are split on it (memory_internal._ensure_vector_index), so that recall, which leaves
-- cold out by default, searches only what is not cold. A turn's words are cold when every memory the turn holds
-- is, or, holding none, when its session is (as memory_internal._turn_filter_sql reads tiers). A session's summary
-- and vector are cold when the session is.
create or replace function memory_internal._session_is_cold(tenant text, session bigint) returns boolean
language plpgsql
stable
as $$
begin
    return coalesce(
        (select s.tier = 'cold' from memory.sessions as s where s.tenant_id = tenant and s.session_key = session),
        false
    );
end
$$;

comment on function memory_internal._session_is_cold(text, bigint) is
'Internal: whether a session is cold (false for one that is not there).';

create or replace function memory_internal._turn_is_cold(tenant text, session bigint, turn bigint) returns boolean
language plpgsql
stable
as $$
begin
    return coalesce(
        (select bool_and(m.tier = 'cold') from memory.memories as m where m.tenant_id = tenant and m.turn_id = turn),
        memory_internal._session_is_cold(tenant, session)
    );
end
$$;

comment on function memory_internal._turn_is_cold(text, bigint, bigint) is
'Internal: whether a turn''s words are cold (every memory it holds is, or, holding none, its session is).';

-- Whether a tenant has sessions or memories in a tier (an index probe each). plpgsql, so its plans are kept.
create or replace function memory_internal._tenant_has_tier(tenant text, tier text) returns boolean
language plpgsql
stable
as $$
begin
    return exists (select from memory.sessions as s where s.tenant_id = tenant and s.tier = _tenant_has_tier.tier)
        or exists (select from memory.memories as m where m.tenant_id = tenant and m.tier = _tenant_has_tier.tier);
end
$$;

comment on function memory_internal._tenant_has_tier(text, text) is
'Internal: whether a tenant has sessions or memories in a tier.';

-- The tiers recall's candidate lists keep to, for the tiers asked: a lookup per candidate only when the tenant
-- has sessions or memories in hot or warm and they are left out; cold is left out by the indexes, for free, and
-- searched only when asked for and the tenant has something cold (null: no filter at all).
create or replace function memory_internal._list_tiers(tenant text, tiers text[]) returns text[]
language plpgsql
stable
as $$
begin
    return case
        when exists (
            select from unnest(array['hot', 'warm']) as l (tier)
            where not l.tier = any(tiers) and memory_internal._tenant_has_tier(tenant, l.tier)
        ) then tiers
        when 'cold' = any(tiers) and memory_internal._tenant_has_tier(tenant, 'cold') then null
        else array['hot', 'warm']
    end;
end
$$;

comment on function memory_internal._list_tiers(text, text[]) is
'Internal: the tiers recall''s candidate lists keep to for the tiers asked (null: every tier, no filter).';

-- Brings the cold flags of a session's chunks, chunk vectors, vector and summary, or of one turn's chunks and
-- their vectors, in line with their items' tiers. A vector that changes side leaves the HNSW graphs (in_graph
-- false: a dead entry until vacuum) and is scanned exactly, on its side, until the next maintenance puts it in
-- its side's graph (memory_internal._join_graphs): the move inserts nothing into a graph, so neither maintenance's
-- moves nor a recall that brings a cold item back pay a graph insert. The turns are locked first, so that two
-- changes to one turn's items (two memories that share its words) are synced one after the other, then the
-- chunks in key order, and the summary before the session's vector, as enrichment writes them (re-enrichment
-- also writes the flags again, so a chunk or summary written from a tier read before it changed heals).
create or replace function memory_internal._sync_cold(tenant text, session bigint, turn bigint) returns void
language plpgsql
as $$
declare
    v_turns bigint [] := case
        when turn is not null then array[turn]
        else array(select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.session_key = session)
    end;
    v_flip_turns bigint [];
    v_flip_chunks integer [];
begin
    perform from memory.turns as t where t.tenant_id = tenant and t.turn_id = any(v_turns) order by t.turn_id
    for no key update;
    perform from memory.chunks as c where c.tenant_id = tenant and c.turn_id = any(v_turns)
    order by c.turn_id, c.chunk_no
    for no key update;
    -- The chunks to flip found first (Citus runs no stable function on an updated row's columns).
    select array_agg(c.turn_id), array_agg(c.chunk_no) into v_flip_turns, v_flip_chunks
    from memory.chunks as c
    where c.tenant_id = tenant and c.turn_id = any(v_turns)
        and c.cold <> memory_internal._turn_is_cold(c.tenant_id, c.session_key, c.turn_id);
    update memory.chunks as c set cold = not c.cold
    from unnest(v_flip_turns, v_flip_chunks) as f (turn_id, chunk_no)
    where c.tenant_id = tenant and c.turn_id = f.turn_id and c.chunk_no = f.chunk_no;
    -- (Each statement names the tenant of each table: on Citus a call runs on its tenant's worker, where it must.)
    update memory.chunk_embeddings as e set cold = c.cold, in_graph = false
    from memory.chunks as c
    where c.tenant_id = tenant and c.turn_id = any(v_turns)
        and e.tenant_id = tenant and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no and e.cold <> c.cold;
    if turn is null then
        update memory.summaries as m set cold = s.tier = 'cold'
        from memory.sessions as s
        where s.tenant_id = tenant and s.session_key = session
            and m.tenant_id = tenant and m.session_key = s.session_key and m.cold <> (s.tier = 'cold');
        update memory.session_embeddings as e set cold = s.tier = 'cold', in_graph = false
        from memory.sessions as s
        where s.tenant_id = tenant and s.session_key = session
            and e.tenant_id = tenant and e.session_key = s.session_key and e.cold <> (s.tier = 'cold');
    end if;
end
$$;

comment on function memory_internal._sync_cold(text, bigint, bigint) is
'Internal: brings the cold flags of a session''s words, summary and vectors (turn null) or of one turn''s in '
'line with their items'' tiers.';

create or replace function memory_internal._session_tier_changed() returns trigger
language plpgsql
as $$
begin
    perform memory_internal._sync_cold(new.tenant_id, new.session_key, null);
    return null;
end
$$;

comment on function memory_internal._session_tier_changed() is
'Internal: trigger that keeps the cold flags of a session''s words, summary and vectors when it goes to or '
'leaves cold.';

drop trigger if exists sessions_cold on memory.sessions;
create trigger sessions_cold after update of tier on memory.sessions
for each row when ((old.tier = 'cold') is distinct from (new.tier = 'cold'))
execute function memory_internal._session_tier_changed();

-- A memory decides its turn's side when it changes tier across cold, and when it comes or goes.
create or replace function memory_internal._memory_tier_changed() returns trigger
language plpgsql
as $$
declare
    v_row memory.memories := case when tg_op = 'DELETE' then old else new end;
begin
    perform memory_internal._sync_cold(v_row.tenant_id, null, v_row.turn_id);
    return null;
end
$$;

comment on function memory_internal._memory_tier_changed() is
'Internal: trigger that keeps the cold flags of a memory''s words and vectors as its tier changes, and when it '
'comes or goes.';

drop trigger if exists memories_cold on memory.memories;
create trigger memories_cold after update of tier on memory.memories
for each row when ((old.tier = 'cold') is distinct from (new.tier = 'cold'))
execute function memory_internal._memory_tier_changed();
drop trigger if exists memories_cold_added on memory.memories;
create trigger memories_cold_added after insert on memory.memories
for each row execute function memory_internal._memory_tier_changed();
drop trigger if exists memories_cold_removed on memory.memories;
create trigger memories_cold_removed after delete on memory.memories
for each row execute function memory_internal._memory_tier_changed();
