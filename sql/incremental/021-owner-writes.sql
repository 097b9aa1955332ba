-- Tenants write only through the API (0.3.0): the API's functions run as memory_owner (sql/tail.sql), so
-- who did something is the session's login, not current_user (which is memory_owner inside them).
alter table memory.config alter column updated_by set default session_user;
alter table memory.feedback alter column given_by set default session_user;
alter table memory.tenant_roles alter column bound_by set default session_user;
alter table memory.entity_states alter column recorded_by set default session_user;
alter table memory.memories alter column recorded_by set default session_user;
alter table memory.memory_merges alter column recorded_by set default session_user;
alter table memory.maintenance_runs alter column run_by set default session_user;
alter table memory.tombstones alter column forgotten_by set default session_user;
alter table memory.retention_policies alter column created_by set default session_user;
alter table memory.archives alter column created_by set default session_user;

-- Locks only the owner can take: a row of this table, locked by the API's functions (nobody else may read
-- or lock it). Maintenance runs one at a time on the row ('', 'maintain'); the writers of one claim of a
-- tenant (remember with a key, or the same words) take turns on a row of that tenant
-- (memory_internal._lock_claim). An advisory lock, which any role may take on any key, let a stranger stop
-- maintenance and a tenant's remember.
create table memory_internal._locks (
    tenant_id text not null,
    name text not null,
    primary key (tenant_id, name)
);

insert into memory_internal._locks (tenant_id, name) values ('', 'maintain');

comment on table memory_internal._locks is
'Rows locked by the API''s functions to take turns (maintenance; writers of one claim of a tenant): locks no '
'other role can take.';
