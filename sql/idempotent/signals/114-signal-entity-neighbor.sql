-- Recall signal "entity_neighbor" (boost stage): 1 when the turn mentions one of the ten entities most
-- often mentioned together with the recall's entities (their neighbours in the co-occurrence graph,
-- memory.entity_edges), 0 otherwise.
select memory_internal._define_feature(
    'neighbor_mentioned', 'turn', 'boolean',
    $feature$cardinality((r.query).neighbor_ids) > 0 and exists (
        select from memory.entity_mentions as m
        where m.tenant_id = r.tenant and m.turn_id = d.turn_id and m.entity_id = any((r.query).neighbor_ids)
    )$feature$,
    'Whether the turn mentions one of the graph neighbours of the recall''s entities.',
    builtin => true
);

create or replace function memory_internal.signal_entity_neighbor(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).neighbor_mentioned then 1.0 else 0.0 end
$$;

select memory_internal._define_builtin_signal(
    'entity_neighbor', 'boost', 'memory_internal.signal_entity_neighbor(memory.recall_candidate, jsonb)', 0.0,
    '1 when the turn mentions one of the ten entities most often mentioned with the recall''s entities '
    || '(graph neighbours), else 0.'
);
