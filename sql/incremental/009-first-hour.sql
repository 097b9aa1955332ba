-- The extension's internals move from memory._* to schema memory_internal (created by head.sql), and the
-- built-in signal functions with them: \df memory.* then lists the public API only. Objects keep their
-- identity (triggers, policies, defaults and dependent objects follow them); the idempotent files that
-- run next replace the functions' bodies, which name memory_internal.
do $move$
declare
    v_statement text;
begin
    for v_statement in
        select format('alter %s %s set schema memory_internal',
                      case p.prokind when 'p' then 'procedure' else 'function' end, p.oid::regprocedure)
        from pg_catalog.pg_proc as p
        where p.pronamespace = 'memory'::regnamespace
            and (p.proname like '\_%' or p.proname like 'signal\_%' and p.proname <> 'signal_definitions')
            and exists (select from pg_catalog.pg_depend as d
                        where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
        union all
        select format('alter table %s set schema memory_internal', c.oid::regclass)
        from pg_catalog.pg_class as c
        where c.relnamespace = 'memory'::regnamespace and c.relkind = 'r' and c.relname like '\_%'
            and exists (select from pg_catalog.pg_depend as d
                        where d.classid = 'pg_catalog.pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
        union all
        select format('alter type %s set schema memory_internal', t.oid::regtype)
        from pg_catalog.pg_type as t
        where t.typnamespace = 'memory'::regnamespace and t.typtype = 'c' and t.typrelid <> 0
            and t.typname like '\_%'
            and (select c.relkind from pg_catalog.pg_class as c where c.oid = t.typrelid) = 'c'
            and exists (select from pg_catalog.pg_depend as d
                        where d.classid = 'pg_catalog.pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
    loop
        execute v_statement;
    end loop;
    -- The registry names signal functions as text: name the moved ones where they are now.
    update memory.signals as s
    set function = replace(s.function, 'memory.signal_', 'memory_internal.signal_')
    where s.builtin and s.function like 'memory.signal\_%';
end
$move$;

-- remember gained an enrich argument (a remembered fact is recallable at once).
drop function if exists memory.remember(text, text, text, jsonb);

-- A session named without its agent (forget, enrich, reindex of whichever agent has it) is found by name.
create index sessions_by_name on memory.sessions (tenant_id, session_id);
