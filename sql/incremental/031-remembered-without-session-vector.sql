-- A session 'remembered' has no session vector (0.4.0): its claims are each their own, and the mean of their
-- vectors is no conversation's gist (memory_internal._enrich_session no longer writes it).
delete from memory.session_embeddings as e
using memory.sessions as s
where s.tenant_id = e.tenant_id and s.session_key = e.session_key and s.source = 'remember';
