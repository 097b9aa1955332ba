-- The tenant of this session: `set memory.tenant_id = 'acme'`; 'default' when unset.
create or replace function memory.current_tenant() returns text
language sql
stable parallel safe
as $$ select coalesce(nullif(pg_catalog.current_setting('memory.tenant_id', true), ''), 'default') $$;

comment on function memory.current_tenant() is
'The tenant whose memory this session reads and writes: set memory.tenant_id = ''...''; default ''default''.';
