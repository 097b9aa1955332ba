-- Feedback: a helpful or unhelpful verdict on a recalled turn moves its trust, which recall weighs
-- (weight_trust * ln(trust)). Asymmetric by default: one unhelpful verdict halves trust, a helpful
-- one adds 0.1, so a wrong memory sinks fast and a good one rises slowly. Every verdict is kept.
create or replace function memory.feedback(
    turn_id bigint, helpful boolean, query text default null, note text default null
) returns table (feedback_id bigint, trust_before real, trust_after real)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_before real;
    v_after real;
    v_feedback bigint;
begin
    if feedback.helpful is null then
        raise exception 'agent_memory: feedback needs helpful => true or false' using errcode = 'null_value_not_allowed';
    end if;
    select t.trust into v_before from memory.turns as t
    where t.tenant_id = v_tenant and t.turn_key = feedback.turn_id
    for update;
    if not found then
        raise exception 'agent_memory: no turn % in tenant "%"', feedback.turn_id, v_tenant
            using errcode = 'no_data_found';
    end if;
    v_after := case when feedback.helpful
        then least((memory.setting('trust_max') #>> '{}')::real,
                   v_before + (memory.setting('trust_helpful_step') #>> '{}')::real)
        else greatest((memory.setting('trust_min') #>> '{}')::real,
                      v_before * (memory.setting('trust_unhelpful_factor') #>> '{}')::real)
    end;
    -- A verdict never moves trust the other way (a turn above trust_max stays where a DBA put it).
    v_after := case when feedback.helpful then greatest(v_after, v_before) else least(v_after, v_before) end;
    update memory.turns as t set trust = v_after where t.tenant_id = v_tenant and t.turn_key = feedback.turn_id;
    insert into memory.feedback as f (tenant_id, turn_key, helpful, query, note, trust_before, trust_after)
    values (v_tenant, feedback.turn_id, feedback.helpful, feedback.query, feedback.note, v_before, v_after)
    returning f.feedback_id into v_feedback;
    return query select v_feedback, v_before, v_after;
end
$$;

comment on function memory.feedback(bigint, boolean, text, text) is
'Records whether a recalled turn (turn_id from memory.recall) helped, and moves its trust: helpful adds '
'trust_helpful_step (up to trust_max), unhelpful multiplies by trust_unhelpful_factor (down to trust_min). '
'Returns the verdict''s id in memory.feedback (which keeps every verdict) and the trust before and after.';

-- What feedback has done, per turn: a DBA's view of trust.
create or replace view memory.feedback_summary as
select
    f.tenant_id,
    f.turn_key as turn_id,
    s.session_id,
    t.agent_id,
    t.trust,
    count(*) filter (where f.helpful) as helpful,
    count(*) filter (where not f.helpful) as unhelpful,
    max(f.created_at) as last_feedback_at,
    left(t.content, 120) as content
from memory.feedback as f
inner join memory.turns as t on f.tenant_id = t.tenant_id and f.turn_key = t.turn_key
inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
where f.tenant_id = memory.current_tenant()
group by f.tenant_id, f.turn_key, s.session_id, t.agent_id, t.trust, t.content;

comment on view memory.feedback_summary is
'Per judged turn of this tenant: helpful and unhelpful counts, the trust it has now, the last verdict.';
