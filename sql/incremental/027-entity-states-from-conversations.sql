-- Entity states read from conversations (0.4.0): enrichment proposes state changes users state ("Ana now
-- leads billing."), each with its evidence turn and how it was found, active or pending review by the
-- setting extracted_memory_status. A pending value does not end the current one until it is approved, so
-- at most one active value per attribute is current; a rejected one stays, so that it is not proposed again.
alter table memory.entity_states
add column status text not null default 'active' check (status in ('active', 'pending', 'rejected')),
add column origin text not null default 'caller' check (origin in ('caller', 'patterns', 'llm')),
add column evidence_turn_id bigint,
add foreign key (tenant_id, evidence_turn_id) references memory.turns (tenant_id, turn_id) on delete cascade;
drop index memory.entity_states_one_current;
create unique index entity_states_one_current on memory.entity_states (tenant_id, entity_id, attribute)
where valid_to is null and status = 'active';
create index entity_states_by_evidence on memory.entity_states (tenant_id, evidence_turn_id)
where evidence_turn_id is not null;
