-- Cold summaries out of the index recall searches by default (0.4.0): a summary carries whether its session is
-- cold, as chunks and vectors do (037), and the full-text index of summaries is split on it. Without it, the
-- session list by summary of a recall that leaves cold out matched and ranked the summaries of every session and
-- looked up each one's tier (16 ms of a recall at a million turns, 45,000 of its 50,000 sessions cold).
alter table memory.summaries add column cold boolean not null default false;

drop index memory.summaries_tsv;

update memory.summaries as m set cold = true
from memory.sessions as s
where s.tier = 'cold' and m.tenant_id = s.tenant_id and m.session_key = s.session_key;

create index summaries_tsv on memory.summaries using gin (tenant_id, tsv) where not cold;
create index summaries_tsv_cold on memory.summaries using gin (tenant_id, tsv) where cold;
