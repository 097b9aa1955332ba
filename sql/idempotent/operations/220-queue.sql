-- The enrichment queue: memory.work() claims jobs with FOR UPDATE SKIP LOCKED and a lease, commits
-- the claim, runs each job in its own transaction, retries failures with backoff, dead-letters a job
-- after queue_max_attempts. A job whose worker died is reclaimed once its lease has run out.
--
-- On a Citus cluster memory.work() runs on each worker, for the tenants whose shards that node holds: it claims
-- from its own shards of memory.jobs (memory_internal._tables_here), and every statement after names the job's
-- tenant, whose rows are all on the node. A node that restarts loses no job: a job and the mark that it is done
-- commit together, and a job whose claim outlived its worker is claimed again once its lease runs out.
--
-- The worker serves every tenant, so no tenant may stall it: memory.work() is memory_admin's, and its
-- steps run as the owner (memory.work itself commits between jobs, which a security definer procedure
-- cannot, so it runs as its caller and calls the three steps granted to memory_admin). A job whose
-- session another transaction holds is put back for later instead of waited for, and a job waits at most
-- five seconds for any other lock (then it is put back too, the attempt not counted).

create or replace function memory_internal._claim_jobs(max_jobs integer, worker text) returns setof memory.jobs
language plpgsql
security definer
as $$
declare
    v_max_attempts integer := (memory.setting('queue_max_attempts'))::integer;
    v_lease interval := make_interval(secs => (memory.setting('queue_lease_seconds'))::numeric);
    v_left integer := max_jobs;
    v_claimed integer;
    v_table record;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: the queue worker is for memory_admin (it serves every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    if memory_internal._citus_group() = 0 and not exists (select from memory_internal._tables_here('memory.jobs')) then
        raise exception 'agent_memory: the coordinator holds no jobs: on a Citus cluster memory.work runs on each worker'
            using errcode = 'feature_not_supported',
                  hint = 'Run it (or agent-memory work) connected to each worker: it serves the tenants there.';
    end if;
    -- The tables here that hold jobs (one node: memory.jobs; a Citus worker: its shards of it, each held as
    -- Citus's writes hold it, in an order of their own each time, so that no shard's backlog keeps the others'
    -- jobs waiting).
    for v_table in select t.name, t.shard from memory_internal._tables_here('memory.jobs') as t order by random() loop
        continue when v_table.shard is not null and not memory_internal._hold_shards_here(array[v_table.shard]);
        -- A job whose lease ran out after its last attempt is dead: its worker kept dying on it.
        -- (A job whose worker is still at it is locked by that worker and skipped, whatever its lease says.)
        execute format($sql$
            update %1$s as j
            set status = 'dead', leased_until = null, finished_at = pg_catalog.now(),
                last_error = coalesce(j.last_error || '; ', '')
                    || format('worker %%s lost its lease on attempt %%s', j.leased_by, j.attempts)
            where j.job_id in (
                select c.job_id from %1$s as c
                where c.status = 'running' and c.leased_until < pg_catalog.now() and c.attempts >= $1
                for update skip locked
            )
        $sql$, v_table.name) using v_max_attempts;
        return query execute format($sql$
            update %1$s as j
            set status = 'running', attempts = j.attempts + 1, leased_until = pg_catalog.now() + $2,
                leased_by = $3
            where j.job_id in (
                select c.job_id from %1$s as c
                where c.status = 'queued' and c.run_after <= pg_catalog.now()
                    or c.status = 'running' and c.leased_until < pg_catalog.now()
                order by c.run_after, c.job_id
                limit $1
                for update skip locked
            )
            returning j.*
        $sql$, v_table.name) using v_left, v_lease, worker;
        get diagnostics v_claimed = row_count;
        v_left := v_left - v_claimed;
        exit when v_left <= 0;
    end loop;
end
$$;

comment on function memory_internal._claim_jobs(integer, text) is
'Internal (memory.work, memory_admin): leases up to max_jobs runnable jobs (queued, or running with an '
'expired lease) of the tables here that hold jobs (on a Citus worker, its shards) to a worker.';

-- The chunks of the first job's session and of the next enrich jobs of its tenant (ten sessions at most)
-- go through the model in one call, kept in the backend for those jobs: batches sorted across sessions
-- waste less than a session's own. Their job rows are held meanwhile (after their sessions' keys, the
-- lock order below), so no worker takes them when their lease runs out during the call; a session or job
-- another transaction holds is left out, never waited for. If that call fails, each job embeds what it
-- needs itself and a failure is its own, with its error. Returns the sessions it considered (embedded ahead
-- or not). The jobs are read again by id: only those leased to this worker count.
drop function if exists memory_internal._embed_ahead(bigint[], text);
create or replace function memory_internal._embed_ahead(tenant text, job_ids bigint[], worker text) returns bigint[]
language plpgsql
security definer
set lock_timeout = '5s'
as $$
declare
    v_tenant text := tenant;
    v_ahead bigint [];
    v_held bigint [];
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: the queue worker is for memory_admin (it serves every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    select pg_catalog.array_agg(a.session_key order by a.ordinality) into v_ahead
    from (
        select j.session_key, i.ordinality
        from unnest(job_ids) with ordinality as i (job_id, ordinality)
        inner join memory.jobs as j on i.job_id = j.job_id
        where j.kind = 'enrich' and j.tenant_id = v_tenant and j.leased_by = worker
        order by i.ordinality
        limit 10
    ) as a;
    begin
        select pg_catalog.array_agg(h.session_key) into v_held
        from (
            select s.session_key from memory.sessions as s
            where s.tenant_id = v_tenant and s.session_key = any(v_ahead)
            order by s.session_key
            for key share skip locked
        ) as h;
        select pg_catalog.array_agg(h.session_key) into v_held
        from (
            select j.session_key from memory.jobs as j
            where j.tenant_id = v_tenant and j.job_id = any(job_ids) and j.leased_by = worker
                and j.session_key = any(v_held)
            order by j.job_id
            for update skip locked
        ) as h;
        perform pg_catalog.set_config('memory.tenant_id', v_tenant, true);
        perform memory_internal._embed_sessions_ahead(v_tenant, coalesce(v_held, '{}'));
    exception when others then
        null;  -- the jobs embed for themselves (see above)
    end;
    return coalesce(v_ahead, '{}');
end
$$;

comment on function memory_internal._embed_ahead(text, bigint[], text) is
'Internal (memory.work, memory_admin): embeds in one model call the chunks the next enrich jobs of a tenant '
'(of those given) will need, kept for them; the sessions it considered.';

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

-- Puts a claimed job, whose row the caller holds, back in the queue to run after run_after with its error
-- (null: none), its attempt counted or not; or, when a job of its session is queued already (a commit
-- queued one while this ran: one queued job per session), leaves the work, and the error, to that one and
-- removes this one.
create or replace function memory_internal._requeue(
    job memory.jobs, run_after timestamptz, error text, counted boolean
) returns void
language plpgsql
as $$
begin
    begin
        update memory.jobs as j
        set status = 'queued', attempts = case when counted then j.attempts else j.attempts - 1 end,
            leased_until = null, run_after = _requeue.run_after, last_error = coalesce(_requeue.error, j.last_error)
        where j.tenant_id = job.tenant_id and j.job_id = job.job_id;
    exception when unique_violation then
        update memory.jobs as q set last_error = coalesce(_requeue.error, q.last_error)
        where q.tenant_id = job.tenant_id and q.kind = job.kind and q.session_key = job.session_key
            and q.status = 'queued';
        delete from memory.jobs as j where j.tenant_id = job.tenant_id and j.job_id = job.job_id;
    end;
end
$$;

comment on function memory_internal._requeue(memory.jobs, timestamptz, text, boolean) is
'Internal: puts a claimed job back in the queue (its attempt counted or not), or leaves its work to a job of '
'its session queued meanwhile.';

-- One job claimed by this worker, in the worker's transaction: done; failed (retried with backoff, dead after
-- queue_max_attempts); busy (its session, its row or a lock it needs is held by another transaction: queued
-- again for queue_backoff_seconds, the attempt not counted, or left to its lease when even its row is held);
-- or skipped (forgotten meanwhile, or another worker's since its lease ran out). It waits at most five seconds
-- for a lock: the worker serves every tenant, and no tenant's open transaction may stall it.
drop function if exists memory_internal._work_on(bigint, text);
create or replace function memory_internal._work_on(tenant text, job_id bigint, worker text) returns text
language plpgsql
security definer
set lock_timeout = '5s'
as $$
declare
    v_job memory.jobs;
    v_more boolean;
    v_finished timestamptz;
    v_error text;
    v_state text;
    v_max_attempts integer := (memory.setting('queue_max_attempts'))::integer;
    v_backoff numeric := (memory.setting('queue_backoff_seconds'))::numeric;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: the queue worker is for memory_admin (it serves every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    select * into v_job from memory.jobs as j
    where j.tenant_id = _work_on.tenant and j.job_id = _work_on.job_id and j.leased_by = worker
        and j.status = 'running';
    if not found then
        return 'skipped';
    end if;
    -- Enrichment is derived data and a job whose completion was lost in a crash simply runs again,
    -- so its transaction need not wait for the WAL flush.
    perform pg_catalog.set_config('synchronous_commit', 'off', true);
    -- The job's tenant is the tenant of what it writes through the API (memories it extracts).
    perform pg_catalog.set_config('memory.tenant_id', v_job.tenant_id, true);
    -- One lock order for commit, forget and workers: the session row, then the rows of the session.
    -- A worker shares its session's key (commits go on; forget waits for the job), then holds its job
    -- row while it works, so a worker that finds the lease run out skips the job instead of running
    -- it a second time. A session or job row another transaction holds (a forget, feedback, a tenant's
    -- open transaction) is not waited for.
    if v_job.session_key is not null then
        perform from memory.sessions as s
        where s.tenant_id = v_job.tenant_id and s.session_key = v_job.session_key
        for key share skip locked;
        if not found then
            if not exists (
                select from memory.sessions as s
                where s.tenant_id = v_job.tenant_id and s.session_key = v_job.session_key
            ) then
                return 'skipped';
            end if;
            perform from memory.jobs as j
            where j.tenant_id = v_job.tenant_id and j.job_id = v_job.job_id
            for update skip locked;
            if found then
                perform memory_internal._requeue(
                    v_job, pg_catalog.now() + pg_catalog.make_interval(secs => v_backoff), null, false
                );
            end if;
            return 'busy';
        end if;
    end if;
    perform from memory.jobs as j
    where j.tenant_id = v_job.tenant_id and j.job_id = v_job.job_id and j.leased_by = worker
        and j.status = 'running'
    for update skip locked;
    if not found then
        return 'skipped';
    end if;
    begin
        v_more := memory_internal._run_job(v_job);
        -- (When it finished, a value: Citus takes no call of now() in a case of an update.)
        v_finished := case when not v_more then pg_catalog.now() end;
        update memory.jobs as j
        set status = case when v_more then 'queued' else 'done' end,
            attempts = case when v_more then 0 else j.attempts end,
            leased_until = null, last_error = null, finished_at = v_finished
        where j.tenant_id = v_job.tenant_id and j.job_id = v_job.job_id;
        return 'done';
    exception when others then
        get stacked diagnostics v_error = message_text, v_state = returned_sqlstate;
        if v_state = '55P03' then  -- lock_not_available: another transaction held what the job needs
            perform memory_internal._requeue(
                v_job, pg_catalog.now() + pg_catalog.make_interval(secs => v_backoff), v_error, false
            );
            return 'busy';
        elsif v_job.attempts >= v_max_attempts then
            update memory.jobs as j
            set status = 'dead', leased_until = null, last_error = v_error, finished_at = pg_catalog.now()
            where j.tenant_id = v_job.tenant_id and j.job_id = v_job.job_id;
        else
            perform memory_internal._requeue(
                v_job,
                pg_catalog.now()
                + pg_catalog.make_interval(secs => v_backoff * pg_catalog.power(2, v_job.attempts - 1)),
                v_error, true
            );
        end if;
        return 'failed';
    end;
end
$$;

comment on function memory_internal._work_on(text, bigint, text) is
'Internal (memory.work, memory_admin): runs one job claimed by this worker in the caller''s transaction; done, '
'failed, busy (held elsewhere: queued again, the attempt not counted) or skipped.';

create or replace procedure memory.work(
    max_jobs integer default 10, inout processed integer default 0, inout failed integer default 0
)
language plpgsql
as $$
declare
    v_worker text := pg_catalog.format('pid %s', pg_catalog.pg_backend_pid());
    v_jobs memory.jobs [];
    v_ahead bigint [] := '{}';
    v_outcome text;
begin
    processed := 0;
    failed := 0;
    v_jobs := array(select c from memory_internal._claim_jobs(max_jobs, v_worker) as c);
    commit;
    if pg_catalog.cardinality(v_jobs) > 0 then
        -- In a transaction of its own: an analyze holds its tables' statistics lock until it commits. One that
        -- fails leaves the jobs to run.
        begin
            perform memory_internal._analyze_grown_tenants(
                array(select distinct j.tenant_id from pg_catalog.unnest(v_jobs) as j)
            );
        exception when others then
            raise warning 'agent_memory: analyzing the tables of grown tenants failed: %', sqlerrm;
        end;
        commit;
    end if;
    for v_index in 1 .. pg_catalog.cardinality(v_jobs) loop
        if v_jobs[v_index].kind = 'enrich' and not v_jobs[v_index].session_key = any(v_ahead) then
            v_ahead := memory_internal._embed_ahead(
                v_jobs[v_index].tenant_id, array(select j.job_id from pg_catalog.unnest(v_jobs[v_index:]) as j),
                v_worker
            );
            commit;
        end if;
        v_outcome := memory_internal._work_on(v_jobs[v_index].tenant_id, v_jobs[v_index].job_id, v_worker);
        processed := processed + (v_outcome = 'done')::integer;
        failed := failed + (v_outcome = 'failed')::integer;
        commit;
    end loop;
end
$$;

comment on procedure memory.work (integer, integer, integer) is
'Runs up to max_jobs queued enrichment jobs of every tenant (memory_admin), each in its own transaction: '
'call memory.work(100); outside a transaction block. Returns how many were done and how many failed (retried '
'with backoff, dead after queue_max_attempts); a job whose session another transaction holds waits for a later '
'run. Schedule it with pg_cron or run `agent-memory work`. On a Citus cluster, run it on each worker: it works '
'the jobs of the tenants whose shards that node holds.';

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
