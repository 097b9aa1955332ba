-- The twelve types of the knowledge graph's entities, in one place for every check that names them (the
-- table memory.entities keeps its own CHECK, written once when the table was made).
create or replace function memory_internal._entity_types() returns text[]
language sql
immutable parallel safe
as $$
    select array['person', 'project', 'concept', 'tool', 'metric', 'org', 'place', 'event', 'doc', 'task', 'topic',
                 'other']
$$;

comment on function memory_internal._entity_types() is
'Internal: the twelve entity types (person, project, concept, tool, metric, org, place, event, doc, task, '
'topic, other).';
