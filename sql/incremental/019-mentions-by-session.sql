-- A session's entity mentions by its key (0.3.0). Enrichment compares a session's mentions with what
-- its turns mention now, and without this index read every mention of the tenant to find them: a cost
-- per session that grew with the tenant.
create index entity_mentions_by_session on memory.entity_mentions (tenant_id, session_key);
