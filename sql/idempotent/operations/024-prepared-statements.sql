-- Statements on this node's tables. Statements about one tenant, built as text, prepared once per session and
-- kept with their plans (recall's scoring statement; on Citus, commit's turns and the counters too:
-- memory_internal._adapt_to_citus); on a Citus node, where the tenant's shards are, they name the shards. And the
-- tables here that hold a table's rows, and the tenants in them (the queue's worker claims from those, and
-- maintenance works through these: on Citus, the node's shards and its tenants).

-- (0.3.0's scoring statement of recall alone: memory_internal._prepared.)
drop function if exists memory_internal._scoring_statement(text, text);

-- A statement about one tenant prepared once per session under a name of its purpose and the md5 of its text
-- (a changed text makes a new statement), with its parameters' types: the name to execute. Planning recall's
-- scoring statement on every call cost as much as running it. On a Citus node it names the tenant's shards
-- there (memory_internal._on_local_shards): one statement a shard group.
-- The session is the caller's, who may have prepared a statement of that name itself: one whose text or
-- parameter types are not exactly these is replaced. The types are written with their schema (a caller's
-- temporary schema comes first for type names in its own search_path), and the same text with the same types
-- is the same statement whoever prepared it: PostgreSQL parses the query again under this function's
-- search_path, where pg_temp comes last, and plans it again for the role that executes it.
create or replace function memory_internal._prepared(purpose text, statement text, types text[], tenant text)
returns text
language plpgsql
volatile
as $$
declare
    v_sql text := memory_internal._on_local_shards(statement, tenant);
    v_name text := format('memory_%s_%s', purpose, md5(v_sql));
    v_prepare text := format('prepare %I (%s) as %s', v_name, array_to_string(types, ', '), v_sql);
    v_found record;
begin
    select p.statement, p.parameter_types into v_found
    from pg_catalog.pg_prepared_statements as p where p.name = v_name;
    if v_found.statement is distinct from v_prepare
        or v_found.parameter_types is distinct from types::regtype [] then
        if v_found.statement is not null then
            execute format('deallocate %I', v_name);
        end if;
        execute v_prepare;
    end if;
    return v_name;
end
$$;

comment on function memory_internal._prepared(text, text, text[], text) is
'Internal: the name of this session''s prepared statement of a purpose for one tenant (prepared again when a '
'statement of that name has other text or parameter types; on Citus, on the tenant''s shards here).';

-- Holds the metadata of shards as Citus's own writes do (a share lock, which a shard move's exclusive one waits
-- for, and which waits for a move under way), until the transaction ends; then whether each is still placed on
-- this node. A statement that names shards runs on them only so held: else a write could land in a shard after a
-- move had copied it, and be lost with it. (Citus lets the shards' owner alone take it: the API's functions run
-- as memory_owner.)
create or replace function memory_internal._hold_shards_here(shards bigint[]) returns boolean
language plpgsql
volatile
as $$
begin
    -- (5: ShareLock, which Citus takes for a write of a shard.)
    perform pg_catalog.lock_shard_metadata(5, array(select s.shard from unnest(shards) as s (shard) order by 1));
    return not exists (
        select from unnest(shards) as s (shard)
        where not exists (
            select from pg_dist_placement as l
            where l.shardid = s.shard and l.groupid = (select g.groupid from pg_dist_local_group as g)
        )
    );
end
$$;

comment on function memory_internal._hold_shards_here(bigint[]) is
'Internal: holds shards as a Citus write does (until the transaction ends); whether each is placed on this node.';

-- A statement about one tenant as it runs on the Citus node that holds the tenant: each of the
-- extension's tables Citus holds that it names becomes that table's shard here (the tenant's, of a distributed
-- table; the copy, of a reference table), a table PostgreSQL plans as on one node and a prepared statement keeps
-- the plan of. Citus plans a statement about its own tables on every run, and once more for the shard it runs
-- on: recall's scoring statement took 25 ms on a worker against 1.6 ms on one node. The statement unchanged
-- without Citus, or where a shard it needs is not on this node. The shards' row-level security holds as the
-- tables' does (Citus gives each shard its table's policies). The shards are held as Citus's own writes hold
-- them, until the transaction ends (memory_internal._hold_shards_here).
create or replace function memory_internal._on_local_shards(statement text, tenant text) returns text
language plpgsql
volatile
as $$
declare
    v_names text[];
    v_shards text[];
    v_ids bigint[];
begin
    if to_regclass('pg_catalog.pg_dist_partition') is null then
        return statement;
    end if;
    -- (A table's name as regclass prints it, qualified: this function's search_path has neither schema. Not
    -- pg_class, where Citus makes each read ask of every row whether it is a shard.)
    select array_agg(t.name), array_agg(pg_catalog.shard_name(p.logicalrelid, s.shardid)), array_agg(s.shardid)
    into v_names, v_shards, v_ids
    from pg_dist_partition as p
    cross join lateral (select p.logicalrelid::regclass::text) as t (name)
    cross join lateral (
        select case when p.partmethod = 'h' then pg_catalog.get_shard_id_for_distribution_column(p.logicalrelid, tenant)
                    else (select min(d.shardid) from pg_dist_shard as d where d.logicalrelid = p.logicalrelid) end
    ) as s (shardid)
    where t.name ~ '^memory(_internal)?\.' and pg_catalog.strpos(statement, t.name) > 0;
    if v_names is null or not memory_internal._hold_shards_here(v_ids) then
        return statement;
    end if;
    return memory_internal._renamed(statement, v_names, v_shards);
end
$$;

comment on function memory_internal._on_local_shards(text, text) is
'Internal: a statement about one tenant with the tables Citus holds named by their shards on this node, where '
'the tenant''s are (else, and without Citus, unchanged).';

-- A statement with each qualified name of names replaced by the shard at the same place (agent_memory_db.shards).
create or replace function memory_internal._renamed(statement text, names text[], shards text[]) returns text
language plpython3u
immutable
as $$
@load_python@
from agent_memory_db.shards import renamed
return renamed(statement, dict(zip(names, shards)))
$$;

comment on function memory_internal._renamed(text, text[], text[]) is
'Internal: a statement with each qualified table name of names replaced by the shard at the same place.';

-- The tables on this node that hold a table's rows, each with its shard (none: the table itself, without Citus);
-- on a Citus node that distributes it, its shards placed here (none on a coordinator that holds none).
create or replace function memory_internal._tables_here(relation regclass) returns table (name text, shard bigint)
language plpgsql
stable
as $$
begin
    if not memory_internal._citus_table(relation) then
        return query select relation::text, null::bigint;
        return;
    end if;
    return query
    select pg_catalog.shard_name(s.logicalrelid, s.shardid), s.shardid
    from pg_dist_shard as s
    inner join pg_dist_placement as l on l.shardid = s.shardid
    where s.logicalrelid = relation and l.groupid = (select g.groupid from pg_dist_local_group as g)
    order by s.shardid;
end
$$;

comment on function memory_internal._tables_here(regclass) is
'Internal: the tables on this node that hold a table''s rows, with their shards (the table itself without Citus; '
'on Citus, its shards placed here).';

-- The tenants with rows of a table on this node (on a Citus node, in its shards here, each held until the
-- transaction ends, so that no move takes one meanwhile): what maintenance works through on each node.
create or replace function memory_internal._tenants_here(relation regclass) returns setof text
language plpgsql
volatile
as $$
declare
    v_table record;
    v_tenants text[] := '{}';
begin
    for v_table in select t.name, t.shard from memory_internal._tables_here(relation) as t loop
        continue when v_table.shard is not null and not memory_internal._hold_shards_here(array[v_table.shard]);
        execute format('select array_agg(distinct r.tenant_id) from %s as r', v_table.name) into v_tenants;
        return query select t.tenant_id from unnest(v_tenants) as t (tenant_id);
    end loop;
end
$$;

comment on function memory_internal._tenants_here(regclass) is
'Internal: the tenants with rows of a table on this node (on Citus, in its shards here, held while the '
'transaction lasts).';

-- A statement that returns a count, run on each table here that holds a table's rows (%1$s in it is the table's
-- name; on a Citus node, each of its shards here, held until the transaction ends): the sum of the counts. What
-- maintenance does to every tenant on each node.
create or replace function memory_internal._count_on_tables_here(relation regclass, statement text) returns bigint
language plpgsql
volatile
as $$
declare
    v_table record;
    v_count bigint;
    v_total bigint := 0;
begin
    for v_table in select t.name, t.shard from memory_internal._tables_here(relation) as t loop
        continue when v_table.shard is not null and not memory_internal._hold_shards_here(array[v_table.shard]);
        execute format(statement, v_table.name) into v_count;
        v_total := v_total + v_count;
    end loop;
    return v_total;
end
$$;

comment on function memory_internal._count_on_tables_here(regclass, text) is
'Internal: runs a statement returning a count on each table here that holds a table''s rows (on Citus, its shards '
'here, held while the transaction lasts); the sum.';
