-- Where this node stands in a Citus cluster, for what runs differently there (a table Citus holds, the
-- coordinator or a worker); without Citus, a single node.

-- Whether Citus distributes the table or replicates it to every node (false without Citus).
create or replace function memory_internal._citus_table(relation regclass) returns boolean
language plpgsql
stable
as $$
declare
    v_citus boolean := false;
begin
    if to_regclass('pg_catalog.pg_dist_partition') is not null then
        execute 'select exists (select from pg_catalog.pg_dist_partition where logicalrelid = $1)'
            into v_citus using relation;
    end if;
    return v_citus;
end
$$;

comment on function memory_internal._citus_table(regclass) is
'Internal: whether Citus distributes or replicates the table (false where Citus is not installed).';

-- This node's group in the Citus cluster: 0 on the coordinator, a worker's own number; null without Citus.
create or replace function memory_internal._citus_group() returns integer
language plpgsql
stable
as $$
declare
    v_group integer;
begin
    if to_regclass('pg_catalog.pg_dist_local_group') is not null then
        execute 'select groupid from pg_catalog.pg_dist_local_group' into v_group;
    end if;
    return v_group;
end
$$;

comment on function memory_internal._citus_group() is
'Internal: this node''s group in the Citus cluster (0: the coordinator; null where Citus is not installed).';
