-- Supersession without a key (0.4.0): a claim remembered or extracted that changes what a held memory
-- states ("I switched from vim to helix" after "My editor is vim") supersedes it, by the rules or the llm
-- judge (setting memory_supersede). Each decision is logged here with why: applied, or in shadow mode only
-- recorded, so that an operator sees what the setting would do before turning it on.
create table memory.memory_supersessions (
    tenant_id text not null,
    supersession_id bigint generated always as identity,
    memory_id bigint not null,
    by_memory_id bigint not null,
    judge text not null check (judge in ('rules', 'llm')),
    action text not null check (action in ('update', 'retract')),
    reason text not null,
    applied boolean not null,
    recorded_at timestamptz not null default pg_catalog.now(),
    recorded_by text not null default session_user,
    primary key (tenant_id, supersession_id),
    foreign key (tenant_id, memory_id) references memory.memories (tenant_id, memory_id) on delete cascade,
    foreign key (tenant_id, by_memory_id) references memory.memories (tenant_id, memory_id) on delete cascade
);
create index memory_supersessions_by_memory on memory.memory_supersessions (tenant_id, memory_id);
create index memory_supersessions_by_new on memory.memory_supersessions (tenant_id, by_memory_id);
select pg_catalog.pg_extension_config_dump('memory.memory_supersessions', '');
select pg_catalog.pg_extension_config_dump('memory.memory_supersessions_supersession_id_seq', '');
