-- Recall features a superuser adds. Each is checked by building recall's statement with it, so this file
-- comes after the statement's builder (095-recall-score.sql).

-- Adds a feature to recall (or changes one): after it, recall's statement computes it for every candidate
-- at its stage and every signal sees it as (c).<name>. Only a superuser may call it (it is granted to no role:
-- the expression runs as the owner in every tenant's recall), and it runs as the caller. The statement is
-- built at once with the feature: one that does not parse, or that calls a function or uses a type or
-- operator a role other than a superuser could change, is refused here, and nothing is written.
create or replace function memory.define_feature(
    name text, stage text, type regtype, expression text, describes text
) returns void
language plpgsql
as $$
declare
    v_problem text;
begin
    if define_feature.stage is null or define_feature.stage not in ('chunk', 'turn', 'memory') then
        raise exception 'agent_memory: feature "%": stage must be chunk, turn or memory, got %', define_feature.name,
            coalesce(define_feature.stage, 'null')
            using errcode = 'invalid_parameter_value',
                  hint = 'the fusion stage''s features are computed by recall''s pipeline itself';
    end if;
    if define_feature.expression is null or btrim(define_feature.expression) = '' then
        raise exception 'agent_memory: feature "%" needs an expression', define_feature.name
            using errcode = 'invalid_parameter_value';
    end if;
    if exists (select from memory.recall_features as f where f.name = define_feature.name and f.builtin) then
        raise exception 'agent_memory: feature "%" is built in', define_feature.name
            using errcode = 'invalid_parameter_value',
                  hint = 'define a feature of another name (every install defines the built-in ones again)';
    end if;
    perform memory_internal._define_feature(name, stage, type, expression, describes, builtin => false);
    begin
        v_problem := memory_internal._scoring_code_problem();
    exception when others then
        raise exception 'agent_memory: feature "%": recall''s statement does not work with its expression: %',
            define_feature.name, sqlerrm using errcode = 'invalid_parameter_value';
    end;
    if v_problem is not null then
        raise exception 'agent_memory: feature "%": %', define_feature.name, v_problem
            using errcode = 'insufficient_privilege',
                  hint = 'recall runs a feature''s expression as the extension''s owner: what it calls is a '
                         'superuser''s, in a schema only superusers may create in';
    end if;
end
$$;

comment on function memory.define_feature(text, text, regtype, text, text) is
'Adds (or changes) a recall feature, superusers only: its name (the attribute of memory.recall_candidate '
'signals read), stage (chunk: per candidate chunk, over c the chunk, t its turn, e and x the vectors of the '
'chunk and of its context, b its bm25, r the recall; turn: per candidate turn after fusion, over d its best '
'chunk''s features with the fusion stage''s, t, s its session, tm its memory, r; memory: like turn, a property '
'of the memory the turn carries), its type, its SQL expression and what it describes.';
