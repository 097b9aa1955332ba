-- One vocabulary (0.3.0): a concept has one name in tables, types, the API, the client, the CLI and MCP
-- (docs/architecture.md, "Vocabulary"). The tables take the names the API already showed.
alter table memory.turns rename column turn_key to turn_id;
alter sequence memory.turns_turn_key_seq rename to turns_turn_id_seq;
alter table memory.turns rename column name to speaker;
alter table memory.speakers rename column name to speaker;
alter table memory.chunks rename column turn_key to turn_id;
alter table memory.chunks rename column context_turn_key to context_turn_id;
alter table memory.chunk_embeddings rename column turn_key to turn_id;
alter table memory.feedback rename column turn_key to turn_id;
alter table memory.memories rename column turn_key to turn_id;
alter table memory.memory_evidence rename column turn_key to turn_id;
alter table memory.entity_mentions rename column turn_key to turn_id;

alter table memory.entities rename column entity_key to entity_id;
alter sequence memory.entities_entity_key_seq rename to entities_entity_id_seq;
alter table memory.entities rename column scope to agent_id;
alter table memory.entities rename constraint entities_tenant_id_scope_normalized_key
to entities_tenant_id_agent_id_normalized_key;
alter table memory.entity_mentions rename column entity_key to entity_id;
alter table memory.entity_states rename column state_key to state_id;
alter sequence memory.entity_states_state_key_seq rename to entity_states_state_id_seq;
alter table memory.entity_states rename column entity_key to entity_id;

-- The foreign keys' names follow their columns.
alter table memory.chunks rename constraint chunks_tenant_id_turn_key_fkey to chunks_tenant_id_turn_id_fkey;
alter table memory.chunk_embeddings rename constraint chunk_embeddings_tenant_id_turn_key_chunk_no_fkey
to chunk_embeddings_tenant_id_turn_id_chunk_no_fkey;
alter table memory.feedback rename constraint feedback_tenant_id_turn_key_fkey to feedback_tenant_id_turn_id_fkey;
alter table memory.memories rename constraint memories_tenant_id_turn_key_fkey to memories_tenant_id_turn_id_fkey;
alter table memory.memory_evidence rename constraint memory_evidence_tenant_id_turn_key_fkey
to memory_evidence_tenant_id_turn_id_fkey;
alter table memory.entity_mentions rename constraint entity_mentions_tenant_id_turn_key_fkey
to entity_mentions_tenant_id_turn_id_fkey;
alter table memory.entity_mentions rename constraint entity_mentions_tenant_id_entity_key_fkey
to entity_mentions_tenant_id_entity_id_fkey;
alter table memory.entity_states rename constraint entity_states_tenant_id_entity_key_fkey
to entity_states_tenant_id_entity_id_fkey;

alter type memory.recall_candidate rename attribute turn_key to turn_id;
alter type memory_internal._recall_context rename attribute turn_keys to turn_ids;
alter type memory_internal._recall_query rename attribute entity_keys to entity_ids;
alter type memory_internal._recall_query rename attribute neighbor_keys to neighbor_ids;

-- What memory.recall returns: a named type, so that a hit's agent_id is a column beside the argument agent_id.
create type memory.recall_hit as (
    session_id text,
    agent_id text,
    turn_id bigint,
    message_id text,
    role text,
    speaker text,
    created_at timestamptz,
    content text,
    summary text,
    score double precision,
    components jsonb,
    kind text,
    memory_id bigint,
    evidence_turn_ids bigint []
);

-- Renamed, or their arguments or columns are (sql/idempotent creates them anew): a function is named apart
-- from every table (list_memories, list_entities, give_feedback, list_retention_policies, list_archives),
-- an entity is passed as entity, the agent is agent_id, the judge of feedback judged_by, a count of jobs or
-- chunks max_jobs or max_chunks, and the database's session number stays inside.
drop function if exists memory.archives();
drop function if exists memory.retention_policies();
drop function if exists memory.memories(text, text, text, text, text, text, timestamptz, integer);
drop function if exists memory.entities(text, text, text, integer);
drop function if exists memory.feedback(bigint, boolean, text, text, text, bigint, text, text);
drop function if exists memory.entity_history(text, text, text);
drop function if exists memory.entity_neighbors(text, integer, integer, text);
drop function if exists memory.entity_sessions(text, text, integer);
drop function if exists memory.entity_state(text, timestamptz, text, text);
drop function if exists memory.commit(text, json, text, text, timestamptz, text, bigint, bigint, jsonb, text, boolean);
drop function if exists memory.enrich(text, text);
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[]
);
drop function if exists memory.explain_recall(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text, text[]
);
drop function if exists memory_internal._entity_key(text, text, text, text);
drop function if exists memory_internal._entity_keys(text, text);
drop function if exists memory.reembed(integer);
drop view if exists memory.tier_items;
