-- Semantic dedup of remembered claims (setting memory_dedup: merge, shadow or off). A claim that is not
-- the same claim by its canonical form may still be a paraphrase of a memory the agent holds: its vector
-- is within memory_dedup_threshold of that memory's words, and it states the same values
-- (agent_memory_db.paraphrase: numbers, names, polarity), which tells a paraphrase from a changed value.

-- Whether two claims state the same numbers, names and polarity.
create or replace function memory_internal._same_values(first text, second text) returns boolean
language plpython3u
immutable parallel safe
as $$
@load_python@
from agent_memory_db.paraphrase import same_values
return same_values(first, second)
$$;

comment on function memory_internal._same_values(text, text) is
'Internal: whether two claims state the same numbers, names and polarity (a paraphrase, not a changed value).';

-- The memory an agent holds now (of the claim's kind; under its key when it has one) that the claim
-- paraphrases: the closest by cosine of the claim's vector (memory_internal._claim_vector; none without
-- one) to the memory's words, at or above the threshold, stating the same values and not changing what it
-- states by the supersession rules. Memories whose words are not embedded yet are not compared.
drop function if exists memory_internal._paraphrased_memory(text, text, text, text, text, jsonb);
create or replace function memory_internal._paraphrased_memory(
    tenant text, agent text, kind text, key text, content text, vector vector, settings jsonb
) returns table (memory_id bigint, similarity double precision)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return query
    select c.memory_id, c.similarity
    from (
        select m.memory_id, m.content, 1 - (e.embedding <=> vector) as similarity
        from memory.memories as m
        inner join memory.chunk_embeddings as e
            on m.tenant_id = e.tenant_id and m.turn_id = e.turn_id and e.chunk_no = 0
            and e.model = (select d.model from memory_internal._embedding_model(settings) as d)
        where vector is not null and m.tenant_id = tenant and m.agent_id = agent and m.kind = _paraphrased_memory.kind
            and m.valid_to is null and m.status in ('active', 'ongoing')
            and (_paraphrased_memory.key is null or m.key = _paraphrased_memory.key)
        order by e.embedding <=> vector, m.memory_id
        limit 5
    ) as c
    where c.similarity >= (settings ->> 'memory_dedup_threshold')::double precision
        and memory_internal._same_values(c.content, _paraphrased_memory.content)
        and not memory_internal._claim_changes(_paraphrased_memory.content, c.content, c.similarity,
                                               (settings ->> 'memory_supersede_threshold')::double precision)
    order by c.similarity desc, c.memory_id
    limit 1;
end
$$;

comment on function memory_internal._paraphrased_memory(text, text, text, text, text, vector, jsonb) is
'Internal: the memory an agent holds that a claim (with its vector) paraphrases (cosine at or above '
'memory_dedup_threshold, same values), with the similarity; none without a vector.';
