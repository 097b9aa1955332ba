-- Runs once, when the container initializes an empty data directory.
create extension if not exists agent_memory cascade;
select * from memory.health();
-- Maintenance every ten minutes (docs/operations.md). pg_cron lives in database postgres (cron.database_name):
-- scheduled here only when that is the image's database (POSTGRES_DB unset); otherwise see operations.md.
select current_database() = 'postgres' as in_cron_database \gset
\if :in_cron_database
create extension if not exists pg_cron;
select cron.schedule('agent-memory-maintain', '*/10 * * * *', 'call memory.maintain()');
\endif
