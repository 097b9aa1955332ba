-- Recall signal "kind" (boost stage): 1 for a memory of the kind the question asks for (its intent:
-- memory.query_intent, or recall's intent argument) that is more relevant than the candidates' mean (its
-- fused score above 0), 0 otherwise. Its weight is the route: large enough by
-- default that such memories come before the hybrid's hits (memory first); 0 turns routing off.
select memory_internal._define_feature(
    'memory_kind', 'memory', 'text',
    $feature$tm.kind$feature$,
    'The kind of the curated memory the turn carries (rule, preference, decision, ...).',
    builtin => true
);

select memory_internal._define_feature(
    'intended', 'memory', 'boolean',
    $feature$coalesce(tm.kind = any((r.query).intent_kinds) and d.fused > 0, false)$feature$,
    'Whether the turn''s memory is of the kind the question asks for and more relevant than the '
    || 'candidates'' mean (fused score above 0).',
    builtin => true
);

create or replace function memory_internal.signal_kind(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).intended then 1.0 else 0.0 end
$$;

select memory_internal._define_builtin_signal(
    'kind', 'boost', 'memory_internal.signal_kind(memory.recall_candidate, jsonb)', 10,
    '1 for a memory of the kind the question asks for (rule, preference, decision: its intent) more relevant '
    || 'than the candidates'' mean, 0 otherwise; the weight routes such questions to curated memory first.'
);
