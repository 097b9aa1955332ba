-- Feedback: a verdict on a recalled turn, a curated memory or a whole session. helpful raises trust,
-- which recall weighs (weight_trust * ln(trust)), by trust_helpful_step; unhelpful, incorrect and stale
-- lower it by trust_unhelpful_factor, so a wrong memory sinks fast and a good one rises slowly. On a
-- memory the verdict moves the trust of the turn that carries its words, and more: incorrect from
-- feedback_retract_after agents retracts it, stale multiplies its importance by feedback_stale_factor. On
-- a session it moves the trust of every turn. An agent's repeat of the verdict it last gave the same target
-- is kept but moves nothing. Every verdict is kept with what it did.

-- Trust after one verdict: up a step for helpful, down by the factor otherwise, within the bounds, and
-- never the other way (a turn above trust_max stays where a DBA put it).
create or replace function memory_internal._trust_after(trust real, helpful boolean) returns real
language sql
stable
as $$
    select case when helpful
        then greatest(trust, least((memory.setting('trust_max') #>> '{}')::real,
                                   trust + (memory.setting('trust_helpful_step') #>> '{}')::real))
        else least(trust, greatest((memory.setting('trust_min') #>> '{}')::real,
                                   trust * (memory.setting('trust_unhelpful_factor') #>> '{}')::real))
    end
$$;

comment on function memory_internal._trust_after(real, boolean) is
'Internal: a turn''s trust after a helpful or other verdict (trust_helpful_step, trust_unhelpful_factor, '
'within trust_min and trust_max).';

comment on type memory.feedback_given is
'What memory.give_feedback returns: the verdict''s id in table memory.feedback, the trust before and after '
'(of the turn judged or carrying the memory''s words; null for a session), the verdict, whether it counted '
'and its effect.';

-- What a counted verdict does to a memory besides its words' trust: stale lowers its importance by
-- feedback_stale_factor; incorrect from feedback_retract_after distinct judges retracts it. Returns what it
-- did, to append to the verdict's effect.
create or replace function memory_internal._memory_verdict(
    tenant text, memory_id bigint, status text, importance double precision, verdict text, judge text
) returns text
language plpgsql
as $$
declare
    v_factor double precision := (memory.setting('feedback_stale_factor') #>> '{}')::double precision;
    v_needed bigint := (memory.setting('feedback_retract_after') #>> '{}')::bigint;
    v_incorrect bigint;
begin
    if verdict = 'stale' then
        update memory.memories as m set importance = m.importance * v_factor
        where m.tenant_id = tenant and m.memory_id = _memory_verdict.memory_id;
        return format('; importance %s -> %s', importance, importance * v_factor);
    elsif verdict = 'incorrect' then
        select count(distinct f.judged_by) + 1 into v_incorrect from memory.feedback as f
        where f.tenant_id = tenant and f.memory_id = _memory_verdict.memory_id and f.verdict = 'incorrect'
            and f.counted and f.judged_by <> judge;
        if status <> 'retracted' and v_incorrect >= v_needed then
            perform from memory_internal._end_memory(_memory_verdict.memory_id, 'retracted', 'retracted');
            return format('; retracted (%s agents said incorrect)', v_incorrect);
        end if;
        return format('; %s of %s agents needed to retract it said incorrect', v_incorrect, v_needed);
    end if;
    return '';
end
$$;

comment on function memory_internal._memory_verdict(text, bigint, text, double precision, text, text) is
'Internal: what a counted stale or incorrect verdict does to a memory (importance, retraction), as text to '
'append to the verdict''s effect.';

create or replace function memory.give_feedback(
    verdict text, turn_id bigint default null, memory_id bigint default null, session_id text default null,
    query text default null, note text default null, judged_by text default null
) returns setof memory.feedback_given
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_verdict text := give_feedback.verdict;
    v_judge text := coalesce(give_feedback.judged_by, memory_internal._actor());
    v_turn bigint := give_feedback.turn_id;
    v_session bigint;
    v_memory record;
    v_last text;
    v_counted boolean;
    v_before real;
    v_after real;
    v_effect text;
    v_feedback bigint;
begin
    select null::bigint as memory_id, null::bigint as turn_id, null::text as status, null::double precision as importance
    into v_memory;
    if v_verdict is null or v_verdict not in ('helpful', 'unhelpful', 'incorrect', 'stale') then
        raise exception 'agent_memory: feedback verdict must be helpful, unhelpful, incorrect or stale, got %',
            coalesce(v_verdict, 'none') using errcode = 'invalid_parameter_value',
            hint = 'for example memory.give_feedback(''helpful'', turn_id => 42)';
    end if;
    if num_nonnulls(give_feedback.turn_id, give_feedback.memory_id, give_feedback.session_id) <> 1 then
        raise exception 'agent_memory: feedback needs one of turn_id, memory_id or session_id, got %',
            num_nonnulls(give_feedback.turn_id, give_feedback.memory_id, give_feedback.session_id)
            using errcode = 'invalid_parameter_value';
    end if;

    -- The target, locked so that verdicts on it take turns.
    if give_feedback.memory_id is not null then
        select m.memory_id, m.turn_id, m.status, m.importance into v_memory from memory.memories as m
        where m.tenant_id = v_tenant and m.memory_id = give_feedback.memory_id
        for update;
        if not found then
            raise exception 'agent_memory: no memory % in tenant "%"', give_feedback.memory_id, v_tenant
                using errcode = 'no_data_found';
        end if;
        v_turn := v_memory.turn_id;
    elsif give_feedback.session_id is not null then
        -- The judging agent's session of that name, else the only session of that name.
        v_session := memory_internal._session_key(give_feedback.session_id, case when exists (
            select from memory.sessions as s
            where s.tenant_id = v_tenant and s.session_id = give_feedback.session_id and s.agent_id = give_feedback.judged_by
        ) then give_feedback.judged_by end);
        perform from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = v_session for update;
    end if;
    if v_session is null then
        select t.trust into v_before from memory.turns as t
        where t.tenant_id = v_tenant and t.turn_id = v_turn
        for update;
        if not found then
            raise exception 'agent_memory: no turn % in tenant "%"', v_turn, v_tenant using errcode = 'no_data_found';
        end if;
    end if;

    -- A judge's repeat of the verdict it last gave this target is kept, not counted.
    select f.verdict into v_last from memory.feedback as f
    where f.tenant_id = v_tenant and f.judged_by = v_judge and f.counted
        and case when give_feedback.memory_id is not null then f.memory_id = give_feedback.memory_id
                 when v_session is not null then f.session_key = v_session
                 else f.turn_id = v_turn and f.memory_id is null end
    order by f.feedback_id desc
    limit 1;
    v_counted := v_last is distinct from v_verdict;

    if not v_counted then
        v_after := v_before;
        v_effect := format('none: %s already said %s', v_judge, v_verdict);
    elsif v_session is not null then
        update memory.turns as t set trust = memory_internal._trust_after(t.trust, v_verdict = 'helpful')
        where t.tenant_id = v_tenant and t.session_key = v_session;
        v_effect := format('trust of the session''s %s turns %s', (
            select count(*) from memory.turns as t where t.tenant_id = v_tenant and t.session_key = v_session
        ), case when v_verdict = 'helpful' then 'raised' else 'lowered' end);
    else
        v_after := memory_internal._trust_after(v_before, v_verdict = 'helpful');
        update memory.turns as t set trust = v_after where t.tenant_id = v_tenant and t.turn_id = v_turn;
        v_effect := format('trust %s -> %s', v_before, v_after);
        if v_memory.memory_id is not null then
            v_effect := v_effect || memory_internal._memory_verdict(
                v_tenant, v_memory.memory_id, v_memory.status, v_memory.importance, v_verdict, v_judge
            );
        end if;
    end if;

    perform memory_internal._count(v_tenant, array['feedback'], array[v_verdict], array[1]);
    -- Helpful: what was judged is in use, back to hot.
    if v_counted and v_verdict = 'helpful' then
        perform memory_internal._mark_used(v_tenant, array[coalesce(v_session, (
            select t.session_key from memory.turns as t where t.tenant_id = v_tenant and t.turn_id = v_turn
        ))], array[v_turn]);
    end if;

    insert into memory.feedback as f (tenant_id, turn_id, memory_id, session_key, helpful, verdict, query, note,
                                      trust_before, trust_after, judged_by, counted, effect)
    values (v_tenant, case when give_feedback.memory_id is null and v_session is null then v_turn end, give_feedback.memory_id,
            v_session, v_verdict = 'helpful', v_verdict, give_feedback.query, give_feedback.note, v_before, v_after, v_judge,
            v_counted, v_effect)
    returning f.feedback_id into v_feedback;
    return query select v_feedback, v_before, v_after, v_verdict, v_counted, v_effect;
end
$$;

comment on function memory.give_feedback(text, bigint, bigint, text, text, text, text) is
'Records a verdict on a recalled turn (turn_id), a curated memory (memory_id) or a whole session (session_id): '
'helpful, unhelpful, incorrect or stale. helpful adds trust_helpful_step to trust (up to trust_max) and moves '
'what was judged (session, memory) to the hot tier; the others multiply it by trust_unhelpful_factor (down to '
'trust_min). On a memory: the trust of its words'' turn; incorrect from feedback_retract_after distinct judges '
'retracts it; stale multiplies its importance by feedback_stale_factor. On a session: every turn''s trust. '
'judged_by: the agent judging (default the role; session_id names its session, else the only one of that '
'name): its repeat of the verdict it last gave the target is kept with counted false and moves nothing. '
'Returns the verdict''s id in table memory.feedback (which keeps every verdict), the trust before and after '
'(turns and memories), the verdict, whether it counted and what it did.';

-- What feedback has done, per turn: a DBA's view of trust.
create or replace view memory.feedback_summary as
select
    f.tenant_id,
    f.turn_id,
    s.session_id,
    t.agent_id,
    t.trust,
    count(*) filter (where f.helpful and f.counted) as helpful,
    count(*) filter (where not f.helpful and f.counted) as unhelpful,
    max(f.created_at) as last_feedback_at,
    left(t.content, 120) as content
from memory.feedback as f
inner join memory.turns as t on f.tenant_id = t.tenant_id and f.turn_id = t.turn_id
inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
where f.tenant_id = memory.current_tenant()
group by f.tenant_id, f.turn_id, s.session_id, t.agent_id, t.trust, t.content;
