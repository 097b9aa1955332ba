-- Runs last in every install and upgrade script.

-- Pin every function of the extension to a safe search_path: pg_catalog, the schema pgvector was
-- installed in (its types and operators), pg_temp last. Bodies name our own objects as memory.x.
-- Procedures are left out: one with a SET clause cannot commit; theirs qualify every name instead.
-- So are the few `language sql` expressions that recall inlines into its queries, the signals of
-- memory.signals among them (a SET clause would stop the planner from inlining them); they name tables
-- as memory.x and call operators of pg_catalog.
do $pin$
declare
    v_vector_schema text := (
        select n.nspname
        from pg_catalog.pg_extension as e
        inner join pg_catalog.pg_namespace as n on e.extnamespace = n.oid
        where e.extname = 'vector'
    );
    v_function regprocedure;
begin
    for v_function in
        select p.oid::regprocedure
        from pg_catalog.pg_proc as p
        inner join pg_catalog.pg_depend as d
            on d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e'
        inner join pg_catalog.pg_extension as e on d.refobjid = e.oid
        where e.extname = 'agent_memory' and p.prokind <> 'p'
            and p.oid <> all(array[
                'memory._bm25_term(float8, float8, float8, float8, float8, float8)'::regprocedure,
                'memory._chunk_bm25(tsvector, integer, integer, text[], float8[], float8, float8, float8, float8)'
                ::regprocedure,
                'memory._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, text[], text)'::regprocedure
            ])
            and not exists (select from memory.signals as s where s.function = p.oid)
    loop
        execute format(
            'alter function %s set search_path = pg_catalog, %I, pg_temp', v_function, v_vector_schema
        );
    end loop;
end
$pin$;
