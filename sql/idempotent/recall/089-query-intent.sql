-- Intent routing: a question about rules, preferences or decisions is answered from curated memory
-- first. Its intent is the memory kind its words ask for, found without any model: rule (rules, policies,
-- guidelines, instructions, constraints, conventions, what is allowed or required), preference (prefer,
-- preference, favourite), decision (decide, decision, agreed, settled on, going with, chose). Recall gives
-- memories of that kind that are more relevant than the candidates' mean the signal kind (weight_kind),
-- which by default puts them above the hybrid.
create or replace function memory.query_intent(query text) returns text
language sql
immutable parallel safe
as $$
    select case
        when query ~* '\m(rules?|polic(y|ies)|guidelines?|instructions?|constraints?|conventions?|allowed|supposed to|required to|must (i|we))\M'
            then 'rule'
        when query ~* '\m(prefers?|preferred|preferences?|favou?rites?)\M' then 'preference'
        when query ~* '\m(decide|decided|decisions?|agreed|settled on|going with|go with|chose|chosen)\M' then 'decision'
    end
$$;

comment on function memory.query_intent(text) is
'The memory kind a question asks for, from its words (no model): rule (rules, policies, guidelines, '
'instructions, constraints, conventions, allowed, required), preference (prefer, preference, favourite) '
'or decision (decide, decision, agreed, settled on, going with, chose); null for any other '
'question. recall(intent => ...) overrides it.';
