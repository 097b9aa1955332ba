-- A session as memory.list_sessions lists it (0.4.0).
create type memory.session_item as (
    session_id text, agent_id text, source text, started_at timestamptz, updated_at timestamptz, turns bigint,
    tier text, summary text
);
