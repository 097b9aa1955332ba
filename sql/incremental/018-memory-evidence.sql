-- A memory's evidence (0.3.0) is a row per turn it came from, not an array in the memory's row. A claim
-- users repeat gains a turn each time they say it: as an array, every new turn rewrote the whole array
-- and put each of its turns into the GIN index again, so the cost of one more turn grew with the turns
-- before it (at 100,000 turns with one claim said 6,306 times, extraction took 7% of enrichment). A row
-- costs the same whatever the memory already has, and goes with its turn by foreign key.
create table memory.memory_evidence (
    tenant_id text not null,
    memory_id bigint not null,
    turn_key bigint not null,
    primary key (tenant_id, memory_id, turn_key),
    foreign key (tenant_id, memory_id) references memory.memories (tenant_id, memory_id) on delete cascade,
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade
);
create index memory_evidence_by_turn on memory.memory_evidence (tenant_id, turn_key);
select pg_catalog.pg_extension_config_dump('memory.memory_evidence', '');

insert into memory.memory_evidence (tenant_id, memory_id, turn_key)
select distinct
    m.tenant_id,
    m.memory_id,
    e.turn_key
from memory.memories as m
cross join lateral unnest(m.evidence_turns) as e (turn_key)
inner join memory.turns as t on m.tenant_id = t.tenant_id and e.turn_key = t.turn_key;

-- The views over memories (sql/idempotent/211-memories.sql makes them again) read the column.
drop view if exists memory.memory_items cascade;
drop index memory.memories_by_evidence;
alter table memory.memories drop column evidence_turns;
