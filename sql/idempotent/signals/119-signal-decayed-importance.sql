-- Recall signal "decayed_importance" (boost stage): the importance of the hit's memory (or, for chat, the
-- setting session_importance) decayed over the days it went unused (memory.tier_items).
select memory_internal._define_feature(
    'decayed_importance', 'turn', 'double precision',
    $feature$memory.decayed_importance(
        coalesce(tm.importance, (r.settings ->> 'session_importance')::double precision),
        coalesce(tm.last_used, greatest(s.updated_at, s.used_at)), pg_catalog.now(), r.settings
    )$feature$,
    'The importance of the turn''s memory, or session_importance for chat, decayed over the days it '
    || 'went unused.',
    builtin => true
);

create or replace function memory_internal.signal_decayed_importance(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).decayed_importance, 0)
$$;

select memory_internal._define_builtin_signal(
    'decayed_importance', 'boost', 'memory_internal.signal_decayed_importance(memory.recall_candidate, jsonb)', 0,
    'The importance of the hit''s memory, or session_importance for chat, decayed over the days it went unused '
    || '(tier half-lives).'
);
