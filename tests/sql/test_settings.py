"""Settings: defaults, memory.config overrides checked on write, session overrides, precedence."""

import psycopg
import pytest


def setting(db, key):
    return db.execute("select memory.setting(%s)", (key,)).fetchone()[0]


def source(db, key):
    return db.execute("select source from memory.settings where key = %s", (key,)).fetchone()[0]


def test_default_applies_when_nothing_is_set(db):
    assert (setting(db, "embedder"), source(db, "embedder")) == ("local", "default")


def test_config_overrides_the_default(db):
    db.execute("insert into memory.config (key, value) values ('embedder', '\"none\"')")
    assert (setting(db, "embedder"), source(db, "embedder")) == ("none", "config")


def test_session_setting_overrides_config(db):
    db.execute("insert into memory.config (key, value) values ('embedder', '\"none\"')")
    db.execute("set memory.embedder = 'client'")
    assert (setting(db, "embedder"), source(db, "embedder")) == ("client", "session")


def test_reset_session_setting_falls_back_to_config(db):
    db.execute("insert into memory.config (key, value) values ('embedder', '\"none\"')")
    db.execute("set memory.embedder = 'client'")
    db.execute("reset memory.embedder")
    assert setting(db, "embedder") == "none"


def test_a_tenants_config_wins_over_every_tenants_for_that_tenant_only(db):
    db.execute(
        "insert into memory.config (tenant_id, key, value) values"
        " ('', 'weight_dense', '0.8'), ('acme', 'weight_dense', '1.5')"
    )
    db.execute("set memory.tenant_id = 'acme'")
    assert (setting(db, "weight_dense"), source(db, "weight_dense")) == (1.5, "tenant")
    assert db.execute("select (memory_internal._settings_json() ->> 'weight_dense')::float8").fetchone()[0] == 1.5
    db.execute("set memory.tenant_id = 'globex'")
    assert (setting(db, "weight_dense"), source(db, "weight_dense")) == (0.8, "config")


def test_a_role_reads_only_its_tenants_settings(db, logins):
    db.execute(
        "insert into memory.config (tenant_id, key, value) values"
        " ('', 'bm25_k1', '1.1'), ('acme', 'bm25_k1', '1.2'), ('globex', 'bm25_k1', '1.3')"
    )
    db.commit()
    acme = logins.create(tenant="acme")
    assert acme.execute("select tenant_id, value from memory.config order by 1").fetchall() == [
        ("", 1.1),
        ("acme", 1.2),
    ]
    assert acme.execute("select memory.setting('bm25_k1')").fetchone()[0] == 1.2
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        acme.execute("update memory.config set value = '2' where key = 'bm25_k1'")


def test_config_records_who_changed_it(db):
    db.execute("insert into memory.config (key, value) values ('embedder', '\"none\"')")
    assert db.execute("select updated_by = current_user from memory.config").fetchone()[0] is True


def test_unknown_key_in_config_is_refused(db):
    with pytest.raises(psycopg.errors.RaiseException, match='unknown setting "embeder"'):
        db.execute("insert into memory.config (key, value) values ('embeder', '\"none\"')")


def test_wrong_type_in_config_is_refused(db):
    with pytest.raises(psycopg.errors.RaiseException, match='"embedder" must be a JSON string, got 3'):
        db.execute("insert into memory.config (key, value) values ('embedder', '3')")


def test_value_outside_the_allowed_set_is_refused(db):
    with pytest.raises(psycopg.errors.RaiseException, match='"embedder" must be one of'):
        db.execute("insert into memory.config (key, value) values ('embedder', '\"magic\"')")


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("text_search_config", '"nonexistent"', '"text_search_config" must name a text search configuration'),
        ("text_search_config", '"101"', '"text_search_config" must name a text search configuration'),
        ("text_search_config", '"1.5"', '"text_search_config" must name a text search configuration'),
        ("weight_dense", "1e-400", '"weight_dense" must be a number a double precision holds'),
        ("index_roles", "[[1]]", '"index_roles" must be a list of values among'),
        ("index_roles", '["user", "robot"]', '"index_roles" must be a list of values among'),
        ("entity_gazetteer", '{"acme": "planet"}', '"entity_gazetteer" maps names to entity types \\(person, '),
        ("entity_gazetteer", '{"acme": 3}', '"entity_gazetteer" maps names to entity types'),
        ("entity_gazetteer", '{"?!": "org"}', '"entity_gazetteer" maps names to entity types'),
    ],
)
def test_a_setting_that_would_break_every_call_is_refused_on_write(db, key, value, error):
    with pytest.raises(psycopg.errors.RaiseException, match=error):
        db.execute("insert into memory.config (key, value) values (%s, %s)", (key, value))


def test_an_integer_setting_takes_integers_and_reads_a_whole_float_as_one(db):
    refused = pytest.raises(
        psycopg.errors.RaiseException, match=r'"session_candidates" must be a JSON integer, got 2\.5'
    )
    with refused, db.transaction():
        db.execute("insert into memory.config (key, value) values ('session_candidates', '2.5')")
    db.execute("insert into memory.config (key, value) values ('session_candidates', '0.0')")
    assert db.execute("select value::text from memory.config").fetchone()[0] == "0"
    db.execute("select * from memory.recall('tea', weights => '{\"recall_candidates\": 10.0}')")


def test_a_session_text_search_config_that_does_not_exist_is_refused_by_name(db):
    db.execute("set memory.text_search_config = 'klingon'")
    with pytest.raises(psycopg.errors.RaiseException, match='"text_search_config" must name a text search'):
        db.execute("select * from memory.recall('hello')")


def test_bad_session_setting_is_refused_when_read(db):
    db.execute("set memory.embedder = 'magic'")
    with pytest.raises(psycopg.errors.RaiseException, match='"embedder" must be one of'):
        setting(db, "embedder")


def test_reading_an_unknown_key_is_an_error(db):
    with pytest.raises(psycopg.errors.RaiseException, match='unknown setting "nope"'):
        setting(db, "nope")


def test_a_misspelt_session_setting_is_named_with_the_closest_one(db):
    db.execute("set memory.wieght_dense = 1")
    misspelt = r"memory.wieght_dense \(did you mean memory.weight_dense"
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=misspelt), db.transaction():
        setting(db, "embedder")
    db.execute("set memory.wieght_dense = ''")  # emptied, as reset leaves a setting PostgreSQL does not know
    assert setting(db, "embedder") == "local"


def test_an_unknown_setting_far_from_every_known_one_is_named_alone(db):
    db.execute("set memory.colour = 'blue'")
    with pytest.raises(psycopg.errors.InvalidParameterValue) as raised:
        db.execute("select * from memory.recall('hello')")
    assert raised.value.diag.message_primary == "agent_memory: unknown setting memory.colour"


def test_the_tenant_setting_is_not_a_recall_setting_but_is_known(db):
    db.execute("set memory.tenant_id = 'acme'")
    assert setting(db, "embedder") == "local"


def test_a_session_value_of_the_wrong_kind_is_one_line_with_a_hint(db):
    db.execute("set memory.weight_dense = 'abc'")
    with pytest.raises(psycopg.errors.InvalidParameterValue) as raised:
        db.execute("select * from memory.recall('hello')")
    diag = raised.value.diag
    assert diag.message_primary == "agent_memory: setting memory.weight_dense must be a JSON number, got abc"
    assert diag.message_hint == "reset memory.weight_dense, or set it to a number"
    assert "array_agg" not in diag.context  # the recall statement's text is not repeated


@pytest.mark.parametrize(
    ("setting", "value", "error"),
    [
        ("text_search_config", "101", '"text_search_config" must name a text search configuration'),
        ("text_search_config", "1.5", '"text_search_config" must name a text search configuration'),
        ("weight_dense", "1e-400", '"weight_dense" must be a number a double precision holds'),
        ("weight_dense", "1e400", '"weight_dense" must be a number a double precision holds'),
    ],
)
def test_a_session_value_no_call_could_use_is_refused_by_name(db, setting, value, error):
    db.execute("select set_config(%s, %s, false)", (f"memory.{setting}", value))
    with pytest.raises(psycopg.errors.RaiseException, match=error):
        db.execute("select * from memory.recall('hello')")


def test_a_weight_a_double_precision_cannot_hold_is_refused_in_a_call(db):
    with pytest.raises(psycopg.errors.RaiseException, match='"weight_dense" must be a number a double precision'):
        db.execute("select * from memory.recall('hello', weights => '{\"weight_dense\": 1e-400}')")


def test_a_setting_named_in_capitals_is_the_same_setting_to_every_reader(db):
    db.commit()
    db.autocommit = True
    db.execute("select set_config('MEMORY.weight_dense', '2', false)")
    assert setting(db, "weight_dense") == 2
    assert db.execute("select value, source from memory.settings where key = 'weight_dense'").fetchone() == (
        2,
        "session",
    )
    db.execute("select set_config('MEMORY.weight_dense', 'heavy', false)")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=r"memory\.weight_dense must be a JSON number"):
        db.execute("select * from memory.recall('hello')")
    db.execute("select set_config('MEMORY.weight_dense', '', false)")
    db.execute("select set_config('MEMORY.Wieght_Dense', '1', false)")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=r"unknown setting memory.wieght_dense \(did you"):
        db.execute("select * from memory.recall('hello')")


def test_each_subsystem_declares_its_settings_once_with_a_default_that_passes_its_checks(db):
    known = dict(db.execute("select key, set_by from memory.setting_definitions()").fetchall())
    assert known["bm25_k1"] == "session" and known["embedder"] == "admin" and "weight_dense" in known
    with pytest.raises(psycopg.errors.UniqueViolation):
        db.execute("select memory_internal._declare_setting('bm25_k1', '0.9', 'number', 'again')")
    db.rollback()
    db.execute("select memory_internal._check_setting_defaults()")  # what every install runs last
    for declared, problem in (
        ("'a_new_one', '5', 'integer', 'x', maximum => 1, minimum => 0", 'setting "a_new_one" must be between 0 and 1'),
        (
            "'a_map', '{\"x\": 1}', 'object', 'x', checked_by => 'memory_internal._check_entity_gazetteer(jsonb)'",
            '"entity_gazetteer" maps names to entity types',
        ),
    ):
        db.execute(f"select memory_internal._declare_setting({declared})")
        with pytest.raises(psycopg.errors.RaiseException, match=problem):
            db.execute("select memory_internal._check_setting_defaults()")
        db.rollback()
