-- Reading the knowledge graph: entities by name (fuzzy, over names and aliases), an entity's neighbours
-- to a depth, the sessions that mention it; and merging two entities an operator finds to be one.

-- The arguments of the graph queries checked: an error naming the problem, else nothing.
create or replace function memory_internal._check_graph_query(type text, depth integer, k integer) returns boolean
language plpgsql
immutable
as $$
begin
    if type is not null and not type = any(memory_internal._entity_types()) then
        raise exception 'agent_memory: entity type must be one of %; got %',
            array_to_string(memory_internal._entity_types(), ', '), type using errcode = 'invalid_parameter_value';
    end if;
    if depth is null or depth < 1 or depth > 5 then
        raise exception 'agent_memory: depth must be between 1 and 5, got %', depth using errcode = 'invalid_parameter_value';
    end if;
    if k is null or k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', k using errcode = 'invalid_parameter_value';
    end if;
    return true;
end
$$;

comment on function memory_internal._check_graph_query(text, integer, integer) is
'Internal: true, or an error unless the type is one of the twelve (or null), depth is 1-5 and k at least 1.';

-- The entities a name stands for, or an error naming it when there are none.
create or replace function memory_internal._named_entities(name text, agent_id text) returns bigint[]
language plpgsql
stable
as $$
declare
    v_keys bigint [] := memory_internal._entity_ids(name, agent_id);
begin
    if cardinality(v_keys) = 0 then
        raise exception 'agent_memory: no entity "%"%', name,
            case when agent_id is null then '' else format(' for agent "%s"', agent_id) end
            using errcode = 'no_data_found', hint = 'select * from memory.list_entities(''...'') finds entities by name';
    end if;
    return v_keys;
end
$$;

comment on function memory_internal._named_entities(text, text) is
'Internal: the ids of the entities a name stands for; an error naming it when there are none.';

create or replace function memory_internal._list_entities(
    tenant text, search text, entity_type text, agent text, k integer
)
returns table (
    entity_id bigint, agent_id text, name text, type text, aliases text[], mentions bigint, sessions bigint,
    last_mentioned_at timestamptz, similarity double precision
)
language sql
stable
as $$
    with wanted as (select memory_internal._trigrams(memory.normalize_entity(_list_entities.search)) as trigrams),
    found as (
        select e.*,
               case when _list_entities.search is null then 1.0::double precision
                    else cardinality(array(select unnest(e.trigrams) intersect select unnest(w.trigrams)))::double precision
                         / nullif(cardinality(array(select unnest(e.trigrams) union select unnest(w.trigrams))), 0)
               end as similarity
        from memory.entities as e
        cross join wanted as w
        where e.tenant_id = tenant
            and (_list_entities.search is null or e.trigrams && w.trigrams)
            and (_list_entities.entity_type is null or e.type = _list_entities.entity_type)
            and (_list_entities.agent is null or e.agent_id in (_list_entities.agent, ''))
    )
    select f.entity_id, f.agent_id, f.name, f.type, f.aliases, coalesce(m.mentions, 0)::bigint,
           coalesce(m.sessions, 0)::bigint, m.last_mentioned_at, round(f.similarity::numeric, 3)::double precision
    from found as f
    left join lateral (
        select sum(x.mentions) as mentions, count(distinct x.session_key) as sessions,
               max(t.created_at) as last_mentioned_at
        from memory.entity_mentions as x
        inner join memory.turns as t on t.tenant_id = x.tenant_id and t.turn_id = x.turn_id
        where x.tenant_id = tenant and x.entity_id = f.entity_id
    ) as m on true
    where f.similarity >= 0.3
    order by f.similarity desc, coalesce(m.mentions, 0) desc, f.entity_id
    -- The arguments are checked where they are always read, whatever the table holds.
    limit case when memory_internal._check_graph_query(_list_entities.entity_type, 1, _list_entities.k)
              then _list_entities.k end
$$;

comment on function memory_internal._list_entities(text, text, text, text, integer) is
'Internal: memory.list_entities of a tenant (named by value, as Citus routes a statement).';

-- (As memory.stats: the API's names, over a SQL function whose parameters have other names.)
create or replace function memory.list_entities(
    search text default null, type text default null, agent_id text default null, k integer default 50
)
returns table (
    entity_id bigint, agent_id text, name text, type text, aliases text[], mentions bigint, sessions bigint,
    last_mentioned_at timestamptz, similarity double precision
)
language sql
stable
as $$
    select * from memory_internal._list_entities(
        memory.current_tenant(), list_entities.search, list_entities.type, list_entities.agent_id, list_entities.k
    )
$$;

comment on function memory.list_entities(text, text, text, integer) is
'Entities of this tenant: those whose name or an alias is like search (trigram similarity of the '
'normalized names, at least 0.3; all when search is null), of one type, in one agent''s scope (its own and '
'the tenant''s, agent_id '''': see entity_scope); with how often and in how many sessions they are mentioned, '
'and when last. Best match first.';

-- Breadth-first from the start entities, one level at a time, each entity reached once (at its shortest
-- distance, through the neighbour that shares the most turns with it): cost grows with the entities
-- reached, not with the paths between them, and cycles end.
create or replace function memory_internal._entity_walk(tenant text, starts bigint[], depth integer)
returns table (entity_id bigint, distance integer, turns bigint, path bigint[])
language plpgsql
stable
as $$
declare
    v_seen bigint [] := starts;
    v_frontier bigint [] := starts;
    v_paths jsonb := (select jsonb_object_agg(s.key::text, jsonb_build_array(s.key)) from unnest(starts) as s (key));
    v_level integer := 0;
    v_next record;
begin
    while v_level < depth and cardinality(v_frontier) > 0 loop
        v_level := v_level + 1;
        v_frontier := '{}';
        for v_next in
            select distinct on (n.other) n.other, n.turns, n.via
            from unnest(v_seen) as w (key)
            cross join lateral (
                select case when e.entity_a = w.key then e.entity_b else e.entity_a end as other, e.turns, w.key as via
                from memory.entity_edges as e
                where e.tenant_id = tenant and (e.entity_a = w.key or e.entity_b = w.key)
            ) as n
            where (v_paths -> w.key::text) is not null and jsonb_array_length(v_paths -> w.key::text) = v_level
                and not n.other = any(v_seen)
            order by n.other, n.turns desc, n.via
        loop
            v_frontier := v_frontier || v_next.other;
            v_paths := v_paths || jsonb_build_object(v_next.other::text, (v_paths -> v_next.via::text) || to_jsonb(v_next.other));
            entity_id := v_next.other;
            distance := v_level;
            turns := v_next.turns;
            path := array(select jsonb_array_elements_text(v_paths -> v_next.other::text)::bigint);
            return next;
        end loop;
        v_seen := v_seen || v_frontier;
    end loop;
end
$$;

comment on function memory_internal._entity_walk(text, bigint[], integer) is
'Internal: the entities within depth edges of the start ones, each once at its shortest distance, with a path.';

create or replace function memory_internal._entity_neighbors(
    tenant text, entity text, depth integer, k integer, agent text
)
returns table (entity_id bigint, agent_id text, name text, type text, distance integer, turns bigint, path text[])
language sql
stable
as $$
    select e.entity_id, e.agent_id, e.name, e.type, w.distance, w.turns,
           array(select x.name from unnest(w.path) with ordinality as p (key, i)
                 inner join memory.entities as x on x.tenant_id = tenant and x.entity_id = p.key order by p.i)
    from memory_internal._entity_walk(
        tenant,
        memory_internal._named_entities(_entity_neighbors.entity, _entity_neighbors.agent),
        least(_entity_neighbors.depth, 5)
    ) as w
    inner join memory.entities as e on e.tenant_id = tenant and e.entity_id = w.entity_id
    order by w.distance, w.turns desc, e.entity_id
    -- The arguments are checked where they are always read (a limit of 0 would run nothing).
    limit case when memory_internal._check_graph_query(null, _entity_neighbors.depth, _entity_neighbors.k)
              then _entity_neighbors.k end
$$;

comment on function memory_internal._entity_neighbors(text, text, integer, integer, text) is
'Internal: memory.entity_neighbors of a tenant (named by value, as Citus routes a statement).';

-- (As memory.stats: the API's names, over a SQL function whose parameters have other names.)
create or replace function memory.entity_neighbors(
    entity text, depth integer default 1, k integer default 20, agent_id text default null
)
returns table (entity_id bigint, agent_id text, name text, type text, distance integer, turns bigint, path text[])
language sql
stable
as $$
    select * from memory_internal._entity_neighbors(
        memory.current_tenant(), entity_neighbors.entity, entity_neighbors.depth, entity_neighbors.k,
        entity_neighbors.agent_id
    )
$$;

comment on function memory.entity_neighbors(text, integer, integer, text) is
'The entities within depth (1-5) co-occurrence edges of an entity (by name or alias; one agent''s entities '
'or every agent''s), nearest first, then by how many turns mention both; each with the path that reaches it. '
'Cycles end: a path never visits an entity twice.';

create or replace function memory_internal._entity_sessions(tenant text, entity text, agent text, k integer)
returns table (session_id text, agent_id text, mentions bigint, first_at timestamptz, last_at timestamptz, summary text)
language sql
stable
as $$
    select s.session_id, s.agent_id, sum(m.mentions)::bigint, min(t.created_at), max(t.created_at), sm.summary
    from memory.entity_mentions as m
    inner join memory.turns as t on t.tenant_id = m.tenant_id and t.turn_id = m.turn_id
    inner join memory.sessions as s on s.tenant_id = m.tenant_id and s.session_key = m.session_key
    left join memory.summaries as sm on sm.tenant_id = m.tenant_id and sm.session_key = m.session_key
    where m.tenant_id = tenant
        and m.entity_id = any(memory_internal._entity_ids(_entity_sessions.entity, _entity_sessions.agent))
    group by s.session_key, s.session_id, s.agent_id, sm.summary
    order by max(t.created_at) desc, s.session_key
    limit greatest(_entity_sessions.k, 1)
$$;

comment on function memory_internal._entity_sessions(text, text, text, integer) is
'Internal: memory.entity_sessions of a tenant (named by value, as Citus routes a statement).';

-- (As memory.stats: the API's names, over a SQL function whose parameters have other names.)
create or replace function memory.entity_sessions(entity text, agent_id text default null, k integer default 20)
returns table (session_id text, agent_id text, mentions bigint, first_at timestamptz, last_at timestamptz, summary text)
language sql
stable
as $$
    select * from memory_internal._entity_sessions(
        memory.current_tenant(), entity_sessions.entity, entity_sessions.agent_id, entity_sessions.k
    )
$$;

comment on function memory.entity_sessions(text, text, integer) is
'The sessions that mention an entity (by name or alias), most recent first, with how often, when, and '
'their summaries.';

-- Two entities of one scope that are one: the second's name and aliases become the first's aliases, its
-- mentions and states move to the first, and it is removed. Edges follow the mentions.
create or replace function memory.merge_entities(keep text, merge text, agent_id text default 'default')
returns table (entity_id bigint, name text, aliases text[], mentions_moved bigint, states_moved bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_keep bigint;
    v_merge bigint;
    v_mentions bigint;
    v_states bigint;
    v_moved_turns bigint [];
    v_moved_sessions bigint [];
    v_moved_mentions integer [];
begin
    if merge_entities.agent_id is null then
        raise exception 'agent_memory: merge_entities needs the agent_id whose entities are one'
            using errcode = 'invalid_parameter_value';
    end if;
    -- Both in the scope the agent's entities are written in (its own, or with entity_scope tenant the tenant's).
    select min(e.entity_id) filter (where e.entity_id = any(memory_internal._named_entities(merge_entities.keep,
                                                                                         merge_entities.agent_id))),
           min(e.entity_id) filter (where e.entity_id = any(memory_internal._named_entities(merge_entities.merge,
                                                                                         merge_entities.agent_id)))
    into v_keep, v_merge
    from memory.entities as e
    where e.tenant_id = v_tenant and e.agent_id = memory_internal._entity_owner(merge_entities.agent_id);
    if v_keep is null or v_merge is null then
        raise exception 'agent_memory: no entity "%" for agent "%"',
            case when v_keep is null then merge_entities.keep else merge_entities.merge end, merge_entities.agent_id
            using errcode = 'no_data_found', hint = 'with entity_scope tenant, entities are the tenant''s (agent_id '''')';
    end if;
    if v_keep = v_merge then
        raise exception 'agent_memory: "%" and "%" are already one entity', merge_entities.keep, merge_entities.merge
            using errcode = 'invalid_parameter_value';
    end if;
    perform from memory.entities as e where e.tenant_id = v_tenant and e.entity_id in (v_keep, v_merge)
    order by e.entity_id for update;

    -- Mentions: the merged entity's become the kept one's (added up where a turn mentions both). Read, then
    -- written, in statements of their own (Citus runs a statement of data-modifying CTEs in parts, sending rows
    -- between them as the owner).
    select array_agg(m.turn_id), array_agg(m.session_key), array_agg(m.mentions)
    into v_moved_turns, v_moved_sessions, v_moved_mentions
    from memory.entity_mentions as m where m.tenant_id = v_tenant and m.entity_id = v_merge;
    delete from memory.entity_mentions as m
    where m.tenant_id = v_tenant and m.entity_id = v_merge and m.turn_id = any(v_moved_turns);
    insert into memory.entity_mentions as m (tenant_id, turn_id, entity_id, session_key, mentions)
    select v_tenant, mv.turn_id, v_keep, mv.session_key, mv.mentions
    from unnest(v_moved_turns, v_moved_sessions, v_moved_mentions) as mv (turn_id, session_key, mentions)
    on conflict (tenant_id, turn_id, entity_id) do update set mentions = m.mentions + excluded.mentions;
    get diagnostics v_mentions = row_count;
    -- The kept entity's edges, counted again from its mentions now (the merged one's go with it).
    delete from memory.entity_edges as e
    where e.tenant_id = v_tenant and (e.entity_a in (v_keep, v_merge) or e.entity_b in (v_keep, v_merge));
    insert into memory.entity_edges (tenant_id, entity_a, entity_b, turns, last_seen)
    select v_tenant, least(v_keep, o.entity_id), greatest(v_keep, o.entity_id), count(*), max(t.created_at)
    from memory.entity_mentions as k
    inner join memory.entity_mentions as o
        on o.tenant_id = k.tenant_id and o.turn_id = k.turn_id and o.entity_id not in (v_keep, v_merge)
    inner join memory.turns as t on t.tenant_id = k.tenant_id and t.turn_id = k.turn_id
    where k.tenant_id = v_tenant and k.entity_id = v_keep
    group by o.entity_id
    order by o.entity_id;

    -- An attribute's history moves where the kept entity has none; proposals (pending, rejected) always move.
    update memory.entity_states as s set entity_id = v_keep
    where s.tenant_id = v_tenant and s.entity_id = v_merge
        and (s.status <> 'active' or not exists (
            select from memory.entity_states as k
            where k.tenant_id = v_tenant and k.entity_id = v_keep and k.attribute = s.attribute and k.status = 'active'
        ));
    get diagnostics v_states = row_count;

    update memory.entities as e
    set aliases = array(
        select distinct a from unnest(e.aliases || m.aliases || m.normalized) as a where a <> e.normalized order by a
    )
    from memory.entities as m
    where e.tenant_id = v_tenant and e.entity_id = v_keep and m.tenant_id = v_tenant and m.entity_id = v_merge;
    delete from memory.entities as e where e.tenant_id = v_tenant and e.entity_id = v_merge;

    return query
    select e.entity_id, e.name, e.aliases, v_mentions, v_states
    from memory.entities as e where e.tenant_id = v_tenant and e.entity_id = v_keep;
end
$$;

comment on function memory.merge_entities(text, text, text) is
'Merges two entities of an agent''s scope that are one: merge''s name and aliases become keep''s aliases, '
'its mentions (and the co-occurrence edges they make) and its attribute histories (where keep has none '
'for that attribute) move to keep, and it is removed. Later mentions of either name find keep.';
