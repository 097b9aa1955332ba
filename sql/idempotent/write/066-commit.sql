-- memory.commit: store a session's messages. Idempotent: a message already stored (same caller id,
-- or without id the same content at the same position) is skipped, so re-committing a growing
-- session appends only its new turns. Bad input raises an error naming the message and stores nothing.

-- Whether a message's content parts (a JSON array) hold one that is not text: a string, or an object with "text".
create or replace function memory_internal._content_parts_problem(parts jsonb) returns boolean
language sql
immutable parallel safe
as $$
    select exists (
        select from jsonb_array_elements(parts) as part
        where jsonb_typeof(part) <> 'string'
            and (jsonb_typeof(part) <> 'object' or jsonb_typeof(part -> 'text') is distinct from 'string')
    )
$$;

comment on function memory_internal._content_parts_problem(jsonb) is
'Internal: whether a message''s content parts hold one that is neither a string nor an object with "text".';

-- Whether a message's entities are not a list of names or {"name", "type"} objects of a known type.
create or replace function memory_internal._entities_problem(entities jsonb) returns boolean
language sql
immutable parallel safe
as $$
    select jsonb_typeof(entities) <> 'array' or exists (
        select from jsonb_array_elements(entities) as e
        where not (jsonb_typeof(e) = 'string'
                   or jsonb_typeof(e) = 'object' and jsonb_typeof(e -> 'name') = 'string'
                   and coalesce(e ->> 'type', 'other') = any(memory_internal._entity_types()))
    )
$$;

comment on function memory_internal._entities_problem(jsonb) is
'Internal: whether a message''s entities are not a list of names or {"name", "type"} objects of a known type.';

-- What is wrong with a message's embedding (the client embedder's), or null. Its numbers are read in one pass.
create or replace function memory_internal._embedding_problem(embedding jsonb, dimensions integer) returns text
language sql
stable parallel safe
as $$
    select case
        when jsonb_typeof(embedding) <> 'array' or jsonb_array_length(embedding) <> dimensions or n.not_numbers > 0
            then format('has an embedding that is not a list of %s numbers (setting client_dimensions)', dimensions)
        when n.not_zero = 0 then 'has an embedding that is all zeros'
        -- The HNSW graphs hold vectors at half precision, whose largest number is 65504.
        when n.beyond_half > 0
            then 'has an embedding with a number beyond 65504 either way, more than half precision holds'
    end
    from (
        select
            count(*) filter (where jsonb_typeof(x) <> 'number') as not_numbers,
            count(*) filter (where x <> '0') as not_zero,
            count(*) filter (
                where case when jsonb_typeof(x) = 'number' then abs((x #>> '{}')::float8) > 65504 end
            ) as beyond_half
        from jsonb_array_elements(case when jsonb_typeof(embedding) = 'array' then embedding end) as x
    ) as n
$$;

comment on function memory_internal._embedding_problem(jsonb, integer) is
'Internal: what is wrong with a message''s embedding (not a list of client_dimensions numbers, all zeros, a number '
'beyond half precision), or null.';

-- The first problem with one message (a JSON object, as jsonb), or null when it is acceptable. One
-- expression without subqueries (those are in the helpers, called only for the keys that need them), stable
-- and without a pinned search_path: the planner inlines it into _checked_messages' query, where a function
-- call per message cost 50 us, half of a commit's time.
create or replace function memory_internal._message_problem(message jsonb, max_chars integer, dimensions integer)
returns text
language sql
stable parallel safe
as $$
    select case
        when message -> 'role' is null or jsonb_typeof(message -> 'role') = 'null' then 'has no role'
        when jsonb_typeof(message -> 'role') <> 'string'
            or message ->> 'role' not in ('user', 'assistant', 'system', 'tool')
            then format('has unknown role %s (expected user, assistant, system or tool)', message -> 'role')
        when (message -> 'content' is null or jsonb_typeof(message -> 'content') = 'null')
            and coalesce(jsonb_typeof(message -> 'tool_calls'), 'null') <> 'array'
            then 'has no content'
        when jsonb_typeof(message -> 'content') not in ('string', 'array', 'null')
            then 'has content that is neither a string nor a list of text parts'
        when jsonb_typeof(message -> 'content') = 'array'
            and memory_internal._content_parts_problem(message -> 'content')
            then 'has a content part that is not text (a string or an object with "text")'
        when length(message::text) > max_chars and length(memory_internal._message_text(message)) > max_chars
            then format('is %s characters long, over the limit of %s (setting max_message_chars)',
                        length(memory_internal._message_text(message)), max_chars)
        when message -> 'id' is not null and jsonb_typeof(message -> 'id') not in ('string', 'number')
            then 'has an id that is neither a string nor a number'
        when length(message ->> 'id') > 1000 then 'has an id over 1000 characters'
        when length(message ->> 'name') > 1000 then 'has a name over 1000 characters'
        when message -> 'created_at' is not null
            and (jsonb_typeof(message -> 'created_at') <> 'string'
                 or message ->> 'created_at' !~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*(Z|z|[+-]\d{2}(:?\d{2})?)?$')
            then format('has created_at %s, which is not an ISO 8601 timestamp', message -> 'created_at')
        -- (A later branch is evaluated only when the ones before it are false: tokens is a number there.)
        when jsonb_typeof(message -> 'tokens') not in ('number', 'null')
            then format('has tokens %s, which is not a whole number from 0 to 2147483647', message -> 'tokens')
        when not ((message ->> 'tokens')::numeric between 0 and 2147483647
                  and (message ->> 'tokens')::numeric = trunc((message ->> 'tokens')::numeric))
            then format('has tokens %s, which is not a whole number from 0 to 2147483647', message -> 'tokens')
        when message -> 'metadata' is not null and jsonb_typeof(message -> 'metadata') <> 'object'
            then 'has metadata that is not a JSON object'
        when message -> 'name' is not null and jsonb_typeof(message -> 'name') not in ('string', 'null')
            then 'has a name that is not a string'
        when coalesce(message -> 'entities', message -> 'metadata' -> 'entities') is not null
            and memory_internal._entities_problem(coalesce(message -> 'entities', message -> 'metadata' -> 'entities'))
            then 'has entities that are not a list of names or {"name", "type"} objects (type: '
               || array_to_string(memory_internal._entity_types(), ', ') || ')'
        when message -> 'status' is not null and message ->> 'role' <> 'tool'
            then 'has a status, which only a tool result (role tool) has'
        when message -> 'status' is not null and (jsonb_typeof(message -> 'status') <> 'string'
                                                  or message ->> 'status' not in ('success', 'error', 'timeout'))
            then format('has status %s (expected success, error or timeout)', message -> 'status')
        when message -> 'duration_ms' is not null and message ->> 'role' <> 'tool'
            then 'has a duration_ms, which only a tool result (role tool) has'
        when jsonb_typeof(message -> 'duration_ms') not in ('number', 'null')
            or not ((message ->> 'duration_ms')::numeric between 0 and 2147483647
                    and (message ->> 'duration_ms')::numeric = trunc((message ->> 'duration_ms')::numeric))
            then format('has duration_ms %s, which is not a whole number of milliseconds from 0 to 2147483647',
                        message -> 'duration_ms')
        when message -> 'embedding' is not null
            then memory_internal._embedding_problem(message -> 'embedding', dimensions)
    end
$$;

comment on function memory_internal._message_problem(jsonb, integer, integer) is
'Internal: what is wrong with one message given to memory.commit, or null.';

-- The text of a message's content parts: each part's text, joined by newlines.
create or replace function memory_internal._content_parts_text(parts jsonb) returns text
language sql
immutable parallel safe
as $$
    select coalesce(string_agg(coalesce(p.part ->> 'text', p.part #>> '{}'), e'\n' order by p.n), '')
    from jsonb_array_elements(parts) with ordinality as p (part, n)
$$;

comment on function memory_internal._content_parts_text(jsonb) is
'Internal: the text of a message''s content parts (strings or objects with "text"), joined by newlines.';

-- A message's text: the content string, or its text parts joined by newlines. An expression the planner
-- inlines (no subquery, no pinned search_path), as it does _message_sha256 (on one node: on Citus no SQL
-- function is inlined, memory_internal._adapt_to_citus).
create or replace function memory_internal._message_text(message jsonb) returns text
language sql
immutable parallel safe
as $$
    select case jsonb_typeof(message -> 'content')
        when 'string' then message ->> 'content'
        when 'array' then memory_internal._content_parts_text(message -> 'content')
        else ''
    end
$$;

comment on function memory_internal._message_text(jsonb) is
'Internal: the text of a message''s content (a string, or text parts joined by newlines).';

-- Identifiers (session and agent ids, sources, models, kinds) are keys of btree indexes: at most 1,000
-- characters, refused by name beyond that.
create or replace function memory_internal._check_identifier(field text, value text) returns void
language plpgsql
immutable
as $$
begin
    if length(value) > 1000 then
        raise exception 'agent_memory: % is % characters long, over the limit of 1000', field, length(value)
            using errcode = 'invalid_parameter_value';
    end if;
end
$$;

comment on function memory_internal._check_identifier(text, text) is
'Internal: refuses an identifier (session_id, agent_id, ...) over 1,000 characters, naming it.';

-- Why a JSON value does not convert to jsonb, or null when it does: it holds the escape of a NUL character
-- (\u0000), or of half a surrogate pair (\ud800), which json accepts and jsonb does not.
create or replace function memory_internal._jsonb_problem(value json) returns text
language plpgsql
immutable
as $$
begin
    perform value::jsonb;
    return null;
exception
    when untranslatable_character then
        return 'contains a NUL character (\u0000)';
    when invalid_text_representation then
        return 'contains a \u escape that is not a character (half of a surrogate pair, such as \ud800)';
end
$$;

comment on function memory_internal._jsonb_problem(json) is
'Internal: why a JSON value does not convert to jsonb (a NUL character, half a surrogate pair), or null.';

-- A commit's messages as jsonb, or an error naming the first message that is not acceptable: one jsonb
-- cannot hold, one that breaks a rule of memory_internal._message_problem, an id an earlier message has,
-- or a created_at that is not a real time.
create or replace function memory_internal._checked_messages(
    messages json, max_chars integer, dimensions integer
) returns jsonb
language plpgsql
stable
as $$
declare
    v_messages jsonb;
    v_problem record;
    v_bad_time record;
begin
    -- jsonb cannot hold a NUL character (the JSON escape \u0000; the six characters of a C escape in a
    -- code snippet are "\\u0000" in JSON and are fine) or half a surrogate pair (\ud800): find the message
    -- that has one, then use the array parsed once as jsonb for every further step.
    begin
        v_messages := messages::jsonb;
    exception when untranslatable_character or invalid_text_representation then
        select p.index, p.problem into v_problem
        from (
            select m.n - 1 as index, memory_internal._jsonb_problem(m.message) as problem
            from json_array_elements(messages) with ordinality as m (message, n)
        ) as p
        where p.problem is not null
        order by p.index
        limit 1;
        raise exception 'agent_memory: message % %', v_problem.index, v_problem.problem
            using errcode = 'invalid_parameter_value';
    end;

    select p.index, p.problem into v_problem
    from (
        select m.n - 1 as index,
               case
                   when jsonb_typeof(m.message) is distinct from 'object' then 'is not a JSON object'
                   else memory_internal._message_problem(m.message, max_chars, dimensions)
               end as problem
        from jsonb_array_elements(v_messages) with ordinality as m (message, n)
    ) as p
    where p.problem is not null
    order by p.index
    limit 1;
    if found then
        raise exception 'agent_memory: message % %', v_problem.index, v_problem.problem
            using errcode = 'invalid_parameter_value';
    end if;

    select d.index, d.id into v_problem
    from (
        select m.n - 1 as index, m.message ->> 'id' as id,
               pg_catalog.row_number() over (partition by m.message ->> 'id' order by m.n) as copy
        from jsonb_array_elements(v_messages) with ordinality as m (message, n)
        where m.message ->> 'id' is not null
    ) as d
    where d.copy > 1
    order by d.index
    limit 1;
    if found then
        raise exception 'agent_memory: message % repeats id % of an earlier message', v_problem.index, v_problem.id
            using errcode = 'invalid_parameter_value';
    end if;

    -- Timestamps that match the pattern but are not real dates (2024-02-30) fail the cast: find which. (Only
    -- when a message has one: the block is a subtransaction.)
    if v_messages @? '$[*].created_at' then
        begin
            perform (m.message ->> 'created_at')::timestamptz from jsonb_array_elements(v_messages) as m (message);
        exception when datetime_field_overflow or invalid_datetime_format or invalid_time_zone_displacement_value then
            for v_bad_time in
                select m.n - 1 as index, m.message ->> 'created_at' as created_at
                from jsonb_array_elements(v_messages) with ordinality as m (message, n)
                where m.message ->> 'created_at' is not null order by m.n
            loop
                begin
                    perform v_bad_time.created_at::timestamptz;
                exception when datetime_field_overflow or invalid_datetime_format
                    or invalid_time_zone_displacement_value then
                    raise exception 'agent_memory: message % has created_at "%", which is not a valid time',
                        v_bad_time.index, v_bad_time.created_at using errcode = 'invalid_parameter_value';
                end;
            end loop;
        end;
    end if;
    return v_messages;
end
$$;

comment on function memory_internal._checked_messages(json, integer, integer) is
'Internal: a commit''s messages as jsonb, or an error naming the first message that is not acceptable.';

-- The hash a message's words are matched by: of its text, or for a tool result whose words retention cleared
-- (an export of it: no content, metadata content_removed_at and content_sha256) the hash its words had.
create or replace function memory_internal._message_sha256(message jsonb, content text) returns bytea
language sql
stable
as $$
    select case when content = '' and message #> '{metadata,content_removed_at}' is not null
                     and message #>> '{metadata,content_sha256}' ~ '^[0-9a-f]{64}$'
                then decode(message #>> '{metadata,content_sha256}', 'hex')
                else sha256(convert_to(content, 'UTF8')) end
$$;

comment on function memory_internal._message_sha256(jsonb, text) is
'Internal: the hash a message''s words are matched by (that of its text, or the hash kept with a tool result '
'whose words retention cleared).';

-- The messages of a commit that its session does not hold yet, stored as turns after its last one: how many,
-- and how many are longer than indexing reads (index_max_chunks x chunk_chars: stored whole, indexed in part).
-- One statement, which names the parameters by position ($1 the tenant, $2 the session, $3 the agent, $4 the
-- messages, $5 the roles indexed, $6 the characters indexing reads): on Citus it runs prepared on the tenant's
-- shards (memory_internal._adapt_to_citus).
create or replace function memory_internal._add_turns(
    tenant text, session bigint, agent text, messages jsonb, index_roles jsonb, index_chars bigint,
    out added integer, out partial integer
)
language plpgsql
-- One plan for every call: left to choose, PostgreSQL planned this statement anew on most calls (its generic
-- plan's estimate was above the custom plans'), which cost a third of a commit.
set plan_cache_mode = force_generic_plan
as $$
begin
    with parsed as (
        select m.n - 1 as index, m.message
        from jsonb_array_elements($4) with ordinality as m (message, n)
    ),
    -- Each text computed once (offset 0 keeps the subquery from being merged into the query, which would
    -- compute it in each place it is used, three with the hash) and, on one node, inlined: 2.6 us a message,
    -- against 4.6 in a materialized CTE and 4.9 as a function in FROM (not inlined there).
    incoming as (
        select p.index, p.message, p.message ->> 'id' as message_id, x.content,
               memory_internal._message_sha256(p.message, x.content) as content_sha256
        from parsed as p
        cross join lateral (select memory_internal._message_text(p.message) as content offset 0) as x
    ),
    fresh as (
        select i.* from incoming as i
        where not exists (
            select from memory.turns as t
            where t.tenant_id = $1 and t.session_key = $2
                and (
                    t.message_id = i.message_id
                    or i.message_id is null and t.message_id is null and t.position = i.index
                    and t.content_sha256 = i.content_sha256
                )
        )
    ),
    last_position as (
        select coalesce(max(t.position), -1) as p from memory.turns as t
        where t.tenant_id = $1 and t.session_key = $2
    ),
    stored as (
        -- The key from the column's own sequence, named (a Citus shard has no identity column; the node's
        -- sequence counts in its own range).
        insert into memory.turns as n (turn_id, tenant_id, session_key, agent_id, position, message_id, role,
                                       speaker, content, content_sha256, tool_calls, tool_call_id, tokens,
                                       client_embedding, metadata, created_at)
        overriding system value
        select pg_catalog.nextval('memory.turns_turn_id_seq'), $1, $2, $3,
               lp.p + row_number() over (order by f.index),
               f.message_id, f.message ->> 'role', f.message ->> 'name', f.content, f.content_sha256,
               f.message -> 'tool_calls', f.message ->> 'tool_call_id',
               (f.message ->> 'tokens')::integer,
               (f.message ->> 'embedding')::vector,
               coalesce(f.message -> 'metadata', '{}')
               || jsonb_strip_nulls(jsonb_build_object('entities', f.message -> 'entities',
                                                       'tool_status', f.message -> 'status',
                                                       'duration_ms', f.message -> 'duration_ms')),
               coalesce((f.message ->> 'created_at')::timestamptz,
                        (select s.started_at from memory.sessions as s
                         where s.tenant_id = $1 and s.session_key = $2))
        from fresh as f cross join last_position as lp
        order by f.index
        returning n.role, n.content
    )
    -- Turns longer than indexing reads (index_max_chunks x chunk_chars) are stored whole, indexed in part.
    select count(*), count(*) filter (where $5 ? a.role and length(a.content) > $6)
    from stored as a
    into added, partial;
end
$$;

comment on function memory_internal._add_turns(text, bigint, text, jsonb, jsonb, bigint) is
'Internal: stores the messages a session does not hold yet as its next turns; how many, and how many are '
'indexed in part.';

-- commit's arguments checked, each refused by name: what makes no session, a bad enrich mode or metadata,
-- messages that are no array, identifiers too long or blank, negative token counts.
create or replace function memory_internal._check_commit(
    session_id text, messages json, agent_id text, source text, model text, tokens_in bigint, tokens_out bigint,
    metadata jsonb, enrich text, run_id text
) returns void
language plpgsql
immutable
as $$
begin
    if session_id is null or btrim(session_id) = '' then
        raise exception 'agent_memory: commit needs a session_id';
    end if;
    if agent_id is null or btrim(agent_id) = '' then
        raise exception 'agent_memory: commit needs an agent_id';
    end if;
    if enrich not in ('queue', 'now', 'none') then
        raise exception 'agent_memory: enrich must be queue, now or none, got %', enrich;
    end if;
    if metadata is null or jsonb_typeof(metadata) <> 'object' then
        raise exception 'agent_memory: commit metadata must be a JSON object';
    end if;
    if messages is null or json_typeof(messages) <> 'array' then
        raise exception 'agent_memory: messages must be a JSON array of messages, got %',
            coalesce(json_typeof(messages), 'null');
    end if;
    perform memory_internal._check_identifier('session_id', session_id);
    perform memory_internal._check_identifier('agent_id', agent_id);
    perform memory_internal._check_identifier('source', source);
    perform memory_internal._check_identifier('model', model);
    perform memory_internal._check_run(run_id);
    if tokens_in < 0 or tokens_out < 0 then
        raise exception 'agent_memory: commit''s tokens_in and tokens_out must not be negative'
            using errcode = 'invalid_parameter_value';
    end if;
end
$$;

comment on function memory_internal._check_commit(text, json, text, text, text, bigint, bigint, jsonb, text, text) is
'Internal: refuses commit''s arguments that make no session (no session or agent, a bad enrich mode, metadata '
'not an object, messages not an array, an identifier too long, a blank run, negative tokens), naming the problem.';

-- A run given by a caller: null (none), or a name of 1 to 1,000 characters that is not blank.
create or replace function memory_internal._check_run(run_id text) returns void
language plpgsql
immutable
as $$
begin
    if btrim(run_id) = '' then
        raise exception 'agent_memory: run_id cannot be blank' using errcode = 'invalid_parameter_value';
    end if;
    perform memory_internal._check_identifier('run_id', run_id);
end
$$;

comment on function memory_internal._check_run(text) is
'Internal: refuses a blank run_id, or one over 1,000 characters.';

create or replace function memory.commit(
    session_id text,
    messages json,
    agent_id text default 'default',
    source text default null,
    started_at timestamptz default null,
    model text default null,
    tokens_in bigint default null,
    tokens_out bigint default null,
    metadata jsonb default '{}',
    enrich text default null,
    allow_forgotten boolean default false,
    run_id text default null
) returns table (
    created boolean, turns_added integer, job_id bigint, turns_indexed_in_part integer
)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    -- Every setting in one read: seven reads of one each cost twice as much.
    v_settings jsonb := memory_internal._settings_json();
    v_max_chars integer := (v_settings -> 'max_message_chars')::integer;
    v_dimensions integer := (v_settings -> 'client_dimensions')::integer;
    v_enrich text := coalesce(commit.enrich, v_settings ->> 'enrich');
    v_index_roles jsonb := v_settings -> 'index_roles';
    v_index_chars bigint := (v_settings -> 'index_max_chunks')::bigint * (v_settings -> 'chunk_chars')::bigint;
    v_partial integer;
    v_session bigint;
    v_created boolean;
    v_added integer;
    v_job bigint;
    v_messages jsonb;
    v_forgotten record;
    v_run text;
    -- Values, not expressions, in the session's row: Citus takes no subquery in an insert's values and no
    -- function that is not immutable in its on conflict clause.
    v_now timestamptz := pg_catalog.now();
    v_started timestamptz;
begin
    perform memory_internal._check_commit(commit.session_id, commit.messages, commit.agent_id, commit.source,
                                          commit.model, commit.tokens_in, commit.tokens_out, commit.metadata, v_enrich,
                                          commit.run_id);
    v_messages := memory_internal._checked_messages(commit.messages, v_max_chars, v_dimensions);
    v_started := coalesce(
        commit.started_at,
        (select min((m.message ->> 'created_at')::timestamptz) from jsonb_array_elements(v_messages) as m (message)),
        v_now
    );

    insert into memory.sessions as s (tenant_id, agent_id, session_id, source, model, started_at,
                                      tokens_in, tokens_out, metadata, run_id)
    values (
        v_tenant, commit.agent_id, commit.session_id, commit.source, commit.model, v_started,
        commit.tokens_in, commit.tokens_out, commit.metadata, commit.run_id
    )
    on conflict (tenant_id, agent_id, session_id) do update
    set source = coalesce(excluded.source, s.source),
        model = coalesce(excluded.model, s.model),
        started_at = case when commit.started_at is null then s.started_at else excluded.started_at end,
        tokens_in = coalesce(excluded.tokens_in, s.tokens_in),
        tokens_out = coalesce(excluded.tokens_out, s.tokens_out),
        metadata = s.metadata || excluded.metadata,
        run_id = coalesce(s.run_id, excluded.run_id),
        updated_at = v_now,
        -- A session written to is in use again.
        tier = 'hot',
        tier_since = case when s.tier = 'hot' then s.tier_since else v_now end
    returning s.session_key, (s.xmax = 0), s.run_id into v_session, v_created, v_run;
    if v_run <> commit.run_id then
        raise exception 'agent_memory: session % of agent % belongs to run %, not %', commit.session_id,
            commit.agent_id, v_run, commit.run_id using errcode = 'invalid_parameter_value';
    end if;

    -- A session memory.forget removed comes back only when the caller says so. Checked once the session
    -- row is ours: a commit that waited for a forget of the same session sees its tombstone.
    if v_created then
        select * into v_forgotten from memory_internal._forgotten(commit.agent_id, commit.session_id, commit.allow_forgotten);
        if v_forgotten.tombstone_id is not null and not coalesce(commit.allow_forgotten, false) then
            raise exception 'agent_memory: session % of agent % was forgotten on % (tombstone %)', commit.session_id,
                commit.agent_id, v_forgotten.forgotten_at, v_forgotten.tombstone_id
                using errcode = 'object_not_in_prerequisite_state',
                      hint = 'commit it with allow_forgotten => true to store it again';
        end if;
    end if;

    select a.added, a.partial into v_added, v_partial
    from memory_internal._add_turns(v_tenant, v_session, commit.agent_id, v_messages, v_index_roles, v_index_chars) as a;

    if v_added > 0 and v_enrich = 'queue' then
        insert into memory.jobs (tenant_id, kind, session_key)
        values (v_tenant, 'enrich', v_session)
        on conflict (tenant_id, kind, session_key) where status = 'queued' do nothing
        returning jobs.job_id into v_job;
        if v_job is null then
            select j.job_id into v_job from memory.jobs as j
            where j.tenant_id = v_tenant and j.kind = 'enrich' and j.session_key = v_session and j.status = 'queued';
        end if;
    elsif v_added > 0 and v_enrich = 'now' then
        perform memory_internal._enrich_session(v_tenant, v_session, new_turns_only => true);
    end if;

    perform memory_internal._count(v_tenant, array['commits', 'turns_committed'], array['', ''], array[1, v_added]);
    perform memory_internal._notify_commit(v_tenant, commit.session_id, commit.agent_id, v_added, v_settings);
    return query select v_created, v_added, v_job, v_partial;
end
$$;

comment on function memory.commit(text, json, text, text, timestamptz, text, bigint, bigint, jsonb, text, boolean, text)
is
'Stores a session''s messages (a JSON array of {role, content, id?, created_at?, name?, tool_calls?, '
'tool_call_id?, tokens?, metadata?, embedding? (client embedder); a tool result also status? (success, error, '
'timeout) and duration_ms?, kept in its metadata as tool_status and duration_ms}) under this tenant and '
'agent_id. '
'Idempotent: only new turns are added. '
'enrich: queue (default, a job for memory.work), now, or none. Returns whether the '
'session is new, how many turns were added, the queued job, and how many added turns are longer than '
'indexing reads (index_max_chunks x chunk_chars characters: stored whole, indexed in part). '
'A session memory.forget removed is refused unless allow_forgotten. run_id: the run (one task or process of '
'the agent) the session belongs to, set once. New turns are announced on '
'memory.notification_channel() when the transaction commits. '
'Pass jsonb as messages::json.';

-- A JSON object without its keys whose value is null; nulls within the values are the caller's and stay
-- (jsonb_strip_nulls would remove those too).
create or replace function memory_internal._without_nulls(object jsonb) returns jsonb
language sql
immutable parallel safe
as $$
    select coalesce(jsonb_object_agg(e.key, e.value), '{}') from jsonb_each(object) as e where e.value <> 'null'
$$;

comment on function memory_internal._without_nulls(jsonb) is
'Internal: a JSON object without its top-level keys whose value is null (nested nulls are kept).';

-- A stored turn as the message commit took (keys that are null left out): what export and pop_turn give
-- back, so committing it again stores the same turn.
create or replace function memory_internal._message_json(t memory.turns) returns jsonb
language sql
stable
as $$
    select memory_internal._without_nulls(jsonb_build_object(
        'id', t.message_id, 'role', t.role, 'name', t.speaker, 'content', t.content,
        'tool_calls', t.tool_calls, 'tool_call_id', t.tool_call_id, 'tokens', t.tokens,
        'metadata', nullif(t.metadata, '{}'), 'created_at', t.created_at
    ))
$$;

comment on function memory_internal._message_json(memory.turns) is
'Internal: a turn as the message memory.commit takes (null keys left out), as export and pop_turn give it.';
