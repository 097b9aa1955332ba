-- Recall signal "speaker" (boost stage): 1 when the turn's speaker is a participant the query names
-- (names are matched, not searched as words).
select memory_internal._define_feature(
    'speaker', 'chunk', 'text',
    $feature$t.speaker$feature$,
    'Who said the turn (its speaker''s name).',
    builtin => true
);

select memory_internal._define_feature(
    'speaker_named', 'turn', 'boolean',
    $feature$coalesce(d.speaker = any((r.query).speakers), false)$feature$,
    'Whether the turn''s speaker is a participant the query names.',
    builtin => true
);

create or replace function memory_internal.signal_speaker(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).speaker_named then 1 else 0 end
$$;

select memory_internal._define_builtin_signal(
    'speaker', 'boost', 'memory_internal.signal_speaker(memory.recall_candidate, jsonb)', 2.0,
    '1 when the turn''s speaker is a participant the query names (names are matched, not searched as '
    'words).'
);
