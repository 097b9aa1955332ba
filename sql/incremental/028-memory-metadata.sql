-- Memories keep the metadata they were remembered with (0.4.0): memory.memory_items, and so get,
-- list_memories and remember, return it, and export carries it. Before, it was only on the turn that
-- carries the words, which memories with the same words share; those are read back from that turn.
-- remember's row type takes it before outcome. list_memories takes key_prefix and memory_ids, so the
-- signature without them goes.
alter table memory.memories
add column metadata jsonb not null default '{}' check (jsonb_typeof(metadata) = 'object');
update memory.memories as m set metadata = t.metadata - 'kind'
from memory.turns as t
where t.tenant_id = m.tenant_id and t.turn_id = m.turn_id and m.origin = 'remember' and t.metadata - 'kind' <> '{}';
drop function if exists memory.remember(
    text, text, text, jsonb, text, text, text[], text[], double precision, double precision, timestamptz, bigint[], text
);
drop type memory.remembered;
create type memory.remembered as (
    memory_id bigint, agent_id text, kind text, content text, key text, subjects text [], tags text [],
    importance double precision, confidence double precision, status text, valid_from timestamptz,
    valid_to timestamptz, recorded_at timestamptz, recorded_by text, supersedes bigint, superseded_by bigint,
    turn_id bigint, evidence_turn_ids bigint [], origin text, metadata jsonb, outcome text
);
drop function if exists memory.list_memories(text, text, text, text, text, text, timestamptz, integer);
-- A memory's words under a key are a turn of their own (_memory_turn takes the key), and remembered claims
-- are chunked each on its own (_chunk_turns takes claims): the signatures without them go.
drop function if exists memory_internal._memory_turn(text, text, text, jsonb, text);
drop function if exists memory_internal._chunk_turns(jsonb, jsonb);
-- A commit to the session 'remembered' enriches its new turns alone: the steps take which turns.
drop function if exists memory_internal._enrich_session(text, bigint);
drop function if exists memory_internal._session_turns(text, bigint);
drop function if exists memory_internal._write_chunks(
    text, bigint, regconfig, bigint[], integer[], text[], text[], bigint[]
);
drop function if exists memory_internal._write_mentions(text, bigint, jsonb, jsonb, text);
