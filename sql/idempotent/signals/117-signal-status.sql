-- Recall signal "status" (boost stage): -1 for a memory that no longer holds (resolved; superseded and
-- retracted ones too when recall is asked to include them), 0 for a memory that holds and for a turn.
select memory_internal._define_feature(
    'memory_status', 'memory', 'text',
    $feature$tm.status$feature$,
    'The status of the curated memory the turn carries, as recall shows it (at as_of: as it was then).',
    builtin => true
);

create or replace function memory_internal.signal_status(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).memory_status in ('resolved', 'superseded', 'retracted') then -1.0 else 0.0 end
$$;

select memory_internal._define_builtin_signal(
    'status', 'boost', 'memory_internal.signal_status(memory.recall_candidate, jsonb)', 1,
    '-1 for a memory that no longer holds (resolved, or superseded or retracted when included), 0 otherwise.'
);
