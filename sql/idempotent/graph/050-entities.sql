-- The knowledge graph's entities: names normalized in the database, found by name or alias, and the
-- co-occurrence edges kept current from the mentions.

-- The key an entity is stored under: NFKC, case folded, look-alike letters, dashes, dots and quotes mapped,
-- invisible characters dropped, white space collapsed, edge punctuation stripped, then a known alias
-- mapped to its canonical name (postgres -> postgresql).
create or replace function memory.normalize_entity(name text) returns text
language plpython3u
immutable strict parallel safe
as $$
@load_python@
from agent_memory_db.entities import normalized_key
return normalized_key(name)
$$;

comment on function memory.normalize_entity(text) is
'The key an entity name is stored and found under: NFKC, Unicode case folding, look-alike letters '
'(fullwidth, Cyrillic and Greek homoglyphs), dash, dot, bracket and quote variants mapped, invisible '
'characters dropped, white space collapsed, edge punctuation stripped, known aliases mapped (postgres -> '
'postgresql). '''' when nothing is left.';

-- entity_gazetteer maps names to entity types.
create or replace function memory_internal._check_entity_gazetteer(value jsonb) returns void
language plpgsql
stable
as $$
begin
    if exists (
        select from jsonb_each(value) as g
        where jsonb_typeof(g.value) <> 'string' or not (g.value #>> '{}') = any(memory_internal._entity_types())
            or memory.normalize_entity(g.key) = ''
    ) then
        raise exception 'agent_memory: setting "entity_gazetteer" maps names to entity types (%), got %',
            array_to_string(memory_internal._entity_types(), ', '), value;
    end if;
end
$$;

comment on function memory_internal._check_entity_gazetteer(jsonb) is
'Internal: an error unless the value maps names to entity types.';

-- Whose an agent's entities are: the agent's, or with entity_scope tenant the tenant's (agent_id '').
create or replace function memory_internal._entity_owner(agent_id text) returns text
language sql
stable
as $$ select case when memory.setting('entity_scope') #>> '{}' = 'tenant' then '' else agent_id end $$;

comment on function memory_internal._entity_owner(text) is
'Internal: the agent_id an agent''s entities are written under: its own, or '''' (the tenant''s) when the '
'setting entity_scope is tenant.';

-- The entities of this tenant a name stands for: its normalized form as an entity's key or among its
-- aliases, in one agent's scope (its own and the tenant's) or (agent_id null) in every agent's.
create or replace function memory_internal._entity_ids(name text, agent_id text) returns bigint[]
language plpgsql
stable
as $$
#variable_conflict use_column
declare
    -- A value, not a call, in its statement: Citus routes a statement by the tenant it names.
    v_tenant text := memory.current_tenant();
begin
    return (
        select coalesce(array_agg(e.entity_id order by e.entity_id), '{}')
        from (select memory.normalize_entity(name) as normalized) as n
        inner join memory.entities as e
            on e.tenant_id = v_tenant
            and (e.normalized = n.normalized or e.aliases @> array[n.normalized])
        where _entity_ids.agent_id is null or e.agent_id in (_entity_ids.agent_id, '')
    );
end
$$;

comment on function memory_internal._entity_ids(text, text) is
'Internal: the ids of the entities a name stands for (by normalized name or alias), in one agent''s entities '
'(and the tenant''s) or all.';

-- One entity of an agent's (or, entity_scope tenant, the tenant's), by name: its id, created (of the given
-- type) if there is none.
create or replace function memory_internal._entity_id(tenant text, name text, agent_id text, type text) returns bigint
language plpgsql
as $$
declare
    v_normalized text := memory.normalize_entity(name);
    v_owner text := memory_internal._entity_owner(agent_id);
    v_key bigint;
begin
    if v_normalized is null or v_normalized = '' then
        raise exception 'agent_memory: entity name % has nothing left once normalized', coalesce(quote_literal(name), 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    select e.entity_id into v_key from memory.entities as e
    where e.tenant_id = tenant and e.agent_id = v_owner
        and (e.normalized = v_normalized or e.aliases @> array[v_normalized])
    order by e.normalized = v_normalized desc, e.entity_id
    limit 1;
    if v_key is null then
        insert into memory.entities as e (tenant_id, agent_id, name, normalized, type)
        values (tenant, v_owner, btrim(name), v_normalized, coalesce(_entity_id.type, 'other'))
        on conflict on constraint entities_tenant_id_agent_id_normalized_key do update
        set type = case when e.type = 'other' then excluded.type else e.type end
        returning e.entity_id into v_key;
    end if;
    return v_key;
end
$$;

comment on function memory_internal._entity_id(text, text, text, text) is
'Internal: the id of the entity a name stands for in an agent''s entities, created with the given type if new.';

-- The trigrams of a text (as pg_trgm forms them: words padded with two spaces before and one after),
-- for fuzzy search over entity names and aliases without another extension.
create or replace function memory_internal._trigrams(words text) returns text[]
language sql
immutable strict parallel safe
as $$
    select coalesce(array_agg(distinct substr(w.padded, i, 3)), '{}')
    from (select '  ' || word || ' ' as padded from regexp_split_to_table(words, '\s+') as word where word <> '') as w
    cross join lateral generate_series(1, length(w.padded) - 2) as i
$$;

comment on function memory_internal._trigrams(text) is
'Internal: the set of three-character pieces of each word of a text (for fuzzy entity search).';

-- An entity's trigrams cover its key and its aliases.
create or replace function memory_internal._entity_trigrams() returns trigger
language plpgsql
as $$
begin
    new.trigrams := memory_internal._trigrams(new.normalized || ' ' || array_to_string(new.aliases, ' '));
    return new;
end
$$;

comment on function memory_internal._entity_trigrams() is
'Internal: trigger that keeps an entity''s trigrams (its key and aliases) current.';

drop trigger if exists entities_trigrams on memory.entities;
create trigger entities_trigrams before insert or update of normalized, aliases on memory.entities
for each row execute function memory_internal._entity_trigrams();

-- Co-occurrence edges follow the mentions: a turn's mentions are written and removed together (by
-- enrichment, forget, merge), so the pairs of one statement's rows per turn are the pairs to add or
-- take away. The pairs are counted from the transition tables alone, then written tenant by tenant (on
-- Citus, where triggers run on each shard, a statement on a distributed table cannot read a transition
-- table, and a call pushed down for a tenant names that tenant in each statement); rows are touched in key
-- order so that concurrent writers lock them in the same order.
create or replace function memory_internal._count_edges(
    tenants text[], turn_ids bigint[], entities_a bigint[], entities_b bigint[], sign integer
) returns void
language plpgsql
as $$
declare
    v_tenant text;
    v_entities_a bigint[];
    v_entities_b bigint[];
    v_turns bigint[];
    v_seen timestamptz[];
    v_said_ids bigint[];
    v_said_at timestamptz[];
begin
    for v_tenant in select distinct t.tenant_id from unnest(tenants) as t (tenant_id) order by 1 loop
        -- When the turns added were said (read first: Citus plans no outer join of a list to a table).
        if sign > 0 then
            select array_agg(t.turn_id), array_agg(t.created_at) into v_said_ids, v_said_at
            from memory.turns as t where t.tenant_id = v_tenant and t.turn_id = any(turn_ids);
        end if;
        -- Each pair: in how many turns, and (added) when the last of them was said.
        select array_agg(c.entity_a order by c.entity_a, c.entity_b),
               array_agg(c.entity_b order by c.entity_a, c.entity_b),
               array_agg(c.turns order by c.entity_a, c.entity_b), array_agg(c.seen order by c.entity_a, c.entity_b)
        into v_entities_a, v_entities_b, v_turns, v_seen
        from (
            select p.entity_a, p.entity_b, count(*) as turns, coalesce(max(t.said_at), pg_catalog.now()) as seen
            from unnest(tenants, turn_ids, entities_a, entities_b) as p (tenant_id, turn_id, entity_a, entity_b)
            left join unnest(v_said_ids, v_said_at) as t (turn_id, said_at) on t.turn_id = p.turn_id
            where p.tenant_id = v_tenant
            group by p.entity_a, p.entity_b
        ) as c;
        if sign < 0 then
            perform from memory.entity_edges as e
            inner join unnest(v_entities_a, v_entities_b) as p (entity_a, entity_b)
                on e.entity_a = p.entity_a and e.entity_b = p.entity_b
            where e.tenant_id = v_tenant
            order by e.entity_a, e.entity_b
            for update of e;
            update memory.entity_edges as e set turns = e.turns - p.turns
            from unnest(v_entities_a, v_entities_b, v_turns) as p (entity_a, entity_b, turns)
            where e.tenant_id = v_tenant and e.entity_a = p.entity_a and e.entity_b = p.entity_b;
            -- The edges this took to zero (no other edge is ever left at zero).
            delete from memory.entity_edges as e
            where e.tenant_id = v_tenant and e.turns <= 0 and e.entity_a = any(v_entities_a);
        else
            insert into memory.entity_edges as e (tenant_id, entity_a, entity_b, turns, last_seen)
            select v_tenant, p.entity_a, p.entity_b, p.turns, p.seen
            from unnest(v_entities_a, v_entities_b, v_turns, v_seen) as p (entity_a, entity_b, turns, seen)
            order by p.entity_a, p.entity_b
            on conflict (tenant_id, entity_a, entity_b) do update
            set turns = e.turns + excluded.turns, last_seen = greatest(e.last_seen, excluded.last_seen);
        end if;
    end loop;
end
$$;

comment on function memory_internal._count_edges(text[], bigint[], bigint[], bigint[], integer) is
'Internal: adds (sign 1) or takes away (sign -1) the co-occurrence pairs of turns (tenant, turn and the two '
'entities side by side) from memory.entity_edges, with the time of the last turn of each pair.';

create or replace function memory_internal._mentions_changed() returns trigger
language plpgsql
as $$
begin
    if tg_op in ('DELETE', 'UPDATE') then
        perform memory_internal._count_edges(array_agg(a.tenant_id), array_agg(a.turn_id), array_agg(a.entity_id),
                                             array_agg(b.entity_id), -1)
        from old_mentions as a
        inner join old_mentions as b
            on a.tenant_id = b.tenant_id and a.turn_id = b.turn_id and a.entity_id < b.entity_id
        having count(*) > 0;
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        perform memory_internal._count_edges(array_agg(a.tenant_id), array_agg(a.turn_id), array_agg(a.entity_id),
                                             array_agg(b.entity_id), 1)
        from new_mentions as a
        inner join new_mentions as b
            on a.tenant_id = b.tenant_id and a.turn_id = b.turn_id and a.entity_id < b.entity_id
        having count(*) > 0;
    end if;
    return null;
end
$$;

comment on function memory_internal._mentions_changed() is
'Internal: trigger that keeps the co-occurrence edges (memory.entity_edges) current from the mentions.';

select memory_internal._create_change_triggers(
    'memory.entity_mentions', 'mentions', 'memory_internal._mentions_changed()'
);

-- The entities each turn of a session mentions, found by the deterministic extractor in what is indexed
-- of the turn (its words and tool calls) and its speaker, or (named: the llm extractor's answer for the
-- session) where the names the model gave appear in it, plus those the caller passed with the message
-- (metadata.entities): (turn_id, name as written, key, type, mentions).
create or replace function memory_internal._extract_mentions(turns jsonb, settings jsonb, named text)
returns table (turn_id bigint, name text, normalized text, type text, mentions integer)
language plpython3u
stable
as $$
@load_python@
import json
from agent_memory_db import mentions
from agent_memory_db.entities.llm import parse_llm_entities
found = None
if named is not None:
    try:
        found = parse_llm_entities(named)
    except ValueError as exc:
        plpy.error("agent_memory: llm entity extraction failed: %s" % exc)
return mentions.session_mentions(json.loads(turns), json.loads(settings)["entity_gazetteer"], found)
$$;

comment on function memory_internal._extract_mentions(jsonb, jsonb, text) is
'Internal: the entities each turn of a session mentions (extracted by rules or named by the llm, and '
'passed by the caller).';

-- A session's mentions written again where they changed: entities new to the session's agent's scope are
-- created (in key order, so concurrent enrichments take their locks in the same order), every mention is
-- keyed by its entity (found by key or alias), and the session's mention rows are replaced, which moves
-- the co-occurrence edges with them. Set-based: a statement per step, not per mention. named: the llm
-- extractor's answer for the session (null: the rules), asked before any write.
create or replace function memory_internal._write_mentions(
    tenant text, session bigint, turns jsonb, settings jsonb, named text, only_these boolean default false
)
returns void
language plpgsql
as $$
declare
    v_given bigint [] := array(select (t.turn ->> 'turn_id')::bigint from jsonb_array_elements(turns) as t (turn));
    v_agent_id text := memory_internal._entity_owner(
        (select s.agent_id from memory.sessions as s where s.tenant_id = tenant and s.session_key = session)
    );
    v_found_turns bigint [];
    v_found_keys text [];
    v_found_names text [];
    v_found_types text [];
    v_found_counts integer [];
    v_new_names text [];
    v_new_keys text [];
    v_new_types text [];
    v_turns bigint [];
    v_entities bigint [];
    v_counts integer [];
    v_changed bigint [];
begin
    select coalesce(array_agg(f.turn_id order by f.normalized, f.turn_id), '{}'),
           coalesce(array_agg(f.normalized order by f.normalized, f.turn_id), '{}'),
           coalesce(array_agg(f.name order by f.normalized, f.turn_id), '{}'),
           coalesce(array_agg(f.type order by f.normalized, f.turn_id), '{}'),
           coalesce(array_agg(f.mentions order by f.normalized, f.turn_id), '{}')
    into v_found_turns, v_found_keys, v_found_names, v_found_types, v_found_counts
    from (
        select m.turn_id, m.normalized, min(m.name) as name,
               coalesce(min(m.type) filter (where m.type <> 'other'), 'other') as type, sum(m.mentions)::integer as mentions
        from memory_internal._extract_mentions(turns, settings, named) as m
        group by m.turn_id, m.normalized
    ) as f;

    -- Entities the scope does not know yet, by key or alias: found first, then written (on Citus, the select of
    -- an insert may not read a distributed table beside a set-returning function).
    select array_agg(n.name order by n.normalized), array_agg(n.normalized order by n.normalized),
           array_agg(n.type order by n.normalized)
    into v_new_names, v_new_keys, v_new_types
    from (
        select (array_agg(f.name order by f.turn_id))[1] as name, f.normalized,
               coalesce(min(f.type) filter (where f.type <> 'other'), 'other') as type
        from unnest(v_found_turns, v_found_keys, v_found_names, v_found_types) as f (turn_id, normalized, name, type)
        where not exists (
            select from memory.entities as x
            where x.tenant_id = tenant and x.agent_id = v_agent_id
                and (x.normalized = f.normalized or x.aliases @> array[f.normalized])
        )
        group by f.normalized
    ) as n;
    insert into memory.entities as e (tenant_id, agent_id, name, normalized, type)
    select tenant, v_agent_id, n.name, n.normalized, n.type
    from unnest(v_new_names, v_new_keys, v_new_types) as n (name, normalized, type)
    order by n.normalized
    on conflict on constraint entities_tenant_id_agent_id_normalized_key do nothing;

    select coalesce(array_agg(f.turn_id order by f.turn_id, f.entity_id), '{}'),
           coalesce(array_agg(f.entity_id order by f.turn_id, f.entity_id), '{}'),
           coalesce(array_agg(f.mentions order by f.turn_id, f.entity_id), '{}')
    into v_turns, v_entities, v_counts
    from (
        select f.turn_id, k.entity_id, sum(f.mentions)::integer as mentions
        from unnest(v_found_turns, v_found_keys, v_found_counts) as f (turn_id, normalized, mentions)
        cross join lateral (
            select x.entity_id from memory.entities as x
            where x.tenant_id = tenant and x.agent_id = v_agent_id
                and (x.normalized = f.normalized or x.aliases @> array[f.normalized])
            order by x.normalized = f.normalized desc, x.entity_id
            limit 1
        ) as k
        group by f.turn_id, k.entity_id
    ) as f;

    -- Only the turns whose mentions changed are written again, each with all its mentions (as the edge
    -- trigger counts them): a session that grows rewrites its new turns, not the ones before.
    select array_agg(distinct coalesce(n.t, o.turn_id)) into v_changed
    from unnest(v_turns, v_entities, v_counts) as n (t, e, c)
    full join (
        select m.turn_id, m.entity_id, m.mentions from memory.entity_mentions as m
        where m.tenant_id = tenant and m.session_key = session and (not only_these or m.turn_id = any(v_given))
    ) as o on n.t = o.turn_id and n.e = o.entity_id
    where n.c is distinct from o.mentions;
    if v_changed is null then
        return;
    end if;
    delete from memory.entity_mentions as m
    where m.tenant_id = tenant and m.session_key = session and m.turn_id = any(v_changed);
    insert into memory.entity_mentions (tenant_id, turn_id, entity_id, session_key, mentions)
    select tenant, u.t, u.e, session, u.n
    from unnest(v_turns, v_entities, v_counts) as u (t, e, n)
    where u.t = any(v_changed);
end
$$;

comment on function memory_internal._write_mentions(text, bigint, jsonb, jsonb, text, boolean) is
'Internal: replaces a session''s entity mentions when what its turns mention changed (only_these: the mentions '
'of the turns given alone, the others kept).';
