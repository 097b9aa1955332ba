-- Extraction: enrichment proposes curated memories from what a session's users state (setting
-- memory_extractor: patterns, llm or none), each with its turn as evidence, stored with the status the
-- setting extracted_memory_status gives (active, or pending for review) and origin patterns or llm.

-- The proposals for a session's turns: by the patterns (answer null), or read from the llm's answer; whether
-- each points at what only its context names.
drop function if exists memory_internal._propose_memories(jsonb, text);
create or replace function memory_internal._propose_memories(turns jsonb, answer text)
returns table (turn_id bigint, kind text, content text, context_bound boolean)
language plpython3u
stable
as $$
@load_python@
import json
from agent_memory_db import memory_extraction
said = json.loads(turns)
if answer is None:
    proposals = memory_extraction.propose(said)
else:
    try:
        proposals, problems = memory_extraction.parse_llm_memories(answer, said)
    except ValueError as exc:
        plpy.error("agent_memory: llm memory extraction failed: %s" % exc)
    for problem in problems:
        plpy.notice("agent_memory: llm memory extraction: %s; left out" % problem)
return [(p.turn_id, p.kind, p.content, p.context_bound) for p in proposals]
$$;

comment on function memory_internal._propose_memories(jsonb, text) is
'Internal: the memories a session''s user turns state (kind, words, evidence turn, whether they point at what '
'only their context names), by the patterns or from the llm extractor''s answer (an item that names no user '
'turn or misquotes it is left out with a notice).';

-- A session's proposals remembered as the session's agent, each holding from when its turn was said (recorded
-- now, when extracted), with the status extracted_memory_status gives, or pending when it points at what only
-- its context names. A claim already held (or paraphrased) gains the turn as evidence; what was proposed from
-- a turn once, kept or merged, is not proposed again (a retracted proposal stays retracted).
create or replace function memory_internal._extract_memories(
    tenant text, session bigint, turns jsonb, settings jsonb, answer text
) returns void
language plpgsql
as $$
declare
    v_agent text := memory_internal._extraction_agent(tenant, session, 'memories');
    v_run text := (select s.run_id from memory.sessions as s where s.tenant_id = tenant and s.session_key = session);
    v_proposal record;
    v_memory memory.remembered;
    v_held bigint;
begin
    for v_proposal in
        select p.turn_id, p.kind, p.content, t.created_at as said_at,
               case when p.context_bound then 'pending' else settings ->> 'extracted_memory_status' end as status
        from memory_internal._propose_memories(turns, answer) as p
        inner join memory.turns as t on t.tenant_id = tenant and t.turn_id = p.turn_id
        where not exists (
            select from memory.memory_evidence as e
            inner join memory.memories as m on e.tenant_id = m.tenant_id and e.memory_id = m.memory_id
            where e.tenant_id = tenant and e.turn_id = p.turn_id and m.agent_id = v_agent
                and (
                    m.canonical = memory_internal._memory_canonical(p.kind, '{}', btrim(p.content))
                    or exists (
                        select from memory.memory_merges as g
                        where g.tenant_id = tenant and g.memory_id = m.memory_id and g.content = btrim(p.content)
                    )
                )
        )
        -- One order of the claims' locks for every worker.
        order by memory_internal._memory_canonical(p.kind, '{}', btrim(p.content)), p.turn_id
    loop
        -- A claim held already gains the turn; remember() would find it the same way and change nothing.
        v_held := memory_internal._held_claim(
            tenant, v_agent, memory_internal._memory_canonical(v_proposal.kind, '{}', btrim(v_proposal.content)), null,
            v_proposal.status = 'pending'
        );
        if v_held is not null then
            perform memory_internal._add_evidence(tenant, v_held, array[v_proposal.turn_id]);
            continue;
        end if;
        -- A new claim, or a paraphrase of one held: remember stores the turn as its evidence.
        select r.* into v_memory
        from memory.remember(v_proposal.content, v_proposal.kind, agent_id => v_agent, enrich => 'queue',
                             evidence => array[v_proposal.turn_id], valid_from => v_proposal.said_at,
                             status => v_proposal.status, run_id => v_run) as r;
        -- A new memory (created, or superseding one it changes) comes from the extractor.
        if v_memory.outcome in ('created', 'updated') then
            update memory.memories as m set origin = settings ->> 'memory_extractor'
            where m.tenant_id = tenant and m.memory_id = v_memory.memory_id;
        end if;
    end loop;
end
$$;

comment on function memory_internal._extract_memories(text, bigint, jsonb, jsonb, text) is
'Internal: remembers the memories a session''s users state, each from when it was said (origin patterns or '
'llm; status from extracted_memory_status, pending when it points at what only its context names); a claim '
'already held gains the turn as evidence.';
