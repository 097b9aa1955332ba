-- Rows locked to take turns on one node, which only the owner can lock (nobody else may read or lock them). Each
-- node of a Citus cluster keeps its own (the tenant '' of memory_internal._locks is on one node). Maintenance runs
-- one at a time on a node on the row 'maintain', which was ('', 'maintain') of memory_internal._locks.
create table memory_internal._node_locks (
    name text primary key
);

insert into memory_internal._node_locks (name) values ('maintain');

comment on table memory_internal._node_locks is
'Rows locked by the API''s functions to take turns on this node (maintenance): locks no other role can take.';

delete from memory_internal._locks
where tenant_id = '' and name = 'maintain';

comment on table memory_internal._locks is
'Rows locked by the API''s functions to take turns (writers of one claim of a tenant): locks no other role can '
'take.';
