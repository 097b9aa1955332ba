-- Settings a DBA has changed from their defaults. The defaults themselves live in
-- memory.setting_definitions() so that upgrades can ship new ones.
create table memory.config (
    key text primary key,
    value jsonb not null,
    updated_at timestamptz not null default pg_catalog.now(),
    updated_by name not null default current_user
);

select pg_catalog.pg_extension_config_dump('memory.config', '');
