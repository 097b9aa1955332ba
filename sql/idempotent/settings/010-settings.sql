-- Settings: a catalog of defaults, DBA overrides in memory.config, per-session overrides with
-- `set memory.<key> = ...`. Precedence, highest first: per-call argument (where a function takes
-- one), session setting, memory.config, default.

-- The declarations are made again below, each subsystem's in its folder's NNN-settings.toml (the assembler
-- makes each table of it a call of memory_internal._declare_setting): a setting this version no longer has
-- is gone.
delete from memory_internal._declared_settings;

-- Declares a setting: its key, default, JSON type, meaning, and what values it takes (allowed: the values,
-- or for an array the values its items may take; minimum and maximum: the range, or for an array how many
-- items it needs at least); set_by admin: only memory.config, or a session of memory_admin, may change it
-- (an endpoint, a model, a time bound, what maintenance deletes); checked_by: a function of the value that
-- raises an error naming the problem, for checks a type and range cannot say. Once every file has run, each
-- default is checked (memory_internal._check_setting_defaults, from tail.sql).
create or replace function memory_internal._declare_setting(
    key text, default_value jsonb, value_type text, description text,
    allowed jsonb default null, minimum numeric default null, maximum numeric default null,
    set_by text default 'session', checked_by text default null
) returns void
language plpgsql
as $$
begin
    insert into memory_internal._declared_settings (
        key, default_value, value_type, allowed, minimum, maximum, description, set_by, checked_by
    )
    values (key, default_value, value_type, allowed, minimum, maximum, description, set_by, checked_by);
end
$$;

comment on function memory_internal._declare_setting(text, jsonb, text, text, jsonb, numeric, numeric, text, text) is
'Internal: declares a setting (each subsystem its own, on every install).';

-- Every setting the extension knows: those declared, and the weight of each recall signal (weight_<name>,
-- from memory.signals). language sql, so the queries of the functions below inline it.
create or replace function memory_internal._setting_definitions()
returns table (
    key text, default_value jsonb, value_type text, allowed jsonb,
    minimum numeric, maximum numeric, description text, set_by text
)
language sql
stable parallel safe
as $$
    select d.key, d.default_value, d.value_type, d.allowed, d.minimum, d.maximum, d.description, d.set_by
    from memory_internal._declared_settings as d
    union all
    select 'weight_' || s.name, to_jsonb(s.default_weight), 'number', null, 0, 100,
           'Weight of recall signal ' || s.name || ' (' || s.stage || '): ' || s.measures, 'session'
    from memory.signals as s
$$;

comment on function memory_internal._setting_definitions() is
'Internal: every setting with its definition (memory.setting_definitions() for the caller).';

create or replace function memory.setting_definitions()
returns table (
    key text, default_value jsonb, value_type text, allowed jsonb,
    minimum numeric, maximum numeric, description text, set_by text
)
language sql
stable
as $$ select * from memory_internal._setting_definitions() order by 1 $$;

comment on function memory.setting_definitions() is
'Every setting with its default, type, accepted values, meaning, and who may set it (set_by: session = any '
'session or call, admin = memory.config, a session only of memory_admin). Change one with insert into '
'memory.config or, for one session, set memory.<key> = ...';

-- What the functions that run as the owner (to read a key) use as settings: the ones they are given
-- when the login administers, else the session's own, checked, whatever the caller passed them.
create or replace function memory_internal._trusted_settings(settings jsonb) returns jsonb
language sql
stable
as $$
    select case when memory_internal._administers() then settings else memory_internal._settings_json() end
$$;

comment on function memory_internal._trusted_settings(jsonb) is
'Internal: the given settings if the login administers, else the settings in force (checked), for owner-run '
'functions.';

-- A value of an administrator's setting from a session or a call: refused unless the login administers.
create or replace function memory_internal._check_set_by(p_key text, p_where text) returns void
language plpgsql
stable
as $$
begin
    if exists (select from memory_internal._setting_definitions() as s where s.key = p_key and s.set_by = 'admin')
        and not memory_internal._administers() then
        raise exception 'agent_memory: setting "%" is the administrator''s; % cannot change it', p_key, p_where
            using hint = 'memory_admin sets it in memory.config';
    end if;
end
$$;

comment on function memory_internal._check_set_by(text, text) is
'Internal: refuses a session''s or a call''s value of an administrator''s setting unless the login administers.';

-- The value checked against its definition; raises an error that names the key and the problem.
create or replace function memory_internal._validated_setting(p_key text, p_value jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    d record;
    v_wrong_type boolean;
    v_check regprocedure;
begin
    select * into d from memory_internal._setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    v_wrong_type := jsonb_typeof(p_value) is distinct from replace(d.value_type, 'integer', 'number');
    if not v_wrong_type and d.value_type = 'integer' then
        v_wrong_type := p_value::numeric <> trunc(p_value::numeric);
    end if;
    if v_wrong_type then
        raise exception 'agent_memory: setting "%" must be a JSON %, got %', p_key, d.value_type,
            coalesce(p_value::text, 'null');
    end if;
    if d.value_type = 'array' and d.allowed is not null and not d.allowed @> p_value then
        raise exception 'agent_memory: setting "%" must be a list of values among %, got %', p_key, d.allowed, p_value;
    end if;
    if d.value_type <> 'array' and d.allowed is not null and not d.allowed @> jsonb_build_array(p_value) then
        raise exception 'agent_memory: setting "%" must be one of %, got %', p_key, d.allowed, p_value;
    end if;
    -- A number a double precision cannot hold (1e-400, 1e400) would fail where it is used, not here.
    if d.value_type = 'number' then
        begin
            perform (p_value #>> '{}')::double precision;
        exception when numeric_value_out_of_range then
            raise exception 'agent_memory: setting "%" must be a number a double precision holds (0, or between '
                '1e-307 and 1e308 in size), got %', p_key, p_value;
        end;
    end if;
    select s.checked_by::regprocedure into v_check from memory_internal._declared_settings as s where s.key = p_key;
    if v_check is not null then
        execute format('select %s($1)', v_check::oid::regproc) using p_value;
    end if;
    -- A list's minimum is how many values it needs.
    if d.value_type = 'array' and jsonb_array_length(p_value) < d.minimum then
        raise exception 'agent_memory: setting "%" needs at least % of %, got %', p_key, d.minimum, d.allowed, p_value;
    end if;
    if d.value_type <> 'array' and (d.minimum is not null and p_value::numeric < d.minimum
        or d.maximum is not null and p_value::numeric > d.maximum) then
        raise exception 'agent_memory: setting "%" must be between % and %, got %',
            p_key, d.minimum, d.maximum, p_value;
    end if;
    if d.value_type = 'integer' then
        return to_jsonb(p_value::numeric::bigint);  -- 5.0 is 5: it is read as an integer
    end if;
    return p_value;
end
$$;

comment on function memory_internal._validated_setting(text, jsonb) is
'Internal: checks a setting value against memory.setting_definitions().';

-- Every declared default passes its setting's checks, or the install stops, naming the setting.
create or replace function memory_internal._check_setting_defaults() returns void
language plpgsql
stable
as $$
declare
    d record;
begin
    for d in select s.key, s.default_value from memory_internal._declared_settings as s order by s.key loop
        perform memory_internal._validated_setting(d.key, d.default_value);
    end loop;
end
$$;

comment on function memory_internal._check_setting_defaults() is
'Internal: an error unless every declared default passes its setting''s checks (run by every install).';

-- A trigger function of a table memory_admin writes itself: it runs as the owner, who may call the internal
-- checks (the administrator may not).
create or replace function memory_internal._config_validate() returns trigger
language plpgsql
security definer
as $$
begin
    new.value := memory_internal._validated_setting(new.key, new.value);
    if new.tenant_id is null or length(new.tenant_id) > 200 then
        raise exception 'agent_memory: memory.config tenant_id must be empty (every tenant) or at most 200 characters';
    end if;
    new.updated_at := pg_catalog.now();
    new.updated_by := session_user;
    if new.key in ('index_roles', 'index_context_turns', 'index_min_chars', 'chunk_chars', 'index_max_chunks',
                   'text_search_config')
        and (tg_op = 'INSERT' or old.value is distinct from new.value) then
        raise notice 'agent_memory: index setting % changed: sessions enriched before keep their old index', new.key
            using hint = 'select * from memory.reindex() queues them for re-indexing (agent-memory reindex)';
    end if;
    return new;
end
$$;

comment on function memory_internal._config_validate() is
'Internal: trigger that rejects unknown keys and ill-typed values in memory.config.';

drop trigger if exists config_validate on memory.config;
create trigger config_validate before insert or update on memory.config
for each row execute function memory_internal._config_validate();

-- The memory.* settings this session has given a value (C: PostgreSQL lists no placeholder settings).
create or replace function memory_internal._session_setting_names()
returns text[]
language c
stable strict
as '$libdir/agent_memory', 'agent_memory_session_setting_names';

comment on function memory_internal._session_setting_names() is
'Internal: the names (without "memory.") of the memory.* settings this session set, known or not.';

-- The known setting closest to a misspelt name, or null.
create or replace function memory_internal._closest_setting(name text) returns text
language plpython3u
volatile strict
as $$
@load_python@
from agent_memory_db.suggestions import closest
keys = [row["key"] for row in plpy.execute("select key from memory_internal._setting_definitions()")]
return closest(name, keys)
$$;

comment on function memory_internal._closest_setting(text) is
'Internal: the key of memory.setting_definitions() most like a misspelt one (for "did you mean").';

-- Every memory.* setting this session set is known and valid: `set memory.wieght_dense = 1` or `set
-- memory.weight_dense = 'abc'` is an error on the next call that reads settings (PostgreSQL accepts any
-- memory.* name at `set`, so that is the earliest a mistake can be seen).
create or replace function memory_internal._check_session_settings() returns void
language plpgsql
stable
as $$
declare
    v_name text;
    v_closest text;
begin
    -- PostgreSQL keeps a name as it was set and matches it in any case.
    foreach v_name in array memory_internal._session_setting_names() loop
        v_name := lower(v_name);
        continue when v_name = 'tenant_id';
        if not exists (select from memory_internal._setting_definitions() as s where s.key = v_name) then
            v_closest := memory_internal._closest_setting(v_name);
            raise exception using errcode = 'invalid_parameter_value',
                message = format('agent_memory: unknown setting memory.%s%s', v_name,
                                 case when v_closest is null then '' else format(' (did you mean memory.%s?)', v_closest) end),
                hint = format('reset memory.%s; select key, description from memory.setting_definitions() '
                              'lists the settings', v_name);
        end if;
        perform memory_internal._session_setting(v_name);
    end loop;
end
$$;

comment on function memory_internal._check_session_settings() is
'Internal: an error naming the first memory.* setting of this session that is unknown (with the closest '
'known one) or has a value of the wrong kind.';

-- A session setting (`set memory.<key> = '...'`) as JSON of the setting's type.
create or replace function memory_internal._session_setting(p_key text) returns jsonb
language plpgsql
stable
as $$
declare
    v_raw text := pg_catalog.current_setting('memory.' || p_key, true);
    v_type text;
begin
    if v_raw is null or v_raw = '' then
        return null;
    end if;
    perform memory_internal._check_set_by(p_key, 'a session (set memory.' || p_key || ')');
    select s.value_type into v_type from memory_internal._setting_definitions() as s where s.key = p_key;
    if v_type = 'string' then
        return memory_internal._validated_setting(p_key, to_jsonb(v_raw));
    end if;
    begin
        return memory_internal._validated_setting(p_key, v_raw::jsonb);
    exception when invalid_text_representation then
        raise exception 'agent_memory: setting memory.% must be a JSON %, got %', p_key, v_type, v_raw
            using errcode = 'invalid_parameter_value', hint = format('reset memory.%s, or set it to a %s', p_key, v_type);
    end;
end
$$;

comment on function memory_internal._session_setting(text) is
'Internal: the value of `set memory.<key>` in this session, validated, or null.';

-- The value in force for this session. Defaults are valid by construction and are not checked again.
create or replace function memory.setting(p_key text) returns jsonb
language plpgsql
stable
as $$
declare
    v_value jsonb;
begin
    perform memory_internal._check_session_settings();
    v_value := memory_internal._session_setting(p_key);
    if v_value is not null then
        return v_value;
    end if;
    select c.value into v_value from memory.config as c
    where c.key = p_key and c.tenant_id in ('', memory.current_tenant())
    order by c.tenant_id desc
    limit 1;
    if found then
        return v_value;
    end if;
    select s.default_value into v_value from memory_internal._setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    return v_value;
end
$$;

comment on function memory.setting(text) is
'The value of a setting in force for this session: session setting (set memory.<key>), then '
'memory.config for the tenant, then memory.config for every tenant, then the default. Unknown keys are an error.';

-- Each value as memory.setting() reads it (checked); its source from the session's own settings and the
-- configuration rows of this tenant and of every tenant.
create or replace view memory.settings as
select
    s.key,
    memory.setting(s.key) as value,
    case
        when pg_catalog.current_setting('memory.' || s.key, true) <> '' then 'session'
        when c.tenant_id <> '' then 'tenant'
        when c.key is not null then 'config'
        else 'default'
    end as source,
    s.default_value,
    s.description
from memory.setting_definitions() as s
-- memory.config read once: for each key, this tenant's row over the every-tenant one.
left join (
    select distinct on (c.key)
        c.key,
        c.tenant_id
    from memory.config as c
    where c.tenant_id in ('', (select memory.current_tenant()))
    order by c.key asc, c.tenant_id desc
) as c on s.key = c.key;

-- Every setting in force, as one JSON object (what the Python side reads).
-- plpgsql, not sql: its plan is kept for the session (a sql function called from plpgsql is planned again
-- on every call, which cost more than the query itself).
create or replace function memory_internal._settings_json() returns jsonb
language plpgsql
stable
as $$
begin
    perform memory_internal._check_session_settings();
    return (
        select jsonb_object_agg(s.key, coalesce(session_value.value, c.value, s.default_value))
        from memory_internal._setting_definitions() as s
        -- The memory.* settings this session set: only those are read and checked (a handful, not every key).
        cross join (
            select coalesce(pg_catalog.array_agg(pg_catalog.lower(n.name)), '{}') as names
            from pg_catalog.unnest(memory_internal._session_setting_names()) as n (name)
        ) as session_set
        -- memory.config read once: for each key, this tenant's row over the every-tenant one.
        left join (
            select distinct on (c.key) c.key, c.value
            from memory.config as c
            where c.tenant_id in ('', (select memory.current_tenant()))
            order by c.key asc, c.tenant_id desc
        ) as c on s.key = c.key
        cross join lateral (
            select case when s.key = any(session_set.names) then memory_internal._session_setting(s.key) end as value
        ) as session_value
    );
end
$$;

comment on function memory_internal._settings_json() is
'Internal: every setting in force as one JSON object (an error if the session set an unknown or bad one).';

-- A tenant's settings as memory.config stores them (its own rows, else those for every tenant, else the
-- defaults): what maintenance, which serves every tenant from one session, goes by. '' is every tenant.
create or replace function memory_internal._configured_settings(tenant text) returns jsonb
language sql
stable
as $$
    select jsonb_object_agg(d.key, coalesce(own.value, everyone.value, d.default_value))
    from memory_internal._setting_definitions() as d
    left join memory.config as everyone on everyone.tenant_id = '' and everyone.key = d.key
    left join memory.config as own on own.tenant_id = tenant and tenant <> '' and own.key = d.key
$$;

comment on function memory_internal._configured_settings(text) is
'Internal: a tenant''s settings as memory.config stores them (session settings left out).';
