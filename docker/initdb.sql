-- Runs once, when the container initializes an empty data directory.
create extension if not exists agent_memory cascade;
select * from memory.health();
-- Maintenance every ten minutes (docs/operations.md); pg_cron lives in database postgres, the image's default.
create extension if not exists pg_cron;
select cron.schedule('agent-memory-maintain', '*/10 * * * *', 'call memory.maintain()');
