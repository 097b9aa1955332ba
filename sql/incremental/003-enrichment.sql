-- What enrichment writes: the text indexed for each turn (chunks, with full-text vectors), their
-- embeddings per model, session summaries and session embeddings per model.
create table memory.chunks (
    tenant_id text not null,
    turn_key bigint not null,
    chunk_no integer not null,
    session_key bigint not null,
    agent_id text not null,
    text text not null,
    text_sha256 bytea not null,
    tsv tsvector not null,
    length integer not null,
    primary key (tenant_id, turn_key, chunk_no),
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade
);

create index chunks_tsv on memory.chunks using gin (tsv);
create index chunks_session on memory.chunks (tenant_id, session_key);

-- Term statistics for BM25, per tenant and agent, kept current by triggers on memory.chunks.
create table memory.lexicon (
    tenant_id text not null,
    agent_id text not null,
    lexeme text not null,
    chunks integer not null,
    primary key (tenant_id, agent_id, lexeme)
);

create index lexicon_lexeme on memory.lexicon (tenant_id, lexeme);

create table memory.corpus (
    tenant_id text not null,
    agent_id text not null,
    chunks bigint not null,
    total_length bigint not null,
    primary key (tenant_id, agent_id)
);

-- Vectors of any dimension; each model gets its own partial HNSW index (memory._ensure_vector_index).
create table memory.chunk_embeddings (
    tenant_id text not null,
    turn_key bigint not null,
    chunk_no integer not null,
    model text not null,
    text_sha256 bytea not null,
    embedding vector not null,
    primary key (tenant_id, turn_key, chunk_no, model),
    foreign key (tenant_id, turn_key, chunk_no)
    references memory.chunks (tenant_id, turn_key, chunk_no) on delete cascade
);

create table memory.summaries (
    tenant_id text not null,
    session_key bigint not null,
    method text not null,
    summary text not null,
    decisions jsonb not null default '[]',
    open_loops jsonb not null default '[]',
    source_sha256 bytea,
    tsv tsvector not null,
    created_at timestamptz not null default pg_catalog.now(),
    primary key (tenant_id, session_key),
    foreign key (tenant_id, session_key) references memory.sessions (tenant_id, session_key) on delete cascade
);

create index summaries_tsv on memory.summaries using gin (tsv);

create table memory.session_embeddings (
    tenant_id text not null,
    session_key bigint not null,
    model text not null,
    text_sha256 bytea not null,
    embedding vector not null,
    primary key (tenant_id, session_key, model),
    foreign key (tenant_id, session_key) references memory.sessions (tenant_id, session_key) on delete cascade
);

-- Embedding models that have been used, and whether recall may use them yet.
create table memory.embedding_models (
    model text primary key,
    provider text not null,
    dimensions integer not null,
    state text not null default 'building' check (state in ('building', 'ready', 'retired')),
    created_at timestamptz not null default pg_catalog.now(),
    ready_at timestamptz
);

-- Secrets such as API keys: readable only by the extension's owner (PUBLIC has no grant).
create table memory._secrets (
    name text primary key,
    value text not null
);

revoke all on memory._secrets from public;

select pg_catalog.pg_extension_config_dump('memory.chunks', '');
select pg_catalog.pg_extension_config_dump('memory.lexicon', '');
select pg_catalog.pg_extension_config_dump('memory.corpus', '');
select pg_catalog.pg_extension_config_dump('memory.chunk_embeddings', '');
select pg_catalog.pg_extension_config_dump('memory.summaries', '');
select pg_catalog.pg_extension_config_dump('memory.session_embeddings', '');
select pg_catalog.pg_extension_config_dump('memory.embedding_models', '');
select pg_catalog.pg_extension_config_dump('memory._secrets', '');
