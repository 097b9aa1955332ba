-- The registry of recall signals (memory.signals). A signal is a function of one candidate
-- (memory.recall_candidate) and the settings in force (jsonb), returning a number, plus one registry
-- row: its name, its stage, its default weight and what it measures. Its weight is the setting
-- weight_<name>. Fusion-stage signals score chunks and are fused (z-score weighted sum, or reciprocal
-- rank fusion); boost-stage signals add weight x value to a turn's fused score. Recall, explain_recall,
-- their components, the client's formatting and the docs all read this registry.

create or replace function memory_internal._signal_validate() returns trigger
language plpgsql
as $$
declare
    v_proc record;
begin
    -- The signature, every name schema-qualified whatever the search_path (an error if there is no such
    -- function).
    new.function := (pg_catalog.pg_identify_object('pg_catalog.pg_proc'::regclass, new.function::regprocedure, 0)).identity;
    select p.pronargs, p.proargtypes[0] as first, p.proargtypes[1] as second, p.prorettype, p.provolatile,
           p.proretset
    into v_proc
    from pg_catalog.pg_proc as p where p.oid = new.function::regprocedure;
    if v_proc.pronargs <> 2 or v_proc.first <> 'memory.recall_candidate'::regtype
        or v_proc.second <> 'jsonb'::regtype or v_proc.prorettype <> 'double precision'::regtype or v_proc.proretset then
        raise exception 'agent_memory: signal "%" needs a function (memory.recall_candidate, jsonb) returning '
            'double precision, got %', new.name, new.function using errcode = 'invalid_parameter_value';
    end if;
    if v_proc.provolatile = 'v' then
        raise exception 'agent_memory: signal "%": function % must be immutable or stable, not volatile',
            new.name, new.function using errcode = 'invalid_parameter_value';
    end if;
    return new;
end
$$;

comment on function memory_internal._signal_validate() is
'Internal: trigger that checks a signal''s function signature and volatility.';

drop trigger if exists signals_validate on memory.signals;
create trigger signals_validate before insert or update on memory.signals
for each row execute function memory_internal._signal_validate();

-- Adds a signal to recall, or changes one: the function and its registry row. Built-in signals are
-- defined the same way by the extension's own files.
create or replace function memory.define_signal(
    name text, stage text, function regprocedure, default_weight double precision, measures text
) returns void
language sql
as $$
    insert into memory.signals as s (name, stage, function, default_weight, measures)
    values (define_signal.name, define_signal.stage, define_signal.function::text, define_signal.default_weight,
            define_signal.measures)
    on conflict on constraint signals_pkey do update
    set stage = excluded.stage, function = excluded.function, default_weight = excluded.default_weight,
        measures = excluded.measures
$$;

comment on function memory.define_signal(text, text, regprocedure, double precision, text) is
'Adds (or changes) a recall signal: name, stage (fusion: a list score fused with the others; boost: '
'added as weight x value), its function (memory.recall_candidate, jsonb) -> double precision, its '
'default weight (the setting weight_<name>) and what it measures. Recall and explain use it at once.';

create or replace function memory_internal._define_builtin_signal(
    name text, stage text, function regprocedure, default_weight double precision, measures text
) returns void
language plpgsql
as $$
begin
    perform memory.define_signal(name, stage, function, default_weight, measures);
    update memory.signals as s set builtin = true where s.name = _define_builtin_signal.name;
    execute format('comment on function %s is %L', function, format('Recall signal %s (%s stage): %s', name, stage,
                                                                      measures));
end
$$;

comment on function memory_internal._define_builtin_signal(text, text, regprocedure, double precision, text) is
'Internal: defines one of the extension''s own signals (not dumped: every install defines them) and '
'comments its function with what it measures.';

-- The signals in pipeline order: fusion first, then boosts, each by name.
create or replace function memory.signal_definitions()
returns table (
    name text, stage text, weight_setting text, weight double precision, default_weight double precision,
    function regprocedure, measures text, builtin boolean
)
language sql
stable
as $$
    select s.name, s.stage, 'weight_' || s.name, (memory.setting('weight_' || s.name))::double precision,
           s.default_weight, to_regprocedure(s.function), s.measures, s.builtin
    from memory.signals as s
    order by s.stage = 'boost', s.name
$$;

comment on function memory.signal_definitions() is
'Every recall signal in pipeline order: name, stage (fusion or boost), its weight setting and the weight '
'in force, the default weight, its function and what it measures.';

comment on table memory.signals is
'The recall signals (read memory.signal_definitions()); add one with memory.define_signal().';
comment on column memory.signals.name is 'The signal''s name, as in recall''s components; its weight is weight_<name>.';
comment on column memory.signals.stage is
'fusion: a list score of chunks, fused with the others; boost: added to a turn''s fused score as weight x value.';
comment on column memory.signals.function is
'The function (memory.recall_candidate, jsonb settings) -> double precision that computes the value, as its '
'signature (regprocedure text; pg_upgrade refuses regprocedure columns).';
comment on column memory.signals.default_weight is 'The default of the setting weight_<name>.';
comment on column memory.signals.measures is 'What the signal measures.';
comment on column memory.signals.builtin is 'Defined by the extension (not dumped; every install defines it).';

comment on type memory.recall_candidate is
'What a signal function sees of a recall candidate: a chunk (fusion stage) or a turn with its best chunk '
'and fused score (boost stage); fields a stage does not know are null.';
