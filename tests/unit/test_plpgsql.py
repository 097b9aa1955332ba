"""agent_memory_db.plpgsql: a SQL function's body as PL/pgSQL (for Citus)."""

from __future__ import annotations

import pytest

from agent_memory_db.plpgsql import plpgsql_body, prepared_body, statements


def test_statements_split_at_semicolons_outside_quotes_and_comments():
    body = """
    -- a comment; not a statement
    update t set a = 'x;y', b = "odd;name" where c = $$;$$;
    /* a /* nested; */ comment */ delete from t where d = E'it\\'s;' and e = $tag$ $$; $tag$;
    select 1;  -- the end;
    """
    assert statements(body) == [
        """-- a comment; not a statement
    update t set a = 'x;y', b = "odd;name" where c = $$;$$""",
        """/* a /* nested; */ comment */ delete from t where d = E'it\\'s;' and e = $tag$ $$; $tag$""",
        "select 1",
    ]


def test_a_parameter_is_no_dollar_quote_and_a_body_may_end_without_a_semicolon():
    assert statements("select $1 + $2 from t$x where x = $1\n") == ["select $1 + $2 from t$x where x = $1"]
    assert statements("  -- nothing\n ;\n") == []


def test_unended_quotes_and_comments_are_named():
    for body, named in (("select 'x", "quoted"), ("select $a$ x", "dollar-quoted"), ("select /* x", "comment")):
        with pytest.raises(ValueError, match=named):
            statements(body)


def test_a_set_returning_function_returns_the_rows_of_its_last_statement():
    assert plpgsql_body("update t set a = 1;\nselect a from t", "set") == (
        "#variable_conflict use_column\nbegin\nupdate t set a = 1;\nreturn query select a from t;\nend"
    )


def test_a_void_function_runs_its_selects_for_their_effects():
    body = "/* first */ select f(1);\nwith x as (delete from t returning 1) insert into u select * from x"
    assert plpgsql_body(body, "void") == (
        "#variable_conflict use_column\nbegin\n/* first */ perform f(1);\n"
        "with x as (delete from t returning 1) insert into u select * from x;\nend"
    )


def test_a_function_of_one_value_returns_the_first_row_of_its_last_statement():
    assert plpgsql_body("delete from t returning true", "value", "boolean") == (
        "#variable_conflict use_column\ndeclare\n    v_result boolean;\nbegin\n"
        "delete from t returning true\n    into v_result;\nreturn v_result;\nend"
    )
    assert plpgsql_body("select a, b from t -- the pair", "out", "a, b") == (
        "#variable_conflict use_column\nbegin\nselect a, b from t -- the pair\n    into a, b;\nreturn;\nend"
    )


def test_what_cannot_be_made_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="returns must be one of"):
        plpgsql_body("select 1", "table")
    with pytest.raises(ValueError, match="needs its result named"):
        plpgsql_body("select 1", "value")
    with pytest.raises(ValueError, match="without a statement"):
        plpgsql_body("-- nothing", "set")


def test_the_callers_tenant_is_read_once_and_named_by_a_variable_outside_strings_and_comments():
    body = (
        "select t.x from t where t.tenant_id = memory.current_tenant() -- memory.current_tenant()\n"
        "    and t.y in (select u.y from u where u.tenant_id = (select memory.current_tenant()))\n"
        "    and t.note <> 'memory.current_tenant()'"
    )
    assert plpgsql_body(body, "value", "integer") == (
        "#variable_conflict use_column\ndeclare\n    v_tenant text := memory.current_tenant();\n"
        "    v_result integer;\nbegin\n"
        "select t.x from t where t.tenant_id = v_tenant -- memory.current_tenant()\n"
        "    and t.y in (select u.y from u where u.tenant_id = v_tenant)\n"
        "    and t.note <> 'memory.current_tenant()'\n    into v_result;\nreturn v_result;\nend"
    )


def test_a_body_of_one_statement_runs_it_prepared_on_the_tenants_shards_into_the_same_variables():
    body = (
        "\nbegin\n    with x as (insert into t (a) select $1 returning a)\n"
        "    select count(*) from x\n    into n, m;\nend\n"
    )
    assert prepared_body(body, "add_things", ["text", "bigint[]"]) == (
        "begin\n    execute format(\n        'execute %I(%L, %L)',\n"
        "        memory_internal._prepared('add_things', $sql$\n"
        "with x as (insert into t (a) select $1 returning a)\n    select count(*) from x\n$sql$, "
        "array['text', 'bigint[]'], $1),\n        $1, $2\n    )\n    into n, m;\nend"
    )


def test_a_statement_that_holds_the_quote_gets_another_and_one_without_into_returns_nothing():
    body = "begin insert into t values ($1, '$sql$') ; end;"
    prepared = prepared_body(body, "note", ["text"])
    assert "$sql_$\ninsert into t values ($1, '$sql$')\n$sql_$" in prepared
    assert prepared.endswith("$1\n    );\nend")


def test_only_a_body_of_one_statement_with_a_purpose_and_types_is_prepared():
    for body in ("begin select 1; select 2; end", "select 1", "begin end"):
        with pytest.raises(ValueError, match="one statement"):
            prepared_body(body, "x", ["text"])
    with pytest.raises(ValueError, match="purpose"):
        prepared_body("begin select $1; end", "not a name", ["text"])
    with pytest.raises(ValueError, match="types"):
        prepared_body("begin select 1; end", "x", [])
