-- One call of the API for a tenant named in it: memory.call('acme', 'recall', '{"query": "..."}'). On a single
-- node it is the named function called after set memory.tenant_id. It exists for Citus (memory_internal._distribute),
-- which runs a function call on the node holding its distribution argument's shards only when that argument
-- is a value in the statement the client sends: a call made inside another function runs where that function
-- runs, each of its statements routed on its own, and the API's functions take the tenant from the session,
-- never from an argument. memory.call is distributed by tenant_id, so a call is one round trip to the worker
-- that holds the tenant, where the API function's statements read and write local shards. It is strict: Citus
-- 12.1's coordinator crashes on a distributed function called with a null distribution argument, and a strict
-- one called so is null without running.

-- Runs as its caller (tail.sql), so that the function called checks the caller's privileges, as it would
-- called directly; so it reads the catalog itself (memory_internal is not the caller's to use). Each function
-- of schema memory of that name is described by its input parameters: whether the names given fit it (every
-- one it requires among them, none it does not know) and the statement that calls it with the arguments of a
-- JSON object ($1), each read as the type of its parameter (jsonb_to_record: a JSON array to an array, an
-- object to json or jsonb), every row it returns as JSON (null for a function that returns nothing).
create or replace function memory.call(tenant_id text, function_name text, arguments jsonb)
returns setof jsonb
language plpgsql
strict
as $$
declare
    v_session_tenant text := pg_catalog.current_setting('memory.tenant_id', true);
    v_names text[];
    v_fitting integer;
    v_takes text;
    v_statement text;
begin
    if pg_catalog.jsonb_typeof(arguments) <> 'object' then
        raise exception 'agent_memory: memory.call takes the arguments as a JSON object of names and values, got %',
            pg_catalog.jsonb_typeof(arguments) using errcode = 'invalid_parameter_value';
    end if;
    if function_name = 'call' then
        raise exception 'agent_memory: memory.call cannot call itself' using errcode = 'invalid_parameter_value';
    end if;
    v_names := array(select k from pg_catalog.jsonb_object_keys(arguments) as k order by k);
    select count(*) filter (where f.fits), string_agg(f.takes, '; '), (array_agg(f.statement) filter (where f.fits))[1]
    into v_fitting, v_takes, v_statement
    from (
        select format('memory.%s(%s)', p.proname, pg_catalog.pg_get_function_arguments(p.oid)) as takes,
               coalesce(i.names, '{}') @> v_names and v_names @> coalesce(i.required, '{}') as fits,
               format('select %s from %s memory.%I(%s) as r',
                      case when p.prorettype = 'void'::regtype then 'null::jsonb' else 'pg_catalog.to_jsonb(r)' end,
                      'pg_catalog.jsonb_to_record($1) as a (' || i.columns || ') cross join lateral',
                      p.proname, coalesce(i.named, '')) as statement
        from pg_catalog.pg_proc as p
        cross join lateral (
            select array_agg(a.name order by a.n) as names,
                   array_agg(a.name order by a.n) filter (where a.n <= p.pronargs - p.pronargdefaults) as required,
                   string_agg(format('%I %s', a.name, a.type::regtype), ', ' order by a.n)
                       filter (where a.name = any(v_names)) as columns,
                   string_agg(format('%I => a.%I', a.name, a.name), ', ' order by a.n)
                       filter (where a.name = any(v_names)) as named
            from (
                select a.name, a.type, row_number() over (order by a.n) as n
                from unnest(p.proargnames, coalesce(p.proallargtypes, p.proargtypes::oid []),
                            coalesce(p.proargmodes, array_fill('i'::"char", array[p.pronargs])))
                    with ordinality as a (name, type, mode, n)
                where a.mode in ('i', 'b', 'v')
            ) as a
        ) as i
        where p.pronamespace = 'memory'::regnamespace and p.proname = function_name and p.prokind = 'f'
    ) as f;
    if v_takes is null then
        raise exception 'agent_memory: memory.call: the API has no function memory.%', function_name
            using errcode = 'undefined_function';
    elsif v_fitting <> 1 then
        raise exception 'agent_memory: memory.call: % memory.% takes the arguments {%}',
            case when v_fitting = 0 then 'no function' else 'more than one function' end, function_name,
            pg_catalog.array_to_string(v_names, ', ')
            using errcode = 'undefined_function', hint = 'It takes: ' || v_takes || '.';
    end if;
    -- For this call only (a role bound to a tenant keeps its own whatever the setting says).
    perform pg_catalog.set_config('memory.tenant_id', call.tenant_id, true);
    if memory.current_tenant() is distinct from call.tenant_id then
        raise exception 'agent_memory: memory.call: role % acts for tenant %, not %', session_user,
            memory.current_tenant(), call.tenant_id using errcode = 'insufficient_privilege';
    end if;
    return query execute v_statement using arguments;
    perform pg_catalog.set_config('memory.tenant_id', coalesce(v_session_tenant, ''), true);
end
$$;

comment on function memory.call(text, text, jsonb) is
'Calls the function of the API named function_name (recall, commit, remember, ...) for tenant_id, with its '
'arguments as a JSON object of names and values ({"query": "...", "k": 5}), and returns each row it returns '
'as JSON (null for a function that returns nothing). As the function called after set memory.tenant_id = '
'tenant_id, for this call only: a role bound to another tenant is refused, and the caller needs the privilege '
'to run the function. On a Citus cluster it runs on the worker that holds the tenant: the call to route. '
'Strict: a null argument returns nothing.';
