-- The SQL tour of the README (psql -f docs/tour.sql): store a conversation, enrich it, recall, look inside.
\set ON_ERROR_STOP on
\pset pager off
\echo '== health'
select * from memory.health();

\echo '== commit a conversation (idempotent: running the tour again adds nothing)'
select * from memory.commit('tour-1',
  '[{"role": "user", "name": "Ana", "id": "t1", "created_at": "2026-11-02T09:00:00Z",
     "content": "We decided to move the auth service to Postgres with row level security."},
    {"role": "assistant", "id": "t2", "content": "Good call. I will draft the migration plan and the RLS policies."},
    {"role": "user", "name": "Ana", "id": "t3", "content": "ok thanks"},
    {"role": "user", "name": "Ana", "id": "t4",
     "content": "Remind me later to rotate the signing keys before the cut-over on Friday."}]',
  agent_id => 'tour-bot', source => 'demo');

\echo '== run the queued enrichment job'
call memory.work(10);

\echo '== what got indexed (noise such as "ok thanks" is left out; the turn before is kept as context)'
select t.position, t.role, left(c.text, 90) as indexed_text, c.context_turn_id
from memory.chunks as c join memory.turns as t using (tenant_id, turn_id)
where t.agent_id = 'tour-bot' order by t.position;

\echo '== the session summary'
select s.summary, s.decisions, s.open_loops
from memory.summaries as s join memory.sessions using (tenant_id, session_key)
where agent_id = 'tour-bot';

\echo '== recall: the turns that answer a question, with why they ranked there'
select speaker, left(content, 70) as content, round(score::numeric, 3) as score,
       components #>> '{signals,lexical,rank}' as lexical_rank, components #>> '{signals,dense,rank}' as dense_rank
from memory.recall('When is the auth cut-over?', k => 3, agent_id => 'tour-bot');

\echo '== recall at session level, and a filter by speaker name'
select session_id, left(content, 70) as best_turn, left(summary, 60) as summary
from memory.recall('Postgres migration', k => 1, agent_id => 'tour-bot', level => 'session');
select speaker, left(content, 70) as content
from memory.recall('what did Ana ask for?', k => 1, agent_id => 'tour-bot');

\echo '== explain_recall: every candidate with its rank in each list and every contribution'
select rank, left(content, 50) as content, round(score::numeric, 3) as score, round(fused::numeric, 3) as fused,
       components #>> '{signals,lexical,rank}' as lexical_rank, components #>> '{signals,dense,rank}' as dense_rank,
       components #>> '{signals,session,contribution}' as session,
       components #>> '{signals,speaker,contribution}' as speaker
from memory.explain_recall('signing keys', agent_id => 'tour-bot');

\echo '== embeddings, the queue, the settings'
select model, count(*) as vectors from memory.chunk_embeddings group by model;
select * from memory.queue_status;
select key, value, source from memory.settings where key in ('embedder', 'fusion', 'weight_dense', 'weight_speaker')
order by key;
select name, stage, weight, measures from memory.signal_definitions();
select name, stage, expression from memory.feature_definitions() where stage = 'turn';
