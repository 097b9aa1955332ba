-- Recall filters by tag (0.4.0): memory.recall and memory.explain_recall take tags, so the signatures
-- without it go (sql/idempotent/recall/096-recall-api.sql makes the new ones).
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[]
);
drop function if exists memory.explain_recall(
    text, integer, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text, text[]
);
