-- Runs once, when the container initializes an empty data directory.
create extension if not exists agent_memory cascade;
select * from memory.health();
