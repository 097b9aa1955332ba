-- Runs (0.4.0): a run is one task or process of an agent (mem0's run_id, MemBurrow's process scope). Sessions
-- and memories carry the run they were written in; recall, bootstrap, context_for_task, list_memories and
-- list_sessions keep to one run when asked, so the functions that take or return it change signature.
alter table memory.sessions add column run_id text check (btrim(run_id) <> '');
alter table memory.memories add column run_id text check (btrim(run_id) <> '');
create index sessions_by_run on memory.sessions (tenant_id, run_id) where run_id is not null;
create index memories_by_run on memory.memories (tenant_id, run_id) where run_id is not null;

drop function if exists memory.commit(
    text, json, text, text, timestamptz, text, bigint, bigint, jsonb, text, boolean
);
drop function if exists memory.remember(
    text, text, text, jsonb, text, text, text[], text[], double precision, double precision, timestamptz, bigint[],
    text, boolean
);
drop type memory.remembered;
create type memory.remembered as (
    memory_id bigint, agent_id text, kind text, content text, key text, subjects text [], tags text [],
    importance double precision, confidence double precision, status text, valid_from timestamptz,
    valid_to timestamptz, recorded_at timestamptz, recorded_by text, supersedes bigint, superseded_by bigint,
    turn_id bigint, evidence_turn_ids bigint [], origin text, metadata jsonb, shared boolean, run_id text,
    outcome text
);
drop function if exists memory.list_memories(
    text, text, text, text, text, text, timestamptz, integer, text, bigint[]
);
drop function if exists memory.list_sessions(text, text, integer, timestamptz);
alter type memory.session_item add attribute run_id text;
drop function if exists memory.bootstrap(text, integer, integer);
drop function if exists memory.context_for_task(text, integer, text, integer);
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[], text[], text[], text[]
);
drop function if exists memory.explain_recall(
    text, integer, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[], text[], text[], text[]
);
alter type memory_internal._recall_query add attribute run_id text;
