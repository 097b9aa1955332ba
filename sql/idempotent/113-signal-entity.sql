-- Recall signal "entity" (boost stage): the entities the recall is about that the turn mentions, each
-- counted by how specific it is in the scope (1 for a name said once, near 0 for one said in every turn),
-- over the number of them — those the query names (a run of its words written as a name that is an
-- entity's name or alias in the scope, "postgres" finding PostgreSQL) and those passed as entities.
-- Mentions come from enrichment's extraction (memory.entity_mentions), so a turn that calls the entity by
-- another of its names counts.
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
