-- Recall filters tool results by tool and status (0.4.0): memory.recall and memory.explain_recall take tools
-- and tool_statuses, so the signatures without them go (sql/idempotent/recall/096-recall-api.sql makes the new
-- ones), and the prepared query carries them to the candidate lists.
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[], text[]
);
drop function if exists memory.explain_recall(
    text, integer, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[], text[]
);
alter type memory_internal._recall_query add attribute tools text[];
alter type memory_internal._recall_query add attribute tool_statuses text[];
