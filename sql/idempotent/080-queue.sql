-- The enrichment queue: memory.work() claims jobs with FOR UPDATE SKIP LOCKED and a lease, commits
-- the claim, runs each job in its own transaction, retries failures with backoff, dead-letters a job
-- after queue_max_attempts. A job whose worker died is reclaimed once its lease has run out.

create or replace function memory_internal._claim_jobs(max_jobs integer, worker text) returns setof memory.jobs
language plpgsql
as $$
declare
    v_max_attempts integer := (memory.setting('queue_max_attempts'))::integer;
    v_lease interval := make_interval(secs => (memory.setting('queue_lease_seconds'))::numeric);
begin
    -- A job whose lease ran out after its last attempt is dead: its worker kept dying on it.
    -- (A job whose worker is still at it is locked by that worker and skipped, whatever its lease says.)
    update memory.jobs as j
    set status = 'dead', leased_until = null, finished_at = pg_catalog.now(),
        last_error = coalesce(j.last_error || '; ', '')
            || format('worker %s lost its lease on attempt %s', j.leased_by, j.attempts)
    where j.job_id in (
        select c.job_id from memory.jobs as c
        where c.status = 'running' and c.leased_until < pg_catalog.now() and c.attempts >= v_max_attempts
        for update skip locked
    );

    return query
    update memory.jobs as j
    set status = 'running', attempts = j.attempts + 1, leased_until = pg_catalog.now() + v_lease,
        leased_by = worker
    where j.job_id in (
        select c.job_id from memory.jobs as c
        where c.status = 'queued' and c.run_after <= pg_catalog.now()
            or c.status = 'running' and c.leased_until < pg_catalog.now()
        order by c.run_after, c.job_id
        limit max_jobs
        for update skip locked
    )
    returning j.*;
end
$$;

comment on function memory_internal._claim_jobs(integer, text) is
'Internal: leases up to max_jobs runnable jobs (queued, or running with an expired lease) to a worker.';

-- Runs one claimed job; true when the job has more to do (an embed job with chunks left).
create or replace function memory_internal._run_job(job memory.jobs) returns boolean
language plpgsql
as $$
begin
    if job.kind = 'enrich' then
        perform memory_internal._enrich_session(job.tenant_id, job.session_key);
        return false;
    end if;
    return memory.reembed(500) = 500;
end
$$;

comment on function memory_internal._run_job(memory.jobs) is 'Internal: does the work of one job.';

create or replace procedure memory.work(
    max_jobs integer default 10, inout processed integer default 0, inout failed integer default 0
)
language plpgsql
as $$
declare
    v_worker text := pg_catalog.format('pid %s', pg_catalog.pg_backend_pid());
    v_job memory.jobs;
    v_jobs memory.jobs [];
    v_index integer;
    v_ahead bigint [] := '{}';
    v_ahead_jobs bigint [];
    v_more boolean;
    v_error text;
    v_max_attempts integer := (memory.setting('queue_max_attempts'))::integer;
    v_backoff numeric := (memory.setting('queue_backoff_seconds'))::numeric;
begin
    processed := 0;
    failed := 0;
    select pg_catalog.array_agg(c) into v_jobs from memory_internal._claim_jobs(max_jobs, v_worker) as c;
    commit;
    for v_index in 1 .. coalesce(cardinality(v_jobs), 0) loop
        v_job := v_jobs[v_index];
        -- The chunks of this job's session and of the next enrich jobs of its tenant (ten sessions at
        -- most) go through the model in one call, kept for those jobs: batches sorted across sessions
        -- waste less than a session's own. Their job rows are held meanwhile (after their sessions' keys,
        -- the lock order below), so no worker takes them when their lease runs out during the call. If
        -- that call fails, each job embeds what it needs itself and a failure is its own, with its error.
        if v_job.kind = 'enrich' and not v_job.session_key = any(v_ahead) then
            select pg_catalog.array_agg(a.session_key order by a.ordinality),
                   pg_catalog.array_agg(a.job_id order by a.ordinality)
            into v_ahead, v_ahead_jobs
            from (
                select j.session_key, j.job_id, j.ordinality
                from unnest(v_jobs[v_index:]) with ordinality as j
                where j.kind = 'enrich' and j.tenant_id = v_job.tenant_id
                order by j.ordinality
                limit 10
            ) as a;
            begin
                perform from memory.sessions as s where s.session_key = any(v_ahead) order by s.session_key
                for key share;
                perform from memory.jobs as j where j.job_id = any(v_ahead_jobs) order by j.job_id for update;
                perform pg_catalog.set_config('memory.tenant_id', v_job.tenant_id, true);
                perform memory_internal._embed_sessions_ahead(v_job.tenant_id, v_ahead);
            exception when others then
                null;  -- the jobs embed for themselves (see above)
            end;
            commit;
        end if;
        -- Enrichment is derived data and a job whose completion was lost in a crash simply runs again,
        -- so its transaction need not wait for the WAL flush.
        perform pg_catalog.set_config('synchronous_commit', 'off', true);
        -- The job's tenant is the tenant of what it writes through the API (memories it extracts).
        perform pg_catalog.set_config('memory.tenant_id', v_job.tenant_id, true);
        -- One lock order for commit, forget and workers: the session row, then the rows of the session.
        -- A worker shares its session's key (commits go on; forget waits for the job), then holds its job
        -- row while it works, so a worker that finds the lease run out skips the job instead of running
        -- it a second time. A job whose session was forgotten meanwhile is gone, and one another worker
        -- took once its lease had run out (between two transactions of this one) is that worker's:
        -- nothing to do.
        perform from memory.sessions as s where s.session_key = v_job.session_key for key share;
        perform from memory.jobs as j
        where j.job_id = v_job.job_id and j.leased_by = v_worker and j.status = 'running'
        for update;
        if not found then
            commit;
            continue;
        end if;
        begin
            v_more := memory_internal._run_job(v_job);
            update memory.jobs as j
            set status = case when v_more then 'queued' else 'done' end,
                attempts = case when v_more then 0 else j.attempts end,
                leased_until = null, last_error = null,
                finished_at = case when v_more then null else pg_catalog.now() end
            where j.job_id = v_job.job_id;
            processed := processed + 1;
        exception when others then
            get stacked diagnostics v_error = message_text;
            update memory.jobs as j
            set status = case when j.attempts >= v_max_attempts then 'dead' else 'queued' end,
                run_after = pg_catalog.now()
                    + pg_catalog.make_interval(secs => v_backoff * pg_catalog.power(2, j.attempts - 1)),
                leased_until = null, last_error = v_error,
                finished_at = case when j.attempts >= v_max_attempts then pg_catalog.now() end
            where j.job_id = v_job.job_id;
            failed := failed + 1;
        end;
        commit;
    end loop;
end
$$;

comment on procedure memory.work (integer, integer, integer) is
'Runs up to max_jobs queued enrichment jobs, each in its own transaction: call memory.work(100); '
'outside a transaction block. Returns how many were done and how many failed (retried with backoff, '
'dead after queue_max_attempts). Schedule it with pg_cron or run `agent-memory worker`.';

create or replace view memory.queue_status as
select
    j.kind,
    pg_catalog.count(*) filter (where j.status = 'queued') as queued,
    pg_catalog.count(*) filter (where j.status = 'running') as running,
    pg_catalog.count(*) filter (where j.status = 'done') as done,
    pg_catalog.count(*) filter (where j.status = 'dead') as dead,
    pg_catalog.count(*) filter (where j.status = 'queued' and j.attempts > 0) as retrying,
    pg_catalog.now() - pg_catalog.min(j.created_at) filter (where j.status in ('queued', 'running'))
        as oldest_pending_age,
    (pg_catalog.array_agg(j.last_error order by j.job_id desc) filter (where j.last_error is not null))[1]
        as last_error
from memory.jobs as j
group by j.kind;

comment on view memory.queue_status is
'The enrichment queue per job kind: queued, running, done, dead (dead-lettered), retrying, the age of the '
'oldest pending job and the latest error.';
comment on table memory.jobs is
'Enrichment jobs (transactional outbox): commit enqueues, memory.work() runs them. Dead jobs keep their error.';
comment on column memory.jobs.job_id is 'The job.';
comment on column memory.jobs.tenant_id is 'The tenant whose data the job works on.';
comment on column memory.jobs.kind is 'enrich (one session) or embed (backfill vectors of a new embedding model).';
comment on column memory.jobs.session_key is 'The session an enrich job works on.';
comment on column memory.jobs.status is
'queued, running (leased to a worker), done, or dead (gave up; see last_error).';
comment on column memory.jobs.attempts is 'How many times a worker has claimed the job.';
comment on column memory.jobs.run_after is 'Not claimed before this time (backoff after a failure).';
comment on column memory.jobs.leased_until is 'A running job whose lease has passed this time may be reclaimed.';
comment on column memory.jobs.leased_by is 'The worker (backend pid) holding the lease.';
comment on column memory.jobs.last_error is 'The error of the latest failed attempt.';
comment on column memory.jobs.created_at is 'When the job was queued.';
comment on column memory.jobs.finished_at is 'When the job was done or dead-lettered.';
