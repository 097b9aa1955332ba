-- Term statistics for BM25 (memory.lexicon, memory.corpus) and the speakers of each scope
-- (memory.speakers), kept current by triggers so recall reads them instead of counting.

-- How many lexeme occurrences a tsvector holds: a chunk's length for BM25.
create or replace function memory_internal._tsv_length(tsv tsvector) returns integer
language sql
immutable strict parallel safe
as $$ select coalesce(sum(coalesce(cardinality(u.positions), 1)), 0)::integer from unnest(tsv) as u $$;

comment on function memory_internal._tsv_length(tsvector) is
'Internal: the number of lexeme occurrences in a tsvector.';

-- Adds (sign 1) or removes (sign -1) chunks from the statistics. Rows are touched in key order so
-- that concurrent enrichments lock them in the same order. plpgsql, so its plans are kept (see
-- memory_internal._settings_json).
create or replace function memory_internal._count_chunks(
    tenants text[], agents text[], lengths integer[], tsvs tsvector[], sign integer
) returns void
language plpgsql
as $$
declare
    v_tenant text;
begin
    insert into memory.corpus as k (tenant_id, agent_id, chunks, total_length)
    select c.tenant_id, c.agent_id, sign * count(*), sign * sum(c.length)
    from unnest(tenants, agents, lengths) as c (tenant_id, agent_id, length)
    group by c.tenant_id, c.agent_id
    order by c.tenant_id, c.agent_id
    on conflict (tenant_id, agent_id) do update
    set chunks = k.chunks + excluded.chunks, total_length = k.total_length + excluded.total_length;

    insert into memory.lexicon as l (tenant_id, agent_id, lexeme, chunks)
    select c.tenant_id, c.agent_id, u.lexeme, sign * count(*)
    from unnest(tenants, agents, tsvs) as c (tenant_id, agent_id, tsv)
    cross join lateral unnest(c.tsv) as u
    -- Document frequency counts a chunk's own words (weight D), not its context (weight C).
    where u.weights is null or 'D' = any(u.weights)
    group by c.tenant_id, c.agent_id, u.lexeme
    order by c.tenant_id, c.agent_id, u.lexeme
    on conflict (tenant_id, agent_id, lexeme) do update
    set chunks = l.chunks + excluded.chunks;

    -- Tenant by tenant: on Citus a call runs on its tenant's worker, where a statement must name that tenant.
    if sign < 0 then
        for v_tenant in select distinct t.tenant_id from unnest(tenants) as t (tenant_id) loop
            delete from memory.lexicon as l
            where l.chunks <= 0 and l.tenant_id = v_tenant and l.agent_id = any(agents);
        end loop;
    end if;
end
$$;

comment on function memory_internal._count_chunks(text[], text[], integer[], tsvector[], integer) is
'Internal: adds or removes chunks from the BM25 statistics (memory.lexicon, memory.corpus).';

-- An update counts out and in only the rows whose counted fields (agent, length, full-text vector) changed: a
-- flag such as cold changes no statistic, and counting it out and in again would lock the tenant's statistics.
create or replace function memory_internal._chunks_changed() returns trigger
language plpgsql
as $$
begin
    if tg_op = 'DELETE' then
        perform memory_internal._count_chunks(array_agg(o.tenant_id), array_agg(o.agent_id), array_agg(o.length),
                                     array_agg(o.tsv), -1)
        from old_chunks as o having count(*) > 0;
    elsif tg_op = 'INSERT' then
        perform memory_internal._count_chunks(array_agg(n.tenant_id), array_agg(n.agent_id), array_agg(n.length),
                                     array_agg(n.tsv), 1)
        from new_chunks as n having count(*) > 0;
    else
        perform memory_internal._count_chunks(array_agg(c.tenant_id), array_agg(c.agent_id), array_agg(c.length),
                                              array_agg(c.tsv), c.sign)
        from (
            (
                select o.tenant_id, o.turn_id, o.chunk_no, o.agent_id, o.length, o.tsv, -1 as sign from old_chunks as o
                except all
                select n.tenant_id, n.turn_id, n.chunk_no, n.agent_id, n.length, n.tsv, -1 from new_chunks as n
            )
            union all
            (
                select n.tenant_id, n.turn_id, n.chunk_no, n.agent_id, n.length, n.tsv, 1 from new_chunks as n
                except all
                select o.tenant_id, o.turn_id, o.chunk_no, o.agent_id, o.length, o.tsv, 1 from old_chunks as o
            )
        ) as c
        group by c.sign
        order by c.sign;
    end if;
    return null;
end
$$;

comment on function memory_internal._chunks_changed() is 'Internal: trigger that keeps the BM25 statistics current.';

select memory_internal._create_change_triggers('memory.chunks', 'chunks', 'memory_internal._chunks_changed()');

-- Records speakers of turns (tenants, agents and speakers side by side), in key order.
create or replace function memory_internal._add_speakers(tenants text[], agents text[], speakers text[]) returns void
language plpgsql
as $$
begin
    insert into memory.speakers (tenant_id, agent_id, speaker)
    select distinct s.tenant_id, s.agent_id, s.speaker
    from unnest(tenants, agents, speakers) as s (tenant_id, agent_id, speaker)
    order by 1, 2, 3
    on conflict do nothing;
end
$$;

comment on function memory_internal._add_speakers(text[], text[], text[]) is
'Internal: records the speakers of turns (tenant, agent and speaker side by side).';

-- The new turns' speakers go to a function as arrays, as memory_internal._chunks_changed's chunks do: on Citus,
-- where triggers run on each shard, a statement on a distributed table cannot read a transition table.
create or replace function memory_internal._turns_added() returns trigger
language plpgsql
as $$
begin
    perform memory_internal._add_speakers(array_agg(n.tenant_id), array_agg(n.agent_id), array_agg(n.speaker))
    from new_turns as n where n.speaker is not null having count(*) > 0;
    return null;
end
$$;

comment on function memory_internal._turns_added() is 'Internal: trigger that records the speakers of new turns.';

drop trigger if exists turns_speakers on memory.turns;
create trigger turns_speakers after insert on memory.turns
referencing new table as new_turns
for each statement execute function memory_internal._turns_added();
