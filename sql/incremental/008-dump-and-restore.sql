-- Dump and restore (0.3.0). pg_dump dumps the data of the extension's tables, and pg_restore loads it
-- with the extension's triggers in place.

-- Tables derived by triggers from the rows they count (speakers from turns, the lexicon and the corpus
-- statistics from chunks) are not dumped: restoring turns and chunks rebuilds them. Dumped too, they
-- were counted twice and their COPY failed on duplicate keys.
select pg_catalog.pg_extension_config_dump('memory.speakers', 'where false');
select pg_catalog.pg_extension_config_dump('memory.lexicon', 'where false');
select pg_catalog.pg_extension_config_dump('memory.corpus', 'where false');

-- The identity sequences, with their positions: without them a restored database handed out keys
-- that were taken.
select pg_catalog.pg_extension_config_dump('memory.sessions_session_key_seq', '');
select pg_catalog.pg_extension_config_dump('memory.turns_turn_key_seq', '');
select pg_catalog.pg_extension_config_dump('memory.jobs_job_id_seq', '');
select pg_catalog.pg_extension_config_dump('memory.feedback_feedback_id_seq', '');

-- A vector belongs to a registered model (dropping a model drops its vectors). The reference also makes
-- pg_dump load the models before the vectors, whose triggers check them against their model.
alter table memory.chunk_embeddings
add constraint chunk_embeddings_model_fkey foreign key (model) references memory.embedding_models (model)
on delete cascade;
alter table memory.session_embeddings
add constraint session_embeddings_model_fkey foreign key (model) references memory.embedding_models (model)
on delete cascade;
