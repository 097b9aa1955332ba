-- Metrics: counters of what recall, commit, feedback and enrichment did (memory.metric_counts), and
-- gauges read from the tables when asked (the queue, the index, the tiers), per tenant, in the view
-- memory.metrics. docs/prometheus-queries.yaml has postgres_exporter read it for Prometheus.

-- Every metric: its kind, the name of its one label (if any) and what it counts.
create or replace function memory.metric_definitions()
returns table (metric text, kind text, label_name text, help text)
language sql
immutable
as $$
    values
        ('recalls', 'counter', null, 'Recalls answered (memory.recall; not counted in a read-only transaction).'),
        ('recalls_degraded', 'counter', null,
         'Recalls that had to do without something (vectors, the query embedding): components.degraded.'),
        ('recall_duration_seconds_bucket', 'counter', 'le',
         'Recalls that took at most le seconds (cumulative histogram buckets).'),
        ('recall_duration_seconds_sum', 'counter', null, 'Seconds spent in recall, in all.'),
        ('commits', 'counter', null, 'Calls of memory.commit.'),
        ('turns_committed', 'counter', null, 'Turns commit added.'),
        ('turns_indexed', 'counter', null, 'Turns enrichment indexed (again when a session is re-enriched).'),
        ('feedback', 'counter', 'verdict', 'Verdicts given (memory.feedback), by verdict.'),
        ('queue_jobs', 'gauge', 'status', 'Enrichment jobs by status: queued, running, done (kept a while), dead.'),
        ('queue_oldest_queued_seconds', 'gauge', null, 'Age of the oldest queued enrichment job.'),
        ('chunks_indexed', 'gauge', null, 'Chunks in the full-text index.'),
        ('sessions', 'gauge', 'tier', 'Sessions by tier.'),
        ('memories', 'gauge', 'tier', 'Curated memories by tier.')
$$;

comment on function memory.metric_definitions() is
'Every metric of memory.metrics: counter or gauge, the name of its one label (le, verdict, status, tier) '
'and what it counts.';

-- The upper bounds of recall's latency histogram, in seconds.
create or replace function memory.recall_duration_buckets() returns double precision[]
language sql
immutable parallel safe
as $$ select '{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, Infinity}'::double precision[] $$;

comment on function memory.recall_duration_buckets() is
'The upper bounds (seconds) of recall''s latency histogram buckets.';

-- Adds to counters of a tenant, in rows of this backend. One statement, which names the parameters by position
-- ($1 the tenant, $2 the metrics, $3 their labels, $4 the amounts): on Citus it runs prepared on the tenant's
-- shard (memory_internal._adapt_to_citus), where Citus would run the select first and send its rows on.
create or replace function memory_internal._add_counts(
    tenant text, metrics text[], labels text[], amounts double precision[]
) returns void
language plpgsql
as $$
begin
    insert into memory.metric_counts as c (tenant_id, metric, label, backend, value)
    select $1, m.metric, m.label, pg_catalog.pg_backend_pid(), m.amount
    from unnest($2, $3, $4) as m (metric, label, amount)
    where m.amount <> 0
    on conflict (tenant_id, metric, label, backend) do update set value = c.value + excluded.value;
end
$$;

comment on function memory_internal._add_counts(text, text[], text[], double precision[]) is
'Internal: adds amounts to a tenant''s counters (memory.metric_counts, this backend''s rows).';

-- Adds to counters of a tenant, in rows of this backend; nothing in a read-only transaction (a standby).
create or replace function memory_internal._count(
    tenant text, metrics text[], labels text[], amounts double precision[]
) returns void
language plpgsql
as $$
begin
    if pg_catalog.current_setting('transaction_read_only') = 'off' then
        perform memory_internal._add_counts(tenant, metrics, labels, amounts);
    end if;
end
$$;

comment on function memory_internal._count(text, text[], text[], double precision[]) is
'Internal: adds amounts to a tenant''s counters (memory.metric_counts, this backend''s rows); nothing in a '
'read-only transaction.';

-- One recall counted: the recall, its latency bucket and time, and whether it was degraded.
create or replace function memory_internal._count_recall(tenant text, seconds double precision, degraded boolean)
returns void
language sql
as $$
    select memory_internal._count(
        tenant,
        array['recalls', 'recall_duration_seconds_sum', 'recall_duration_seconds_bucket', 'recalls_degraded'],
        array['', '', (
            select case when b.bound = 'Infinity' then '+Inf' else b.bound::text end
            from unnest(memory.recall_duration_buckets()) as b (bound)
            where b.bound >= seconds
            order by b.bound
            limit 1
        ), ''],
        array[1, seconds, 1, case when degraded then 1 else 0 end]
    )
$$;

comment on function memory_internal._count_recall(text, double precision, boolean) is
'Internal: counts one recall, its latency (histogram bucket and sum) and whether it was degraded.';

create or replace view memory.metrics as
with counted as (
    select
        c.tenant_id,
        c.metric,
        c.label,
        sum(c.value) as value
    from memory.metric_counts as c
    where
        c.tenant_id = (select memory.current_tenant())
        or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
    group by c.tenant_id, c.metric, c.label
)

select
    c.tenant_id,
    c.metric,
    c.label,
    c.value,
    'counter' as kind
from counted as c
where c.metric <> 'recall_duration_seconds_bucket'
union all
-- Buckets are counted one each; Prometheus wants each to hold those below it too, every bound present.
select
    r.tenant_id,
    'recall_duration_seconds_bucket' as metric,
    case when b.bound = 'Infinity' then '+Inf' else b.bound::text end as label,
    coalesce((
        select sum(c.value) from counted as c
        where
            c.tenant_id = r.tenant_id and c.metric = 'recall_duration_seconds_bucket'
            and replace(c.label, '+Inf', 'Infinity')::double precision <= b.bound
    ), 0) as value,
    'counter' as kind
from counted as r
cross join unnest(memory.recall_duration_buckets()) as b (bound)
where r.metric = 'recalls'
union all
select
    j.tenant_id,
    'queue_jobs' as metric,
    j.status as label,
    count(*) as value,
    'gauge' as kind
from memory.jobs as j
where
    j.tenant_id = (select memory.current_tenant())
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
group by j.tenant_id, j.status
union all
select
    j.tenant_id,
    'queue_oldest_queued_seconds' as metric,
    '' as label,
    extract(epoch from pg_catalog.now() - min(j.created_at)) as value,
    'gauge' as kind
from memory.jobs as j
where
    j.status = 'queued'
    and (
        j.tenant_id = (select memory.current_tenant())
        or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
    )
group by j.tenant_id
union all
select
    k.tenant_id,
    'chunks_indexed' as metric,
    '' as label,
    sum(k.chunks) as value,
    'gauge' as kind
from memory.corpus as k
where
    k.tenant_id = (select memory.current_tenant())
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
group by k.tenant_id
union all
select
    s.tenant_id,
    'sessions' as metric,
    s.tier as label,
    count(*) as value,
    'gauge' as kind
from memory.sessions as s
where
    s.tenant_id = (select memory.current_tenant())
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
group by s.tenant_id, s.tier
union all
select
    m.tenant_id,
    'memories' as metric,
    m.tier as label,
    count(*) as value,
    'gauge' as kind
from memory.memories as m
where
    m.tenant_id = (select memory.current_tenant())
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
group by m.tenant_id, m.tier;

-- Maintenance: the counters of backends that have ended move to backend 0, so rows do not pile up; those of the
-- tables here (on a Citus worker, its shards, whose counters its own backends wrote).
create or replace function memory_internal._fold_metric_counts() returns bigint
language sql
as $$
    select memory_internal._count_on_tables_here('memory.metric_counts', $sql$
        with ended as (
            delete from %1$s as c
            where c.backend <> 0 and not exists (select from pg_catalog.pg_stat_activity as a where a.pid = c.backend)
            returning c.tenant_id, c.metric, c.label, c.value
        ),
        folded as (
            insert into %1$s as c (tenant_id, metric, label, backend, value)
            select e.tenant_id, e.metric, e.label, 0, sum(e.value) from ended as e
            group by e.tenant_id, e.metric, e.label
            on conflict (tenant_id, metric, label, backend) do update set value = c.value + excluded.value
        )

        select count(*) from ended
    $sql$)
$$;

comment on function memory_internal._fold_metric_counts() is
'Internal: moves the counters of ended backends into backend 0; how many rows it folded.';
