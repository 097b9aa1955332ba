-- Maintenance takes turns on a lock of the table of its record, memory.maintenance_runs, which each node of a
-- Citus cluster keeps of its own (the tenant '' of memory_internal._locks is on one node): its row there goes.
delete from memory_internal._locks
where tenant_id = '' and name = 'maintain';

comment on table memory_internal._locks is
'Rows locked by the API''s functions to take turns (writers of one claim of a tenant): locks no other role can '
'take.';
