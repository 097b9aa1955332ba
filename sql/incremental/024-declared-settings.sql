-- Settings declared by the subsystem that reads them (0.3.0): each idempotent file declares its own with
-- memory_internal._declare_setting, and memory.setting_definitions() lists them with the signals' weights.
-- Every install and upgrade declares them all again (the settings file empties the table first), so the
-- table holds what this version knows, and a dump leaves it out.
create table memory_internal._declared_settings (
    key text primary key check (key ~ '^[a-z][a-z0-9_]*$' and key !~ '^weight_'),
    default_value jsonb not null,
    value_type text not null check (value_type in ('string', 'number', 'integer', 'boolean', 'array', 'object')),
    allowed jsonb,
    minimum numeric,
    maximum numeric,
    description text not null,
    set_by text not null check (set_by in ('session', 'admin')),
    checked_by text
);
