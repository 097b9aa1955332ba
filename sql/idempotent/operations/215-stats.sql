-- How much memory each agent of this tenant holds, and how far its enrichment has got.
create or replace function memory_internal._stats(tenant text, agent text)
returns table (
    agent_id text, sessions bigint, turns bigint, chunks bigint, embedded_chunks bigint, summaries bigint,
    remembered bigint, feedback bigint, pending_jobs bigint, dead_jobs bigint,
    first_turn_at timestamptz, last_turn_at timestamptz
)
language sql
stable
as $$
    with agents as (
        select s.agent_id, count(*) as sessions
        from memory.sessions as s
        where s.tenant_id = tenant and (agent is null or s.agent_id = agent)
        group by s.agent_id
    )
    select a.agent_id, a.sessions,
           t.turns,
           (select count(*) from memory.chunks as c
            where c.tenant_id = tenant and c.agent_id = a.agent_id),
           (select count(*) from memory.chunks as c
            inner join memory.chunk_embeddings as e
                on c.tenant_id = e.tenant_id and c.turn_id = e.turn_id and c.chunk_no = e.chunk_no
            where c.tenant_id = tenant and c.agent_id = a.agent_id
                and e.model = memory.recall_model()),
           (select count(*) from memory.summaries as m
            inner join memory.sessions as s on m.tenant_id = s.tenant_id and m.session_key = s.session_key
            where s.tenant_id = tenant and s.agent_id = a.agent_id),
           (select count(*) from memory.memories as m
            where m.tenant_id = tenant and m.agent_id = a.agent_id
                and memory.memory_holds(m.status, m.valid_from, m.valid_to, null)),
           -- Verdicts on the agent's turns, memories and sessions.
           (select count(*) from memory.feedback as f
            left join memory.turns as u on f.tenant_id = u.tenant_id and f.turn_id = u.turn_id
            left join memory.memories as m on f.tenant_id = m.tenant_id and f.memory_id = m.memory_id
            left join memory.sessions as s on f.tenant_id = s.tenant_id and f.session_key = s.session_key
            where f.tenant_id = tenant and a.agent_id in (u.agent_id, m.agent_id, s.agent_id)),
           j.pending, j.dead,
           t.first_at, t.last_at
    from agents as a
    cross join lateral (
        select count(*) as turns, min(u.created_at) as first_at, max(u.created_at) as last_at
        from memory.turns as u
        where u.tenant_id = tenant and u.agent_id = a.agent_id
    ) as t
    cross join lateral (
        select count(*) filter (where j.status in ('queued', 'running')) as pending,
               count(*) filter (where j.status = 'dead') as dead
        from memory.jobs as j
        inner join memory.sessions as s on j.tenant_id = s.tenant_id and j.session_key = s.session_key
        where j.tenant_id = tenant and s.agent_id = a.agent_id
    ) as j
    order by a.agent_id
$$;

comment on function memory_internal._stats(text, text) is
'Internal: memory.stats of a tenant (named by value, as Citus routes a statement).';

-- (A SQL function may name a parameter as it names a column it returns, PL/pgSQL may not: the API keeps its
-- names, and memory_internal._stats, a SQL function whose parameters have other names, runs as PL/pgSQL on
-- Citus.)
create or replace function memory.stats(agent_id text default null)
returns table (
    agent_id text, sessions bigint, turns bigint, chunks bigint, embedded_chunks bigint, summaries bigint,
    remembered bigint, feedback bigint, pending_jobs bigint, dead_jobs bigint,
    first_turn_at timestamptz, last_turn_at timestamptz
)
language sql
stable
as $$ select * from memory_internal._stats(memory.current_tenant(), stats.agent_id) $$;

comment on function memory.stats(text) is
'Per agent of this tenant (or one agent): sessions, turns, indexed chunks and how many have vectors of the '
'recall model, summaries, remembered: the curated memories that hold now, feedback verdicts (on its turns, '
'memories and sessions), pending and dead enrichment jobs, first and last turn time.';
