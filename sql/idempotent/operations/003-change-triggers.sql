-- A table whose changes keep a summary current (the BM25 statistics of memory.chunks, the co-occurrence edges
-- of memory.entity_mentions) has three statement triggers, <table>_counted_insert, _update and _delete: each
-- runs the function once per statement with the rows it changed in the transition tables old_<rows> and
-- new_<rows>. (PostgreSQL allows transition tables only on a trigger of one event, hence three.)
create or replace function memory_internal._create_change_triggers(
    summarized regclass, transition_rows text, function regprocedure
) returns void
language plpgsql
as $$
declare
    v_table text := (select c.relname from pg_catalog.pg_class as c where c.oid = summarized);
    v_event text;
begin
    foreach v_event in array array['insert', 'update', 'delete'] loop
        execute format('drop trigger if exists %I on %s', v_table || '_counted_' || v_event, summarized);
        execute format(
            'create trigger %I after %s on %s referencing %s for each statement execute function %s()',
            v_table || '_counted_' || v_event, v_event, summarized,
            concat_ws(' ',
                      case when v_event <> 'insert' then format('old table as %I', 'old_' || transition_rows) end,
                      case when v_event <> 'delete' then format('new table as %I', 'new_' || transition_rows) end),
            function::regproc
        );
    end loop;
end
$$;

comment on function memory_internal._create_change_triggers(regclass, text, regprocedure) is
'Internal: (re)creates a table''s statement triggers <table>_counted_insert, _update and _delete, which run the '
'function with the changed rows in transition tables old_<rows> and new_<rows>.';
