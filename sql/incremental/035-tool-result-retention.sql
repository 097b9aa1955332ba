-- Retention by kind (0.4.0): a policy of data tool_results clears what tool results said sooner than the
-- conversation around them goes. memory.retention_preview names the turn, so its row type changes.
alter table memory.retention_policies drop constraint retention_policies_data_check;
alter table memory.retention_policies
add constraint retention_policies_data_check check (data in ('sessions', 'memories', 'tool_results'));
drop function if exists memory.retention_preview(timestamptz);
