-- Tiers (0.3.0): every session and curated memory is hot, warm or cold. Maintenance moves them down as
-- their importance decays and as an agent's tiers fill; recall and helpful feedback bring them back to
-- hot. Recall leaves cold ones out unless asked (tiers => ...).
alter table memory.sessions
add column tier text not null default 'hot' check (tier in ('hot', 'warm', 'cold')),
add column tier_since timestamptz not null default pg_catalog.now(),
add column used_at timestamptz;
alter table memory.memories
add column tier text not null default 'hot' check (tier in ('hot', 'warm', 'cold')),
add column tier_since timestamptz not null default pg_catalog.now(),
add column used_at timestamptz;

-- Whether a tenant has anything outside the tiers a recall searches, and each agent's tier in turn.
create index sessions_tier on memory.sessions (tenant_id, tier, agent_id);
create index memories_tier on memory.memories (tenant_id, tier, agent_id);

alter type memory.recall_candidate add attribute tier text;
alter type memory.recall_candidate add attribute decayed_importance double precision;

-- recall and explain_recall take tiers; the lists filter by them.
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text
);
drop function if exists memory.explain_recall(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text
);
drop function if exists memory_internal._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, bigint[]);
drop function if exists memory_internal._candidate_chunks(
    text, text, timestamptz, timestamptz, text, jsonb, memory_internal._recall_query, vector, text, timestamptz, boolean
);
