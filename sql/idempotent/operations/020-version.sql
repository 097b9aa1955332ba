create or replace function memory.version() returns text
language sql
immutable parallel safe
as $$ select '@extversion@'::text $$;

comment on function memory.version() is 'The version of the agent_memory SQL objects installed in this database.';
