-- Recall signal "entity" (boost stage): the entities the recall is about that the turn mentions, each
-- counted by how specific it is in the scope (1 for a name said once, near 0 for one said in every turn),
-- over the number of them — those the query names (a run of its words written as a name that is an
-- entity's name or alias in the scope, "postgres" finding PostgreSQL) and those passed as entities.
-- Mentions come from enrichment's extraction (memory.entity_mentions), so a turn that calls the entity by
-- another of its names counts.
select memory_internal._define_feature(
    'entities_mentioned', 'turn', 'double precision',
    $feature$case when cardinality((r.query).entity_ids) > 0 then (
        select coalesce(sum(n.weight), 0) / (select max(g) from unnest((r.query).entity_groups) as g)
        from (
            select distinct g.name_group, g.weight
            from memory.entity_mentions as m
            inner join unnest((r.query).entity_ids, (r.query).entity_groups, (r.query).entity_weights)
                as g (entity_id, name_group, weight) on m.entity_id = g.entity_id
            where m.tenant_id = r.tenant and m.turn_id = d.turn_id and m.entity_id = any((r.query).entity_ids)
        ) as n
    ) else 0 end$feature$,
    'The recall''s entities (each name a group of keys) the turn mentions, each by how specific it is '
    || 'in the scope, over the number of names.',
    builtin => true
);

create or replace function memory_internal.signal_entity(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).entities_mentioned, 0)
$$;

select memory_internal._define_builtin_signal(
    'entity', 'boost', 'memory_internal.signal_entity(memory.recall_candidate, jsonb)', 1.0,
    'The entities of the recall (named in the query, or passed) that the turn mentions, each weighted by how '
    || 'specific it is in the scope (ln(1 + chunks / turns mentioning it) / ln(1 + chunks)), over their number.'
);
