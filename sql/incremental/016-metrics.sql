-- Metrics (0.3.0): what recall, commit, feedback and enrichment did, counted per tenant. Each backend adds
-- to rows of its own (backend: its process id), so counting never waits for another session; maintenance
-- folds the rows of backends that have ended into backend 0. Read memory.metrics.
create table memory.metric_counts (
    tenant_id text not null,
    metric text not null,
    label text not null default '',
    backend integer not null,
    value double precision not null default 0,
    primary key (tenant_id, metric, label, backend)
);
select pg_catalog.pg_extension_config_dump('memory.metric_counts', '');
