-- Recall signal "trust" (boost stage): ln(trust) of the turn: 0 at trust 1, negative after unhelpful
-- feedback, positive after helpful.
select memory_internal._define_feature(
    'trust', 'chunk', 'double precision',
    $feature$t.trust$feature$,
    'The turn''s trust (1 at first; feedback moves it).',
    builtin => true
);

create or replace function memory_internal.signal_trust(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select ln(greatest((c).trust, 1e-6))
$$;

select memory_internal._define_builtin_signal(
    'trust', 'boost', 'memory_internal.signal_trust(memory.recall_candidate, jsonb)', 1,
    'ln(trust) of the turn: 0 at trust 1, negative after unhelpful feedback, positive after helpful.'
);
