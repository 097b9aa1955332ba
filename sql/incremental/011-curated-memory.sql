-- Curated memory (0.3.0): what is true now, beside what was said. A memory is a typed claim of one
-- agent's (a fact, preference, rule, decision, skill, event, observation or task) with a status and the
-- period it holds; a newer version of the same key supersedes it and keeps the chain. Its words are a
-- turn of the agent's session 'remembered' (turn_key), so a memory is indexed, embedded and recalled as
-- turns are; evidence_turns are the turns it came from. origin says who proposed it: a caller
-- (remember) or enrichment's extractor (patterns or llm); status pending is a proposal awaiting review.
create table memory.memories (
    tenant_id text not null,
    memory_id bigint generated always as identity,
    agent_id text not null,
    kind text not null check (kind in (
        'fact', 'preference', 'rule', 'decision', 'skill', 'event', 'observation', 'task'
    )),
    content text not null check (btrim(content) <> ''),
    key text check (btrim(key) <> ''),
    subjects text[] not null default '{}',
    tags text[] not null default '{}',
    importance double precision not null default 0.5 check (importance between 0 and 1),
    confidence double precision not null default 1 check (confidence between 0 and 1),
    status text not null default 'active' check (
        status in ('active', 'ongoing', 'resolved', 'superseded', 'retracted', 'pending')
    ),
    origin text not null default 'remember' check (origin in ('remember', 'patterns', 'llm')),
    valid_from timestamptz not null default pg_catalog.now(),
    valid_to timestamptz check (valid_to >= valid_from),
    recorded_at timestamptz not null default pg_catalog.now(),
    recorded_by text not null default current_user,
    canonical bytea not null,
    turn_key bigint not null,
    evidence_turns bigint[] not null default '{}',
    supersedes bigint,
    primary key (tenant_id, memory_id),
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade,
    foreign key (tenant_id, supersedes) references memory.memories (tenant_id, memory_id) on delete set null (
        supersedes
    )
);
-- What holds now: at most one current memory per key of an agent, and one per claim under a key (or none).
create unique index memories_current_key on memory.memories (tenant_id, agent_id, key)
where key is not null and valid_to is null and status in ('active', 'ongoing');
create unique index memories_current_claim on memory.memories (tenant_id, agent_id, canonical, coalesce(key, ''))
where valid_to is null and status in ('active', 'ongoing');
create index memories_by_turn on memory.memories (tenant_id, turn_key);
create index memories_by_predecessor on memory.memories (tenant_id, supersedes);
create index memories_by_kind on memory.memories (tenant_id, agent_id, kind, status);
create index memories_by_subject on memory.memories using gin (subjects);
create index memories_by_tag on memory.memories using gin (tags);
create index memories_by_evidence on memory.memories using gin (evidence_turns);
select pg_catalog.pg_extension_config_dump('memory.memories', '');
select pg_catalog.pg_extension_config_dump('memory.memories_memory_id_seq', '');

-- Semantic dedup's log: each claim remembered that paraphrased a memory held (cosine at or above
-- memory_dedup_threshold, the same values), merged into it, or in shadow mode only recorded beside the
-- memory created instead.
create table memory.memory_merges (
    tenant_id text not null,
    merge_id bigint generated always as identity,
    memory_id bigint not null,
    agent_id text not null,
    kind text not null,
    content text not null,
    similarity double precision not null,
    merged boolean not null,
    created_memory_id bigint,
    recorded_at timestamptz not null default pg_catalog.now(),
    recorded_by text not null default current_user,
    primary key (tenant_id, merge_id),
    foreign key (tenant_id, memory_id) references memory.memories (tenant_id, memory_id) on delete cascade,
    foreign key (tenant_id, created_memory_id) references memory.memories (tenant_id, memory_id) on delete cascade,
    check (merged = (created_memory_id is null))
);
create index memory_merges_by_memory on memory.memory_merges (tenant_id, memory_id);
create index memory_merges_by_created on memory.memory_merges (tenant_id, created_memory_id);
select pg_catalog.pg_extension_config_dump('memory.memory_merges', '');
select pg_catalog.pg_extension_config_dump('memory.memory_merges_merge_id_seq', '');

-- remember returns the memory now (memory.memory_items' columns) with what remembering it did, and takes
-- its key, subjects, tags, importance and period.
create type memory.remembered as (
    memory_id bigint, agent_id text, kind text, content text, key text, subjects text [], tags text [],
    importance double precision, confidence double precision, status text, valid_from timestamptz,
    valid_to timestamptz,
    recorded_at timestamptz, recorded_by text, supersedes bigint, superseded_by bigint, turn_id bigint,
    evidence_turn_ids bigint [], origin text, outcome text
);
drop function if exists memory.remember(text, text, text, jsonb, text);
drop function if exists memory_internal._remember_turn(text, text, text, text, jsonb, text);

-- Recall answers with memories beside turns: a candidate knows the memory its words carry (kind,
-- importance, status) and whether its kind is what the question asks for; a query knows its intent.
alter type memory.recall_candidate add attribute memory_kind text;
alter type memory.recall_candidate add attribute memory_importance double precision;
alter type memory.recall_candidate add attribute memory_status text;
alter type memory.recall_candidate add attribute intended boolean;
alter type memory_internal._recall_query add attribute intent text;
alter type memory_internal._recall_query add attribute intent_kinds text[];
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector
);
drop function if exists memory.explain_recall(text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector);
drop function if exists memory_internal._recall_candidates(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector
);
drop function if exists memory_internal._candidate_chunks(
    text, text, timestamptz, timestamptz, text, jsonb, memory_internal._recall_query, vector, text
);
drop function if exists memory_internal._prepare_query(text, text, text, jsonb, text[], text);

-- Feedback on memories and whole sessions as well as turns, with four verdicts: helpful, unhelpful,
-- incorrect and stale. judged_by is the agent (or role) that gave it: its repeat of the verdict it last
-- gave is kept but not counted. effect says what the verdict did.
alter table memory.feedback alter column turn_key drop not null;
alter table memory.feedback alter column trust_before drop not null;
alter table memory.feedback alter column trust_after drop not null;
alter table memory.feedback add column verdict text;
update memory.feedback set verdict = case when helpful then 'helpful' else 'unhelpful' end;
alter table memory.feedback alter column verdict set not null;
alter table memory.feedback add constraint feedback_verdict_check check (
    verdict in ('helpful', 'unhelpful', 'incorrect', 'stale') and helpful = (verdict = 'helpful')
);
alter table memory.feedback add column memory_id bigint;
alter table memory.feedback add column session_key bigint;
alter table memory.feedback add column judged_by text;
update memory.feedback set judged_by = given_by;
alter table memory.feedback alter column judged_by set not null;
alter table memory.feedback add column counted boolean not null default true;
alter table memory.feedback add column effect text;
alter table memory.feedback add constraint feedback_memory_fkey foreign key (tenant_id, memory_id)
references memory.memories (tenant_id, memory_id) on delete cascade;
alter table memory.feedback add constraint feedback_session_fkey foreign key (tenant_id, session_key)
references memory.sessions (tenant_id, session_key) on delete cascade;
alter table memory.feedback add constraint feedback_one_target check (
    num_nonnulls(turn_key, memory_id, session_key) = 1
);
create index feedback_memory on memory.feedback (tenant_id, memory_id);
create index feedback_session on memory.feedback (tenant_id, session_key);
drop function if exists memory.feedback(bigint, boolean, text, text);
create type memory.feedback_given as (
    feedback_id bigint, trust_before real, trust_after real, verdict text, counted boolean, effect text
);
