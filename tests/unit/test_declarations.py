"""The TOML declarations the build turns into SQL: settings, recall signals, comments."""

import declarations
import pytest
from declarations import BuildError, declaration_sql


def written(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_settings_file_becomes_one_declaration_per_setting(tmp_path):
    settings = written(
        tmp_path,
        "012-settings.toml",
        '[half_life]\ntype = "number"\ndefault = 0.5\nminimum = 1e-06\nset_by = "admin"\n'
        'description = "It\'s a half-life."\n\n'
        '[roles]\ntype = "array"\ndefault = ["user"]\nallowed = ["user", "tool"]\ndescription = "Roles."\n',
    )
    assert declaration_sql(settings, tmp_path).splitlines() == [
        "select memory_internal._declare_setting('half_life', '0.5', 'number', 'It''s a half-life.', "
        "minimum => 1e-06, set_by => 'admin');",
        "select memory_internal._declare_setting('roles', '[\"user\"]', 'array', 'Roles.', "
        'allowed => \'["user", "tool"]\');',
    ]


SIGNAL = """
[signal]
name = "late_reply"
stage = "boost"
default_weight = 0.5
value = '''
case when (c).reply_delay > 60
    then 1 else 0 end'''
measures = "1 for a turn answered after a minute."

[features.reply_delay]
stage = "turn"
type = "double precision"
expression = 'extract(epoch from d.replied_at - d.created_at)'
describes = "Seconds before the reply."
"""


def test_a_signal_file_defines_its_features_then_its_function_then_its_row(tmp_path):
    sql = declaration_sql(written(tmp_path, "130-signal-late-reply.toml", SIGNAL), tmp_path)
    assert (
        sql.index("_define_feature(\n    'reply_delay', 'turn', 'double precision',")
        < sql.index("create or replace function memory_internal.signal_late_reply(c memory.recall_candidate, s jsonb)")
        < sql.index("_define_builtin_signal(\n    'late_reply', 'boost', ")
    )
    # A multi-line expression reads in the statement as it does in the file, under `    select `.
    assert "as $signal$\n    select case when (c).reply_delay > 60\n        then 1 else 0 end\n$signal$;" in sql
    assert "$feature$extract(epoch from d.replied_at - d.created_at)$feature$" in sql
    assert "'memory_internal.signal_late_reply(memory.recall_candidate, jsonb)', 0.5,\n    '1 for a turn" in sql


def test_a_features_file_defines_each_feature_and_a_fusion_feature_has_no_expression(tmp_path):
    text = '[features.turn_id]\nstage = "chunk"\ntype = "bigint"\nexpression = "c.turn_id"\ndescribes = "Its id."\n\n'
    text += '[features.fused]\nstage = "fusion"\ntype = "double precision"\ndescribes = "Its fused score."\n'
    sql = declaration_sql(written(tmp_path, "098-pipeline-features.toml", text), tmp_path)
    assert sql.split("\n\n") == [
        "select memory_internal._define_feature(\n    'turn_id', 'chunk', 'bigint',\n    $feature$c.turn_id$feature$,"
        "\n    'Its id.',\n    builtin => true\n);",
        "select memory_internal._define_feature(\n    'fused', 'fusion', 'double precision',\n    null,"
        "\n    'Its fused score.',\n    builtin => true\n);",
    ]


COMMENTS = """
[memory.sessions]
table = "One row per session."
[memory.sessions.columns]
agent_id = "The agent's id."

[memory.tier_items]
view = "Every item."

[memory.memories.columns]
tier = "hot, warm or cold."
"""


def test_a_comments_file_comments_each_relation_then_its_columns(tmp_path):
    assert declaration_sql(written(tmp_path, "067-write-comments.toml", COMMENTS), tmp_path).splitlines() == [
        "comment on table memory.sessions is 'One row per session.';",
        "comment on column memory.sessions.agent_id is 'The agent''s id.';",
        "comment on view memory.tier_items is 'Every item.';",
        "comment on column memory.memories.tier is 'hot, warm or cold.';",
    ]


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("012-settings.toml", '[a]\ntype = "number"\ndefault = 1\n', "setting a needs type, default, description"),
        ("012-settings.toml", '[a]\ntype = "number"\ndefault = 1\ndescription = "x"\nmaximun = 2\n', "may have only"),
        ("012-settings.toml", '[a]\ntype = "number"\ndefault = 1\ndescription = "x"\nmaximum = "2"\n', "maximum must"),
        ("012-settings.toml", '[a]\ntype = "number"\ndefault = 1\ndescription = "x"\nchecked_by = 5\n', "be strings"),
        ("012-settings.toml", "[a\n", "012-settings.toml: "),
        ("130-signal-late.toml", SIGNAL, "the signal's name must be the file's"),
        ("130-signal-late-reply.toml", SIGNAL.replace("default_weight = 0.5", "default_weight = '1'"), "a number"),
        ("130-signal-late-reply.toml", SIGNAL.replace('measures = "', 'measure = "'), r"\[signal\] needs name"),
        ("130-signal-late-reply.toml", SIGNAL.replace('describes = "', 'about = "'), "feature reply_delay needs"),
        ("130-signal-late-reply.toml", SIGNAL + "[weights]\n", r"may have only \[signal\]"),
        ("130-signal-late-reply.toml", SIGNAL.replace("expression = '", "# '"), "reply_delay needs an expression"),
        (
            "098-pipeline-features.toml",
            '[features.f]\nstage = "fusion"\ntype = "int"\nexpression = "1"\ndescribes = "x"\n',
            "unless its stage is fusion",
        ),
        ("098-pipeline-features.toml", "[signal]\n", r"may have only \[features.<name>\]"),
        ("067-write-comments.toml", '[memory.sessions]\ntable = "a"\nview = "b"\n', "under table or view"),
        ("067-write-comments.toml", '[memory.sessions]\ntabel = "a"\n', "memory.sessions needs its comment"),
        ("067-write-comments.toml", '[memory.Sessions]\ntable = "a"\n', "each name in lower case"),
        ("067-write-comments.toml", "[memory.sessions.columns]\nagent_id = 5\n", "each comment must be a string"),
        ("067-write-comments.toml", 'memory = "a"\n', "memory must be a schema's table of relations"),
        ("067-write-things.toml", "", "a declarations file is NNN-settings"),
    ],
)
def test_a_declarations_file_with_a_mistake_names_the_file_the_entry_and_the_problem(tmp_path, name, text, problem):
    with pytest.raises(BuildError, match=problem) as raised:
        declaration_sql(written(tmp_path, name, text), tmp_path)
    assert name in str(raised.value)


def test_the_build_and_the_declarations_fail_with_one_error():
    import assemble

    assert assemble.BuildError is declarations.BuildError
