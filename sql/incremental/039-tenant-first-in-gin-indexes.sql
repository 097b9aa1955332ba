-- The tenant first in every GIN index (0.4.0, with btree_gin). An index of every tenant's words, aliases,
-- subjects or tags answers a match with every tenant's rows, which the tenant's filter then throws away: a
-- small tenant's full-text list read the postings of two million chunks beside a thousand other tenants (23
-- ms of its recall, against 1.8 ms alone). Led by tenant_id, the index's scan intersects the word's postings
-- with the tenant's and skips the rest.
drop index memory.chunks_tsv;
drop index memory.chunks_tsv_cold;
drop index memory.summaries_tsv;
drop index memory.entities_aliases;
drop index memory.entities_trigrams;
drop index memory.memories_by_subject;
drop index memory.memories_by_tag;
create index chunks_tsv on memory.chunks using gin (tenant_id, tsv) where not cold;
create index chunks_tsv_cold on memory.chunks using gin (tenant_id, tsv) where cold;
create index summaries_tsv on memory.summaries using gin (tenant_id, tsv);
create index entities_aliases on memory.entities using gin (tenant_id, aliases);
create index entities_trigrams on memory.entities using gin (tenant_id, trigrams);
create index memories_by_subject on memory.memories using gin (tenant_id, subjects);
create index memories_by_tag on memory.memories using gin (tenant_id, tags);
