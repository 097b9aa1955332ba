-- Feedback on recalled turns: every helpful / unhelpful verdict, with the trust it moved (audit trail).
create table memory.feedback (
    tenant_id text not null,
    feedback_id bigint generated always as identity,
    turn_key bigint not null,
    helpful boolean not null,
    query text,
    note text,
    trust_before real not null,
    trust_after real not null,
    given_by text not null default current_user,
    created_at timestamptz not null default pg_catalog.now(),
    primary key (tenant_id, feedback_id),
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade
);

create index feedback_turn on memory.feedback (tenant_id, turn_key);

select pg_catalog.pg_extension_config_dump('memory.feedback', '');
