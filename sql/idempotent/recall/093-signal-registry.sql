-- The registry of recall signals (memory.signals) and of the features they read (memory.recall_features).
-- A signal is a function of one candidate (memory.recall_candidate) and the settings in force (jsonb),
-- returning a number, plus one registry row: its name, its stage, its default weight and what it measures.
-- Its weight is the setting weight_<name>. Fusion-stage signals score chunks and are fused (z-score weighted
-- sum, or reciprocal rank fusion); boost-stage signals add weight x value to a turn's fused score. Recall,
-- explain_recall, their components, the client's formatting and the docs all read this registry. A feature
-- is one attribute of memory.recall_candidate: its name, the stage that computes it and its SQL expression;
-- recall's scoring statement is built from them (memory_internal._scoring_sql).

-- What makes a schema one where roles other than superusers could put code the owner would run (null:
-- nothing): its owner is not a superuser, or it lets another role create objects (memory_owner, which makes
-- the HNSW indexes of new embedding models in schema memory, is the extension itself). pg_database_owner (who
-- owns schema public) stands for the owner of this database. Signals' functions must live in such a schema, and so
-- must pgvector, whose schema is on the search_path of every function of the API (sql/tail.sql).
create or replace function memory_internal._schema_problem(schema oid) returns text
language plpgsql
stable
as $$
-- plpgsql, not sql: recall asks this for every signal, and a plpgsql function keeps its plans.
declare
    v_superusers oid [] := array(
        select r.oid from pg_catalog.pg_roles as r
        where r.rolsuper or r.rolname = 'pg_database_owner' and (
            select o.rolsuper from pg_catalog.pg_database as d
            inner join pg_catalog.pg_roles as o on d.datdba = o.oid
            where d.datname = pg_catalog.current_database()
        )
    );
begin
    return (
        select case
            when not n.nspowner = any(v_superusers)
                then format('schema %s is owned by %s, not a superuser', n.nspname, n.nspowner::regrole)
            when exists (
                select from pg_catalog.aclexplode(n.nspacl) as a
                where a.privilege_type = 'CREATE' and not a.grantee = any(v_superusers)
                    and a.grantee <> 'memory_owner'::regrole
            ) then format('schema %s lets roles other than superusers create objects', n.nspname)
        end
        from pg_catalog.pg_namespace as n
        where n.oid = schema
    );
end
$$;

comment on function memory_internal._schema_problem(oid) is
'Internal: why roles other than superusers could put code in a schema (its owner, a grant of create), or null.';

-- The function a signal names (its signature as text), or null if there is none. A schema memory_owner may not
-- use (yet: a restore loads the registry before it grants) is looked up in the catalog, for a function of the
-- signal's signature (memory.recall_candidate, jsonb).
create or replace function memory_internal._signal_function(function text) returns oid
language plpgsql
stable
as $$
declare
    v_name text [] := pg_catalog.parse_ident(pg_catalog.split_part(function, '(', 1));
    v_schema oid := case when cardinality(v_name) = 2 then pg_catalog.to_regnamespace(pg_catalog.quote_ident(v_name[1])) end;
begin
    if v_schema is null or pg_catalog.has_schema_privilege(v_schema, 'usage') then
        return pg_catalog.to_regprocedure(function);
    end if;
    return (
        select p.oid from pg_catalog.pg_proc as p
        where p.pronamespace = v_schema and p.proname = v_name[2]
            and p.pronargs = 2 and p.proargtypes[0] = 'memory.recall_candidate'::regtype
            and p.proargtypes[1] = 'pg_catalog.jsonb'::regtype
    );
end
$$;

comment on function memory_internal._signal_function(text) is
'Internal: the function a signal names, found even in a schema memory_owner may not use, or null.';

-- Recall runs a signal's function as the owner, in every tenant's recall: only code a superuser put where
-- only a superuser can change it may be one. What is wrong with a signal's function (null: nothing): it
-- must exist; be owned by a superuser (or memory_owner, the extension's own); live in a schema with no
-- problem (memory_internal._schema_problem), never a temporary one; and, outside the extension's schemas, be
-- callable by memory_owner (with callable false, that is not asked: a restore loads signals before it grants).
-- It finds the function without the privileges a name lookup needs. Recall skips a signal with a problem
-- and says so in components.degraded; memory.define_signal refuses one, and so does any write to
-- memory.signals (but for callable).
create or replace function memory_internal._signal_problem(function text, callable boolean default true)
returns text
language plpgsql
stable
as $$
declare
    v_oid oid := memory_internal._signal_function(function);
    v_proc record;
begin
    if v_oid is null then
        return format('function %s does not exist', function);
    end if;
    select n.oid as schema, n.nspname as schema_name, owner.rolsuper as by_superuser, owner.rolname as owner
    into v_proc
    from pg_catalog.pg_proc as p
    inner join pg_catalog.pg_namespace as n on p.pronamespace = n.oid
    inner join pg_catalog.pg_roles as owner on p.proowner = owner.oid
    where p.oid = v_oid;
    return case
        when v_proc.schema_name ~ '^pg_(toast_)?temp_' then format('function %s is in a temporary schema', function)
        when not v_proc.by_superuser and v_proc.owner <> 'memory_owner'
            then format('function %s is owned by %s, not a superuser', function, v_proc.owner)
        when memory_internal._schema_problem(v_proc.schema) is not null
            then format('function %s: %s', function, memory_internal._schema_problem(v_proc.schema))
        when callable and v_proc.schema_name not in ('memory', 'memory_internal') and not (
            pg_catalog.has_schema_privilege('memory_owner', v_proc.schema, 'usage')
            and pg_catalog.has_function_privilege('memory_owner', v_oid, 'execute')
        ) then format('memory_owner may not call function %s (grant it usage on schema %s and execute on it)',
                      function, v_proc.schema_name)
    end;
end
$$;

comment on function memory_internal._signal_problem(text, boolean) is
'Internal: why a signal''s function may not run in recall (missing, in a temporary schema, owned by or in a '
'schema writable by a role other than a superuser, or, when asked, not callable by memory_owner), or null.';

create or replace function memory_internal._signal_validate() returns trigger
language plpgsql
security definer
as $$
declare
    v_oid oid := memory_internal._signal_function(new.function);
    v_proc record;
begin
    if v_oid is null then
        raise exception 'agent_memory: signal "%": function % does not exist', new.name, new.function
            using errcode = 'undefined_function';
    end if;
    -- The signature, every name schema-qualified whatever the search_path.
    new.function := (pg_catalog.pg_identify_object('pg_catalog.pg_proc'::regclass, v_oid, 0)).identity;
    select p.pronargs, p.proargtypes[0] as first, p.proargtypes[1] as second, p.prorettype, p.provolatile,
           p.proretset
    into v_proc
    from pg_catalog.pg_proc as p where p.oid = v_oid;
    if v_proc.pronargs <> 2 or v_proc.first <> 'memory.recall_candidate'::regtype
        or v_proc.second <> 'jsonb'::regtype or v_proc.prorettype <> 'double precision'::regtype or v_proc.proretset then
        raise exception 'agent_memory: signal "%" needs a function (memory.recall_candidate, jsonb) returning '
            'double precision, got %', new.name, new.function using errcode = 'invalid_parameter_value';
    end if;
    if memory_internal._signal_problem(new.function, callable => false) is not null then
        raise exception 'agent_memory: signal "%": %', new.name,
            memory_internal._signal_problem(new.function, callable => false)
            using errcode = 'insufficient_privilege',
                  hint = 'recall runs a signal''s function as the extension''s owner: a superuser creates it, in a '
                         'schema only superusers may create in';
    end if;
    if v_proc.provolatile = 'v' then
        raise exception 'agent_memory: signal "%": function % must be immutable or stable, not volatile',
            new.name, new.function using errcode = 'invalid_parameter_value';
    end if;
    return new;
end
$$;

comment on function memory_internal._signal_validate() is
'Internal: trigger that checks a signal''s function: signature, volatility, and who may change it.';

drop trigger if exists signals_validate on memory.signals;
create trigger signals_validate before insert or update on memory.signals
for each row execute function memory_internal._signal_validate();

-- Adds a signal to recall, or changes one: the function and its registry row. Built-in signals are
-- defined the same way by the extension's own files.
create or replace function memory.define_signal(
    name text, stage text, function regprocedure, default_weight double precision, measures text
) returns void
language plpgsql
as $$
begin
    -- Recall must be able to call it, too (a write of memory.signals asks less: a restore grants afterwards).
    if memory_internal._signal_problem(define_signal.function::oid::regprocedure::text) is not null then
        raise exception 'agent_memory: signal "%": %', define_signal.name,
            memory_internal._signal_problem(define_signal.function::oid::regprocedure::text)
            using errcode = 'insufficient_privilege',
                  hint = 'recall runs a signal''s function as the extension''s owner: a superuser creates it, in a '
                         'schema only superusers may create in';
    end if;
    insert into memory.signals as s (name, stage, function, default_weight, measures)
    values (define_signal.name, define_signal.stage, define_signal.function::text, define_signal.default_weight,
            define_signal.measures)
    on conflict on constraint signals_pkey do update
    set stage = excluded.stage, function = excluded.function, default_weight = excluded.default_weight,
        measures = excluded.measures;
end
$$;

comment on function memory.define_signal(text, text, regprocedure, double precision, text) is
'Adds (or changes) a recall signal: name, stage (fusion: a list score fused with the others; boost: '
'added as weight x value), its function (memory.recall_candidate, jsonb) -> double precision, its '
'default weight (the setting weight_<name>) and what it measures. Recall and explain use it at once.';

create or replace function memory_internal._define_builtin_signal(
    name text, stage text, function regprocedure, default_weight double precision, measures text
) returns void
language plpgsql
as $$
begin
    perform memory.define_signal(name, stage, function, default_weight, measures);
    update memory.signals as s set builtin = true where s.name = _define_builtin_signal.name;
    execute format('comment on function %s is %L', function, format('Recall signal %s (%s stage): %s', name, stage,
                                                                      measures));
end
$$;

comment on function memory_internal._define_builtin_signal(text, text, regprocedure, double precision, text) is
'Internal: defines one of the extension''s own signals (not dumped: every install defines them) and '
'comments its function with what it measures.';

-- The signals in pipeline order: fusion first, then boosts, each by name.
create or replace function memory.signal_definitions()
returns table (
    name text, stage text, weight_setting text, weight double precision, default_weight double precision,
    function regprocedure, measures text, builtin boolean
)
language sql
stable
as $$
    select s.name, s.stage, 'weight_' || s.name, (memory.setting('weight_' || s.name))::double precision,
           s.default_weight, to_regprocedure(s.function), s.measures, s.builtin
    from memory.signals as s
    order by s.stage = 'boost', s.name
$$;

comment on function memory.signal_definitions() is
'Every recall signal in pipeline order: name, stage (fusion or boost), its weight setting and the weight '
'in force, the default weight, its function and what it measures.';

comment on type memory.recall_candidate is
'What a signal function sees of a recall candidate: a chunk (fusion stage) or a turn with its best chunk '
'and fused score (boost stage); fields a stage does not know are null.';

-- What is wrong with an object a feature's SQL uses (null: nothing), by the rules of a signal's function
-- (memory_internal._signal_problem): owned by a superuser or memory_owner, in a schema with no problem, never
-- a temporary one.
create or replace function memory_internal._object_problem(object text, owner oid, schema oid) returns text
language plpgsql
stable
as $$
begin
    return case
        when (select n.nspname from pg_catalog.pg_namespace as n where n.oid = schema) ~ '^pg_(toast_)?temp_'
            then format('%s is in a temporary schema', object)
        when not (select r.rolsuper from pg_catalog.pg_roles as r where r.oid = owner) and owner <> 'memory_owner'::regrole
            then format('%s is owned by %s, not a superuser', object, owner::regrole)
        when memory_internal._schema_problem(schema) is not null
            then format('%s: %s', object, memory_internal._schema_problem(schema))
    end;
end
$$;

comment on function memory_internal._object_problem(text, oid, oid) is
'Internal: why code recall would run as the owner could be changed by a role other than a superuser (its '
'owner, its schema), or null.';

-- A feature's row is its attribute of memory.recall_candidate: the trigger adds the attribute (so a restore
-- of the registry adds it too) or checks that the one there has the feature's type. Only a superuser writes
-- the registry (an expression runs as the owner in every recall): table privileges keep other roles out, and
-- this check keeps out any role granted writes on every table (pg_write_all_data). The type is a base or
-- composite type a superuser owns (a domain's checks would run as the owner; a row of null features must be
-- valid). The built-in rows, which the statement's own parts read, are not deleted.
create or replace function memory_internal._recall_feature_validate() returns trigger
language plpgsql
as $$
declare
    v_type regtype;
    v_attribute regtype;
begin
    if not pg_catalog.current_setting('is_superuser')::boolean then
        raise exception 'agent_memory: only a superuser may change recall''s features (% is not one)', current_user
            using errcode = 'insufficient_privilege',
                  hint = 'a feature''s expression runs as the extension''s owner in every tenant''s recall';
    end if;
    if tg_op = 'DELETE' then
        if old.builtin then
            raise exception 'agent_memory: feature "%" is built in', old.name using errcode = 'invalid_parameter_value';
        end if;
        return old;
    end if;
    if length(new.name) > 63 then
        raise exception 'agent_memory: feature name "%" is longer than 63 characters', new.name
            using errcode = 'name_too_long';
    end if;
    v_type := pg_catalog.to_regtype(new.type);
    if v_type is null then
        raise exception 'agent_memory: feature "%": type % does not exist', new.name, new.type
            using errcode = 'undefined_object';
    end if;
    if (select t.typtype from pg_catalog.pg_type as t where t.oid = v_type) not in ('b', 'c', 'e') then
        raise exception 'agent_memory: feature "%": type % is not a base, composite or enum type', new.name, v_type
            using errcode = 'invalid_parameter_value';
    end if;
    if (select memory_internal._object_problem(format('type %s', v_type), t.typowner, t.typnamespace)
        from pg_catalog.pg_type as t where t.oid = v_type) is not null then
        raise exception 'agent_memory: feature "%": %', new.name,
            (select memory_internal._object_problem(format('type %s', v_type), t.typowner, t.typnamespace)
             from pg_catalog.pg_type as t where t.oid = v_type)
            using errcode = 'insufficient_privilege';
    end if;
    new.type := pg_catalog.format_type(v_type, null);
    v_attribute := (
        select a.atttypid::regtype from pg_catalog.pg_attribute as a
        where a.attrelid = 'memory.recall_candidate'::regclass and a.attname = new.name and a.attnum > 0
            and not a.attisdropped
    );
    if v_attribute is null then
        execute format('alter type memory.recall_candidate add attribute %I %s', new.name, new.type);
    elsif v_attribute <> v_type then
        raise exception 'agent_memory: feature "%" is a % in memory.recall_candidate, not a %', new.name,
            pg_catalog.format_type(v_attribute, null), new.type
            using errcode = 'datatype_mismatch',
                  hint = 'give the feature another name, or its type';
    end if;
    return new;
end
$$;

comment on function memory_internal._recall_feature_validate() is
'Internal: trigger that keeps the registry of features a superuser''s and makes a feature''s attribute of '
'memory.recall_candidate (or checks its type).';

drop trigger if exists recall_features_validate on memory.recall_features;
create trigger recall_features_validate before insert or update or delete on memory.recall_features
for each row execute function memory_internal._recall_feature_validate();

-- Writes a feature's row: memory.define_feature's (checked there) and the extension's own (builtin).
create or replace function memory_internal._define_feature(
    name text, stage text, type regtype, expression text, describes text, builtin boolean
) returns void
language plpgsql
as $$
begin
    insert into memory.recall_features as f (name, stage, type, expression, describes, builtin)
    values (name, stage, type::text, expression, describes, builtin)
    on conflict on constraint recall_features_pkey do update
    set stage = excluded.stage, type = excluded.type, expression = excluded.expression, describes = excluded.describes,
        builtin = excluded.builtin;
end
$$;

comment on function memory_internal._define_feature(text, text, regtype, text, text, boolean) is
'Internal: writes a recall feature''s row (builtin: one of the extension''s own, not dumped, defined by every '
'install).';

-- The features in pipeline order (chunk, fusion, turn, memory), each by its place in memory.recall_candidate.
create or replace function memory.feature_definitions()
returns table (name text, stage text, type text, expression text, describes text, builtin boolean)
language sql
stable
as $$
    select f.name, f.stage, f.type, f.expression, f.describes, f.builtin
    from memory.recall_features as f
    inner join pg_catalog.pg_attribute as a on a.attrelid = 'memory.recall_candidate'::regclass and a.attname = f.name
    order by array_position(array['chunk', 'fusion', 'turn', 'memory'], f.stage), a.attnum
$$;

comment on function memory.feature_definitions() is
'Every recall feature (an attribute of memory.recall_candidate that signals read) in pipeline order: name, '
'stage (chunk, fusion, turn or memory), type, SQL expression (null for the fusion stage, computed by the '
'pipeline) and what it describes.';
