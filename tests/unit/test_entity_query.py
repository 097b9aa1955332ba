"""The names a recall query mentions an entity by (agent_memory_db.entities.query)."""

from agent_memory_db.entities.query import query_names


def test_every_run_of_up_to_four_words_written_as_a_name_is_keyed():
    names = query_names("When did Ana visit New York City last")
    assert "new york city" in names and "new york" in names and "ana" in names
    assert "when did ana visit" in names and "did ana visit new york" not in names


def test_lower_case_words_are_names_only_when_the_gazetteer_knows_them_and_they_are_not_words():
    assert query_names("why did we move to postgres?") == ["postgresql"]
    assert "postgresql" in query_names("Why did we move to PostgreSQL?")
    assert query_names("which flask routes handle the user project") == []
    assert query_names("is acme cloud down", {"acme cloud": "org"}) == ["acme cloud"]


def test_digits_and_symbols_inside_make_a_name():
    names = query_names("did app.route or flask-login change for gpt-4 in 2024?")
    assert {"app.route", "flask-login", "gpt-4", "2024"} <= set(names) and "change" not in names


def test_the_capital_that_starts_a_sentence_is_no_sign_of_a_name():
    assert query_names("Meeting notes from the launch? Project plans too. I think so") == []
    names = query_names("Grand Canyon trip? Rust or Flask. Oscar hid a bone. Lisbon")
    assert {"grand canyon", "canyon", "rust", "flask", "oscar", "lisbon"} <= set(names)
    assert not any("?" in name or "." in name or "trip rust" in name for name in names)


def test_possessives_punctuation_and_look_alikes_are_normalized():
    names = query_names("What is Caroline's plan for «Project Atlas»? Ask Caroline's.")
    assert "caroline" in names and "project atlas" in names and "caroline's" not in names
    assert "docker" in query_names("is D\u043ecker up")  # Cyrillic o


def test_single_characters_and_empty_queries_give_nothing():
    names = query_names("I a ? X")
    assert "i" not in names and "x" not in names and all(len(name) >= 2 for name in names)
    assert query_names("") == [] and query_names("   ") == []


def test_keys_are_distinct_in_order_of_first_word():
    assert query_names("Rust and Rust") == ["rust", "rust and rust", "and rust"]
