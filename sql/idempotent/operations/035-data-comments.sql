-- What a DBA reads in \d+ for the tables of conversations and enrichment.
comment on table memory.sessions is 'One row per conversation session of an agent, under a tenant.';
comment on column memory.sessions.tenant_id is 'The tenant (memory.current_tenant() when written).';
comment on column memory.sessions.session_key is 'Internal key of the session.';
comment on column memory.sessions.agent_id is 'The agent the session belongs to.';
comment on column memory.sessions.session_id is 'The caller''s id for the session (unique per tenant and agent).';
comment on column memory.sessions.source is 'Where the conversation came from (an app, an importer).';
comment on column memory.sessions.model is 'The model that took part in the conversation.';
comment on column memory.sessions.started_at is 'When the session started (event time).';
comment on column memory.sessions.tokens_in is 'Tokens sent to the model in the session, when known.';
comment on column memory.sessions.tokens_out is 'Tokens the model produced in the session, when known.';
comment on column memory.sessions.metadata is 'Free metadata; later commits merge theirs into it.';
comment on column memory.sessions.recorded_at is 'When the session was first stored (record time).';
comment on column memory.sessions.updated_at is 'When a commit last touched the session.';

comment on table memory.turns is 'Every message of every session, in order, of every role.';
comment on column memory.turns.tenant_id is 'The tenant.';
comment on column memory.turns.turn_id is 'The turn''s id (turn_id in recall, feedback and evidence).';
comment on column memory.turns.session_key is 'The session (memory.sessions.session_key).';
comment on column memory.turns.agent_id is 'The agent (as on the session).';
comment on column memory.turns.position is 'Order of the turn in its session, from 0.';
comment on column memory.turns.message_id is 'The caller''s message id, when given (unique per session).';
comment on column memory.turns.role is 'user, assistant, system or tool.';
comment on column memory.turns.speaker is 'The speaker''s name, when given; kept as data, not indexed as text.';
comment on column memory.turns.content is 'The message text (text parts joined by newlines).';
comment on column memory.turns.content_sha256 is 'sha256 of content: identity of a message without id.';
comment on column memory.turns.tool_calls is 'Tool calls the message made, as given.';
comment on column memory.turns.tool_call_id is 'For a tool result, the call it answers.';
comment on column memory.turns.tokens is 'Tokens of the message, when given.';
comment on column memory.turns.client_embedding is 'A vector the caller passed (client embedder).';
comment on column memory.turns.metadata is 'Free metadata of the message.';
comment on column memory.turns.created_at is 'When the message was said (event time; the session start if not given).';
comment on column memory.turns.recorded_at is 'When the message was stored (record time).';

comment on table memory.chunks is
'The text indexed for recall: per turn, chunks of its own words; the first with the turn before as context.';
comment on column memory.chunks.tenant_id is 'The tenant.';
comment on column memory.chunks.turn_id is 'The turn the chunk indexes.';
comment on column memory.chunks.chunk_no is 'Chunk number within the turn, from 0.';
comment on column memory.chunks.session_key is 'The turn''s session.';
comment on column memory.chunks.agent_id is 'The turn''s agent.';
comment on column memory.chunks.text is 'The turn''s own words in this chunk (what is embedded).';
comment on column memory.chunks.text_sha256 is 'sha256 of text: an unchanged chunk is never re-embedded.';
comment on column memory.chunks.tsv is
'Full-text vector (setting text_search_config): own words under weight D, the context under weight C.';
comment on column memory.chunks.context_turn_id is 'The turn just before, whose words are this chunk''s context.';
comment on column memory.chunks.context_length is 'Lexeme occurrences of the context: its length for BM25.';

comment on table memory.chunk_embeddings is 'Vectors of chunks, one per chunk and embedding model.';
comment on column memory.chunk_embeddings.tenant_id is 'The tenant.';
comment on column memory.chunk_embeddings.turn_id is 'The chunk''s turn.';
comment on column memory.chunk_embeddings.chunk_no is 'The chunk.';
comment on column memory.chunk_embeddings.model is 'The embedding model (memory.embedding_models).';
comment on column memory.chunk_embeddings.text_sha256 is 'sha256 of the text that was embedded.';
comment on column memory.chunk_embeddings.embedding is 'The vector (unit length for the local model).';
comment on column memory.chunk_embeddings.in_graph is
'Whether the model''s HNSW graph holds the vector: once its tenant has more chunks than exact_search_max_chunks.';

comment on table memory.summaries is 'One summary per session, with decisions and open loops.';
comment on column memory.summaries.tenant_id is 'The tenant.';
comment on column memory.summaries.session_key is 'The session.';
comment on column memory.summaries.method is 'extractive, llm, or caller (memory.set_summary; never overwritten).';
comment on column memory.summaries.summary is 'The summary text.';
comment on column memory.summaries.decisions is 'Decisions taken in the session (JSON array of strings).';
comment on column memory.summaries.open_loops is 'Questions and tasks left open (JSON array of strings).';
comment on column memory.summaries.source_sha256 is
'Hash of the turns summarized: unchanged turns are not summarized again.';
comment on column memory.summaries.tsv is 'Full-text vector of the summary.';
comment on column memory.summaries.created_at is 'When the summary was written.';

comment on table memory.session_embeddings is
'One vector per session and model: the normalized mean of its chunks'' vectors.';
comment on column memory.session_embeddings.tenant_id is 'The tenant.';
comment on column memory.session_embeddings.session_key is 'The session.';
comment on column memory.session_embeddings.model is 'The embedding model.';
comment on column memory.session_embeddings.text_sha256 is 'sha256 of the chunk hashes it was computed from.';
comment on column memory.session_embeddings.embedding is 'The vector.';
comment on column memory.session_embeddings.in_graph is
'Whether the model''s HNSW graph holds the vector: once its tenant has more chunks than exact_search_max_chunks.';

comment on table memory.embedding_models is
'Embedding models used so far; recall uses a model once it is ready (every chunk has its vector).';
comment on column memory.embedding_models.model is 'The model name.';
comment on column memory.embedding_models.provider is 'local, openai or client.';
comment on column memory.embedding_models.dimensions is 'Dimensions of its vectors.';
comment on column memory.embedding_models.state is
'building (backfill running), ready, or retired (recall no longer uses it; memory.maintain sets it).';
comment on column memory.embedding_models.created_at is 'When the model was first used.';
comment on column memory.embedding_models.ready_at is 'When its vectors became complete.';
comment on column memory.embedding_models.retired_at is
'When recall stopped using it (memory.maintain drops its vectors model_retire_grace_hours later).';

comment on table memory.maintenance_runs is 'Each run of memory.maintain(): when, by whom, and what it did.';
comment on column memory.maintenance_runs.run_id is 'The run.';
comment on column memory.maintenance_runs.started_at is 'When it started.';
comment on column memory.maintenance_runs.finished_at is 'When it finished.';
comment on column memory.maintenance_runs.run_by is 'The role that ran it.';
comment on column memory.maintenance_runs.status is 'done, or skipped (another run was in progress).';
comment on column memory.maintenance_runs.actions is
'What it did: jobs_deleted, models_retired, vectors_dropped (per model: chunk_vectors, session_vectors).';
comment on column memory.turns.trust is
'Multiplies the turn''s recall score (1 = neutral); feedback and DBAs may change it.';
comment on column memory.turns.access_count is
'How often recall returned the turn (counted only when recall_count_access is on).';
comment on column memory.turns.last_accessed_at is 'When recall last returned the turn (with recall_count_access).';
comment on column memory.chunks.length is 'Lexeme occurrences of the own words: the chunk''s length for BM25.';

comment on table memory.speakers is
'Names that speak in each tenant and agent (turns.speaker), matched against queries.';
comment on column memory.speakers.tenant_id is 'The tenant.';
comment on column memory.speakers.agent_id is 'The agent.';
comment on column memory.speakers.speaker is 'A speaker''s name as given on messages.';

comment on table memory.lexicon is
'BM25 document frequencies: in how many chunks of a tenant and agent each lexeme occurs.';
comment on column memory.lexicon.tenant_id is 'The tenant.';
comment on column memory.lexicon.agent_id is 'The agent.';
comment on column memory.lexicon.lexeme is 'A lexeme of the chunks'' tsvectors.';
comment on column memory.lexicon.chunks is 'How many chunks contain it in their own words.';

comment on table memory.corpus is 'BM25 collection statistics per tenant and agent.';
comment on column memory.corpus.tenant_id is 'The tenant.';
comment on column memory.corpus.agent_id is 'The agent.';
comment on column memory.corpus.chunks is 'How many chunks are indexed.';
comment on column memory.corpus.total_length is 'Their total length (lexeme occurrences), for the average length.';

comment on table memory.feedback is
'Every verdict (helpful, unhelpful, incorrect, stale) on a turn, a memory or a session, who gave it and what it '
'did (audit trail).';
comment on column memory.feedback.tenant_id is 'The tenant.';
comment on column memory.feedback.feedback_id is 'Internal key of the verdict.';
comment on column memory.feedback.turn_id is
'The turn judged (memory.turns.turn_id, the turn_id recall returns); null when a memory or session was.';
comment on column memory.feedback.helpful is 'True for verdict helpful, false for the others.';
comment on column memory.feedback.verdict is 'helpful, unhelpful, incorrect or stale.';
comment on column memory.feedback.memory_id is 'The curated memory judged; null when a turn or session was.';
comment on column memory.feedback.session_key is 'The session judged as a whole; null when a turn or memory was.';
comment on column memory.feedback.judged_by is
'The agent that gave the verdict (memory.feedback''s agent_id), or the role when it named none.';
comment on column memory.feedback.counted is
'False for a judge''s repeat of the verdict it last gave the same target: kept, but it moved nothing.';
comment on column memory.feedback.effect is 'What the verdict did: trust moved, importance lowered, retracted.';
comment on column memory.feedback.query is 'The query the turn was recalled for, when given.';
comment on column memory.feedback.note is 'Free text from whoever gave the verdict.';
comment on column memory.feedback.trust_before is
'The trust of the turn judged (or carrying the memory''s words) before this verdict; null for a session.';
comment on column memory.feedback.trust_after is 'That trust after it.';
comment on column memory.feedback.given_by is 'The database role that gave it.';
comment on column memory.feedback.created_at is 'When it was given.';

comment on table memory.entities is
'Entities of the knowledge graph: one per tenant, agent and normalized name, with its type and aliases.';
comment on column memory.entities.tenant_id is 'The tenant.';
comment on column memory.entities.entity_id is 'The entity''s id.';
comment on column memory.entities.agent_id is 'The agent whose memory the entity belongs to.';
comment on column memory.entities.name is 'The name as first written.';
comment on column memory.entities.normalized is 'The key it is found under: memory.normalize_entity(name).';
comment on column memory.entities.type is
'One of person, project, concept, tool, metric, org, place, event, doc, task, topic, other.';
comment on column memory.entities.aliases is 'Other normalized names that stand for it (merged entities).';
comment on column memory.entities.trigrams is 'Trigrams of the normalized name and aliases, for fuzzy search.';

comment on table memory.entity_mentions is 'Which turns mention which entities, and how often.';
comment on column memory.entity_mentions.tenant_id is 'The tenant.';
comment on column memory.entity_mentions.turn_id is 'The turn that mentions the entity.';
comment on column memory.entity_mentions.entity_id is 'The entity mentioned.';
comment on column memory.entity_mentions.session_key is 'The turn''s session.';
comment on column memory.entity_mentions.mentions is 'How often the turn mentions it.';

comment on table memory.entity_edges is
'Co-occurrence: one row per pair of entities mentioned in one turn (derived from the mentions; not dumped).';
comment on column memory.entity_edges.tenant_id is 'The tenant.';
comment on column memory.entity_edges.entity_a is 'The pair''s entity with the smaller key.';
comment on column memory.entity_edges.entity_b is 'The pair''s entity with the larger key.';
comment on column memory.entity_edges.turns is 'How many turns mention both.';
comment on column memory.entity_edges.last_seen is 'When the latest such turn was said.';

comment on table memory.entity_states is
'Entity attributes over time: each value with the period it held; at most one current value per attribute.';
comment on column memory.entity_states.tenant_id is 'The tenant.';
comment on column memory.entity_states.state_id is 'The recorded value''s id.';
comment on column memory.entity_states.entity_id is 'The entity.';
comment on column memory.entity_states.attribute is 'The attribute, e.g. database or owner.';
comment on column memory.entity_states.value is 'Its value, as JSON.';
comment on column memory.entity_states.valid_from is 'When the value began to hold.';
comment on column memory.entity_states.valid_to is 'When the next value began to hold; null while it is current.';
comment on column memory.entity_states.recorded_at is 'When it was written.';
comment on column memory.entity_states.recorded_by is 'The role that wrote it.';

comment on table memory.memories is
'Curated memories: typed claims of an agent with a status and the period they hold, one row per version '
'(a newer version under the same key supersedes the one before, which is kept). Written by memory.remember.';
comment on column memory.memories.tenant_id is 'The tenant.';
comment on column memory.memories.memory_id is 'The memory''s id.';
comment on column memory.memories.agent_id is 'The agent whose memory it is.';
comment on column memory.memories.kind is
'fact, preference, rule, decision, skill, event, observation or task.';
comment on column memory.memories.content is 'The claim, in words.';
comment on column memory.memories.key is 'A stable key the caller stores, updates and gets it by; null: none.';
comment on column memory.memories.subjects is 'The entities it is about, normalized as entity names.';
comment on column memory.memories.tags is 'The caller''s tags.';
comment on column memory.memories.importance is 'How much it matters, 0 to 1.';
comment on column memory.memories.confidence is 'How sure its source is of it, 0 to 1.';
comment on column memory.memories.status is
'active, ongoing (work in progress), resolved, superseded (a newer version holds), retracted (never true) or '
'pending (proposed by enrichment, awaiting memory.approve or memory.retract).';
comment on column memory.memories.origin is
'Who proposed it: remember (a caller), or patterns or llm (enrichment''s extractor, setting memory_extractor).';
comment on column memory.memories.valid_from is 'When it began to hold.';
comment on column memory.memories.valid_to is
'When it stopped holding (superseded, resolved or retracted); null: it holds.';
comment on column memory.memories.recorded_at is 'When it was written.';
comment on column memory.memories.recorded_by is 'The role that wrote it.';
comment on column memory.memories.canonical is
'The hash of its kind, subjects and normalized words: the same claim is the same memory.';
comment on column memory.memories.turn_id is 'The turn of session ''remembered'' that carries its words in recall.';
comment on column memory.memories.supersedes is 'The version of the same key it replaced; null: the first.';

comment on table memory.memory_evidence is
'A memory''s evidence: a row per turn it came from (memory_items.evidence_turn_ids lists them). It goes '
'with its memory, and with its turn when the turn is forgotten.';
comment on column memory.memory_evidence.tenant_id is 'The tenant.';
comment on column memory.memory_evidence.memory_id is 'The memory.';
comment on column memory.memory_evidence.turn_id is 'A turn the memory came from.';

comment on table memory.memory_merges is
'Semantic dedup''s log: each remembered claim that paraphrased a memory held (memory_id, similarity), '
'merged into it (merged true) or, in shadow mode, only recorded beside the memory created instead '
'(created_memory_id).';
comment on column memory.memory_merges.tenant_id is 'The tenant.';
comment on column memory.memory_merges.merge_id is 'The log entry''s id.';
comment on column memory.memory_merges.agent_id is 'The agent that remembered the claim.';
comment on column memory.memory_merges.kind is 'The claim''s kind.';
comment on column memory.memory_merges.recorded_at is 'When the claim was remembered.';
comment on column memory.memory_merges.recorded_by is 'The role that remembered it.';
comment on column memory.memory_merges.memory_id is 'The memory held that the claim paraphrased.';
comment on column memory.memory_merges.content is 'The claim remembered.';
comment on column memory.memory_merges.similarity is 'Cosine of the claim''s vector to the memory''s words.';
comment on column memory.memory_merges.merged is 'true: merged (no new memory); false: shadow mode, recorded only.';
comment on column memory.memory_merges.created_memory_id is 'Shadow mode: the memory created instead of the merge.';

comment on table memory.tombstones is
'What memory.forget removed: the selector asked for, when, by whom, and counts (never the content).';
comment on column memory.tombstones.tenant_id is 'The tenant.';
comment on column memory.tombstones.tombstone_id is 'The tombstone.';
comment on column memory.tombstones.selector is 'What was asked to be forgotten: {agent_id, session_id?}.';
comment on column memory.tombstones.removed is 'How much went: {sessions, turns, chunks, memories}.';
comment on column memory.tombstones.forgotten_at is 'When.';
comment on column memory.tombstones.forgotten_by is 'The role that called memory.forget.';

comment on table memory.forgotten_sessions is
'Sessions memory.forget removed, by a hash of their id: memory.commit refuses them unless allow_forgotten.';
comment on column memory.forgotten_sessions.tenant_id is 'The tenant.';
comment on column memory.forgotten_sessions.agent_id is 'The agent whose session it was.';
comment on column memory.forgotten_sessions.session_sha256 is 'sha256 of the session id.';
comment on column memory.forgotten_sessions.tombstone_id is 'The tombstone of the forget that removed it.';
