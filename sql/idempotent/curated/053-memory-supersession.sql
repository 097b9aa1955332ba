-- Supersession without a key (setting memory_supersede: on, shadow or off). A claim that changes what a
-- memory the agent holds states ("I switched from vim to helix" after "My editor is vim") ends that memory:
-- its period ends where the new claim's begins, it is superseded, and as_of still answers with it before.
-- The rules judge by default (agent_memory_db.supersession: subject, attribute, value, read from the words,
-- and closeness in meaning for the verbs that may hold several values); the llm judge asks the chat
-- endpoint. Every decision is logged in memory.memory_supersessions with why, applied or, in shadow mode,
-- only recorded.

-- The claim's vector in the model the settings choose, or null without an embedder that embeds in the
-- database, or when embedding fails (a notice says so): what dedup and supersession compare a claim by.
create or replace function memory_internal._claim_vector(content text, settings jsonb) returns vector
language plpgsql
volatile
as $$
declare
    v_model record;
begin
    select * into v_model from memory_internal._embedding_model(settings);
    if v_model is null or v_model.provider = 'client' then
        return null;
    end if;
    return (memory_internal._embed_texts(array[content], settings))[1];
exception when others then
    raise notice 'agent_memory: a remembered claim was not compared by meaning: embedding it failed (%)', sqlerrm;
    return null;
end
$$;

comment on function memory_internal._claim_vector(text, jsonb) is
'Internal: a claim''s vector in the configured model (null without an in-database embedder, or with a notice '
'when embedding fails).';

-- Whether the rules read a subject, attribute and value in a claim (when not, no held memory is compared).
create or replace function memory_internal._claim_readable(content text) returns boolean
language plpython3u
immutable parallel safe
as $$
@load_python@
from agent_memory_db.supersession import readable
return readable(content)
$$;

comment on function memory_internal._claim_readable(text) is
'Internal: whether the supersession rules read a subject, attribute and value in a claim.';

-- The rules' choice among held claims (memory_id, content, similarity): the one the claim replaces, with
-- whether it denies it (retract) or gives another value (update), and why; no row when none.
create or replace function memory_internal._superseded_by_rules(content text, held jsonb, threshold double precision)
returns table (memory_id bigint, action text, reason text)
language plpython3u
immutable parallel safe
as $$
@load_python@
import json
from agent_memory_db.supersession import Held, supersedes
found = supersedes(content, [Held(h["memory_id"], h["content"], h.get("similarity")) for h in json.loads(held)], threshold)
return [found] if found else []
$$;

comment on function memory_internal._superseded_by_rules(text, jsonb, double precision) is
'Internal: the held claim (of memory_id, content, similarity) a new claim replaces by the supersession rules, '
'with the action (update or retract) and why; no row when none.';

-- Whether a claim changes what a held claim states, by the rules: then it is no paraphrase of it, however
-- close the two are in meaning ("I now prefer spaces over tabs" after "I prefer tabs over spaces").
create or replace function memory_internal._claim_changes(
    content text, held text, similarity double precision, threshold double precision
) returns boolean
language plpython3u
immutable parallel safe
as $$
@load_python@
from agent_memory_db.supersession import changes
return changes(content, held, similarity, threshold)
$$;

comment on function memory_internal._claim_changes(text, text, double precision, double precision) is
'Internal: whether a claim changes what a held claim states by the supersession rules (then it is no '
'paraphrase of it).';

-- The llm judge's choice: the chat endpoint is given the claim and the held claims and answers add, update,
-- retract or none (agent_memory_db.supersession.parse_llm_decision; an answer that makes no sense is an error).
create or replace function memory_internal._superseded_by_llm(content text, held jsonb, settings jsonb)
returns table (memory_id bigint, action text, reason text)
language plpython3u
volatile
as $$
@load_python@
import json
from agent_memory_db.supersession import Held, parse_llm_decision
candidates = [Held(h["memory_id"], h["content"], h.get("similarity")) for h in json.loads(held)]
request = json.dumps({"claim": content, "held": [{"content": h.content} for h in candidates]})
answer = plpy.execute(plpy.prepare("select memory_internal._llm_chat('supersession', $1, $2) as a", ["jsonb", "jsonb"]),
                      [request, settings])[0]["a"]
try:
    decision, memory_id, reason = parse_llm_decision(answer, candidates)
except ValueError as exc:
    plpy.error("agent_memory: the llm supersession judge's answer makes no sense: %s" % exc)
return [(memory_id, decision, reason)] if memory_id is not None else []
$$;

comment on function memory_internal._superseded_by_llm(text, jsonb, jsonb) is
'Internal: the held claim a new claim updates or retracts by the llm judge (the chat endpoint), with why; '
'no row for add or none.';

-- The last turn a memory came from (0 for none), which orders claims said at one instant.
create or replace function memory_internal._last_evidence(tenant text, memory_id bigint) returns bigint
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return (
        select coalesce(max(e.turn_id), 0) from memory.memory_evidence as e
        where e.tenant_id = tenant and e.memory_id = _last_evidence.memory_id
    );
end
$$;

comment on function memory_internal._last_evidence(text, bigint) is
'Internal: the last turn a memory came from (0 for none), to order claims said at one instant.';

-- What a new memory (current, without a key) supersedes, judged and logged, and applied when the setting
-- is on and the new claim is no less certain (confidence) than the held one: the held memory of the agent
-- (current, without a key, of the same kind, or fact and preference alike) ends where the new one begins;
-- when the new one is older (extracted late), it is the new one that ends where the held one begins.
-- Returns the memory superseded when it was, or null.
create or replace function memory_internal._supersede(tenant text, memory_id bigint, vector vector, settings jsonb)
returns bigint
language plpgsql
volatile
as $$
declare
    v_new memory.memories;
    v_held jsonb;
    v_found record;
    v_old memory.memories;
    v_applied boolean;
    v_judge text := settings ->> 'memory_supersede_judge';
    v_model text := (select m.model from memory_internal._embedding_model(settings) as m);
begin
    select * into v_new from memory.memories as m where m.tenant_id = tenant and m.memory_id = _supersede.memory_id;
    if settings ->> 'memory_supersede' = 'off' or v_new.key is not null or v_new.status not in ('active', 'ongoing')
        or v_judge = 'rules' and not memory_internal._claim_readable(v_new.content) then
        return null;
    end if;
    select coalesce(jsonb_agg(jsonb_build_object('memory_id', c.memory_id, 'content', c.content,
                                                 'similarity', c.similarity)
                              order by c.similarity desc nulls last, c.memory_id desc), '[]')
    into v_held
    from (
        select m.memory_id, m.content, 1 - (e.embedding <=> vector) as similarity
        from memory.memories as m
        left join memory.chunk_embeddings as e
            on m.tenant_id = e.tenant_id and m.turn_id = e.turn_id and e.chunk_no = 0 and e.model = v_model
        where m.tenant_id = tenant and m.agent_id = v_new.agent_id and m.memory_id <> v_new.memory_id
            and m.key is null and m.valid_to is null and m.status in ('active', 'ongoing')
            and (m.kind = v_new.kind or m.kind in ('fact', 'preference') and v_new.kind in ('fact', 'preference'))
        order by 1 - (e.embedding <=> vector) desc nulls last, m.memory_id desc
        limit case when v_judge = 'llm' then 10 else 200 end
    ) as c;
    if v_held = '[]' then
        return null;
    end if;
    if v_judge = 'llm' then
        select * into v_found from memory_internal._superseded_by_llm(v_new.content, v_held, settings);
    else
        select * into v_found
        from memory_internal._superseded_by_rules(v_new.content, v_held,
                                                  (settings ->> 'memory_supersede_threshold')::double precision);
    end if;
    if v_found.memory_id is null then
        return null;
    end if;
    select * into v_old from memory.memories as m where m.tenant_id = tenant and m.memory_id = v_found.memory_id;
    -- A claim less certain than the one it changes does not end it (the log says so).
    v_applied := settings ->> 'memory_supersede' = 'on' and v_new.confidence >= v_old.confidence;
    insert into memory.memory_supersessions (tenant_id, memory_id, by_memory_id, judge, action, reason, applied)
    values (tenant, v_found.memory_id, v_new.memory_id, v_judge, v_found.action,
            v_found.reason || case when v_new.confidence < v_old.confidence
                                   then format(' (confidence %s, below the held %s)', v_new.confidence, v_old.confidence)
                                   else '' end,
            v_applied);
    if v_applied then
        -- Said at one instant (the turns of a session without times of their own), the later turn is newer.
        if (v_new.valid_from, memory_internal._last_evidence(tenant, v_new.memory_id))
            >= (v_old.valid_from, memory_internal._last_evidence(tenant, v_old.memory_id)) then
            update memory.memories as m set valid_to = v_new.valid_from, status = 'superseded'
            where m.tenant_id = tenant and m.memory_id = v_old.memory_id;
            update memory.memories as m set supersedes = v_old.memory_id
            where m.tenant_id = tenant and m.memory_id = v_new.memory_id;
        else
            update memory.memories as m set valid_to = v_old.valid_from, status = 'superseded'
            where m.tenant_id = tenant and m.memory_id = v_new.memory_id;
            update memory.memories as m set supersedes = v_new.memory_id
            where m.tenant_id = tenant and m.memory_id = v_old.memory_id and m.supersedes is null;
        end if;
        return v_found.memory_id;
    end if;
    return null;
end
$$;

comment on function memory_internal._supersede(text, bigint, vector, jsonb) is
'Internal: judges (memory_supersede_judge) which held memory a new keyless memory supersedes, logs it in '
'memory.memory_supersessions and, when memory_supersede is on and the claim''s confidence is at least the '
'held one''s, ends the older of the two where the newer begins. Returns the memory superseded, or null.';
