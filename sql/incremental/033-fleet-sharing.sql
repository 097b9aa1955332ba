-- Fleet sharing (0.4.0): a curated memory can be shared with every agent of its tenant, and recall, bootstrap
-- and context_for_task for one agent then include it, marked with the agent that shared it (shared_by). The
-- setting share_sessions does the same for what was said. A commit and a memory remembered or shared notify
-- a channel of their tenant (memory.subscription), named with a key only the owner reads.
alter table memory.memories add column shared boolean not null default false;
create index memories_shared on memory.memories (tenant_id) where shared;

-- remember takes shared, and its row type and memory.memory_items carry it before outcome.
drop function if exists memory.remember(
    text, text, text, jsonb, text, text, text[], text[], double precision, double precision, timestamptz, bigint[], text
);
drop type memory.remembered;
create type memory.remembered as (
    memory_id bigint, agent_id text, kind text, content text, key text, subjects text [], tags text [],
    importance double precision, confidence double precision, status text, valid_from timestamptz,
    valid_to timestamptz, recorded_at timestamptz, recorded_by text, supersedes bigint, superseded_by bigint,
    turn_id bigint, evidence_turn_ids bigint [], origin text, metadata jsonb, shared boolean, outcome text
);

-- A hit and a bootstrap item say which agent shared them when they are not the recalling agent's own.
alter type memory.recall_hit add attribute shared_by text;
drop function if exists memory.bootstrap(text, integer, integer);
drop function if exists memory.context_for_task(text, integer, text, integer);

-- What an agent sees of the others' (memory_internal._visible_to): the turns of memories they share, and
-- whether their sessions are shared (share_sessions) apart from their 'remembered' ones.
alter type memory_internal._recall_query add attribute fleet_turns bigint[];
alter type memory_internal._recall_query add attribute fleet_sessions boolean;
alter type memory_internal._recall_query add attribute remembered_sessions bigint[];

-- The key that names each tenant's notification channel: without it, a role cannot tell another tenant's.
insert into memory_internal._secrets (name, value)
values ('notification_key', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))
on conflict (name) do nothing;
-- Each database makes its own: a restore keeps the one its CREATE EXTENSION made, not the dumped one.
select pg_catalog.pg_extension_config_dump('memory_internal._secrets', 'where name <> ''notification_key''');
