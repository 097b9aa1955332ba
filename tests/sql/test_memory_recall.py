"""Recall over turns and curated memories: one ranked list with a kind column, a memory hit carrying its
evidence turns, questions about rules, preferences and decisions routed to memory first, and as_of."""

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

CHAT = [
    {"role": "user", "content": "The editor theme keeps resetting after every update."},
    {"role": "assistant", "content": "Editor themes reset when the settings file is replaced by the update."},
    {"role": "user", "content": "Which editor theme is the default one in the new release?"},
    {"role": "assistant", "content": "The new release ships a light editor theme as the default."},
    {"role": "user", "content": "I prefer a dark editor theme with large fonts."},
]


def hits(db, query, **extra):
    names = "".join(f", {key} => %({key})s" for key in extra)
    return db.execute(
        f"select kind, memory_id, evidence_turn_ids, content, components ->> 'route'"
        f" from memory.recall(%(query)s, k => 5, agent_id => 'coder'{names})",
        {"query": query, **extra},
    ).fetchall()


def remember(db, content, **extra):
    names = "".join(f", {key} => %({key})s" for key in extra)
    return db.execute(
        f"select memory_id from memory.remember(%(content)s, agent_id => 'coder'{names})", {"content": content, **extra}
    ).fetchone()[0]


@pytest.fixture
def chat(db):
    db.execute("set memory.memory_extractor = 'none'")
    db.execute("select from memory.commit('s1', %s, agent_id => 'coder', enrich => 'now')", (Json(CHAT),))
    return {
        row[1]: row[0]
        for row in db.execute("select turn_id, content from memory.turns where agent_id = 'coder'").fetchall()
    }


def test_a_preference_question_is_answered_from_memory_first(db, chat):
    said = chat["I prefer a dark editor theme with large fonts."]
    memory = remember(db, "Prefers a dark editor theme with large fonts.", kind="preference", evidence=[said])
    first = hits(db, "What editor theme does the user prefer?")[0]
    assert first == (
        "preference",
        memory,
        [said],
        "Prefers a dark editor theme with large fonts.",
        "memory first: preference",
    )
    # Without routing, the hybrid ranks the turns about themes as it always did, the memory among them.
    routed_off = hits(db, "What editor theme does the user prefer?", intent="none")
    assert {row[4] for row in routed_off} == {"hybrid"}
    kind_weight = db.execute(
        "select components -> 'signals' -> 'kind' ->> 'contribution' from memory.recall("
        "'What editor theme does the user prefer?', k => 1, agent_id => 'coder')"
    ).fetchone()[0]
    assert float(kind_weight) == 10


def test_a_turn_ranked_below_a_memory_it_is_evidence_of_is_not_a_hit_of_its_own(db, chat):
    said = chat["I prefer a dark editor theme with large fonts."]
    remember(db, "I prefer a dark editor theme with large fonts.", kind="preference", evidence=[said])
    rows = hits(db, "dark editor theme with large fonts")
    assert rows[0][0] == "preference" and rows[0][2] == [said]
    assert "turn" in {row[0] for row in rows}
    assert all(not (kind == "turn" and content == CHAT[4]["content"]) for kind, _, _, content, _ in rows)
    # explain_recall lists every candidate, the evidence turn too.
    explained = db.execute(
        "select kind from memory.explain_recall('dark editor theme with large fonts', agent_id => 'coder')"
        " where turn_id = %s",
        (said,),
    ).fetchall()
    assert explained == [("turn",)]


def routed(db, question, intent):
    """Per memory_id (None: a turn) of the hits, the kind signal's contribution; and the route taken."""
    rows = db.execute(
        "select memory_id, (components -> 'signals' -> 'kind' ->> 'contribution')::float, components ->> 'route'"
        " from memory.recall(%s, k => 10, agent_id => 'coder', intent => %s)",
        (question, intent),
    ).fetchall()
    return {row[0]: row[1] for row in rows if row[0] is not None}, {row[2] for row in rows}


def test_the_caller_names_the_intent_and_only_a_relevant_memory_is_routed(db, chat):
    rule = remember(db, "Editor themes are set by the team's shared settings file.", kind="rule")
    assert routed(db, "how is the editor theme set?", "rule") == ({rule: 10}, {"memory first: rule"})
    assert routed(db, "how is the editor theme set?", "none") == ({rule: 0}, {"hybrid"})
    # A memory of the kind asked for but less relevant than the candidates' mean is not routed.
    assert routed(db, "what happens to the editor theme after an update?", "rule")[0] == {rule: 0}
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="intent must be none or a memory kind"):
        hits(db, "editor theme", intent="rules")
    db.rollback()
    with pytest.raises(psycopg.errors.NullValueNotAllowed, match="include_ended must be true or false"):
        hits(db, "editor theme", include_ended=None)


def test_recall_as_of_answers_with_the_memory_that_held_then(db, chat):
    light = remember(db, "The default editor theme is light.", kind="fact", key="theme.default")
    db.commit()
    switched = db.execute("select pg_catalog.clock_timestamp()").fetchone()[0]
    db.commit()  # what follows starts after it
    dark = remember(db, "The default editor theme is dark.", kind="fact", key="theme.default")
    now = {row[1] for row in hits(db, "default editor theme")}
    assert dark in now and light not in now
    then = hits(db, "default editor theme", as_of=switched)
    assert light in {row[1] for row in then} and dark not in {row[1] for row in then}
    everything = db.execute(
        "select memory_id, (components -> 'signals' -> 'status' ->> 'value')::float from memory.recall("
        "'default editor theme', k => 10, agent_id => 'coder', include_ended => true) where memory_id is not null"
    ).fetchall()
    assert dict(everything) == {dark: 0, light: -1}


def test_turns_said_after_as_of_are_not_recalled(db, chat):
    db.commit()
    before = db.execute("select pg_catalog.clock_timestamp()").fetchone()[0]
    db.commit()
    later = [{"role": "user", "content": "Zebra stripes would make a fine editor theme."}]
    db.execute("select from memory.commit('s2', %s, agent_id => 'coder', enrich => 'now')", (Json(later),))
    assert "Zebra" in hits(db, "zebra stripes theme")[0][3]
    assert all("Zebra" not in row[3] for row in hits(db, "zebra stripes theme", as_of=before))


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("What are the rules for deploying on Fridays?", "rule"),
        ("Is there a policy on code review?", "rule"),
        ("Am I allowed to push to main?", "rule"),
        ("Which editor theme do I prefer?", "preference"),
        ("What's my favourite band?", "preference"),
        ("What did we decide about the database?", "decision"),
        ("Which framework are we going with?", "decision"),
        ("How do I reset the editor theme?", None),
        ("When is the release?", None),
    ],
)
def test_the_intent_of_a_question_is_found_without_a_model(db, question, intent):
    assert db.execute("select memory.query_intent(%s)", (question,)).fetchone() == (intent,)


def test_importance_kind_and_status_are_signals_of_the_registry(db):
    rows = db.execute(
        "select name, stage, weight from memory.signal_definitions() where name in ('importance', 'kind', 'status')"
    ).fetchall()
    assert sorted(rows) == [("importance", "boost", 1.0), ("kind", "boost", 10.0), ("status", "boost", 1.0)]


def test_tags_keep_recall_to_the_memories_that_have_one(db, chat):
    docker = remember(db, "Rebuild the editor image with the dark theme baked in.", tags=["docker", "build"])
    remember(db, "The editor theme file lives in the settings folder.", tags=["config"])
    tagged = hits(db, "editor theme", tags=["docker"])
    assert [(kind, memory_id) for kind, memory_id, *_ in tagged] == [("fact", docker)]
    assert len(hits(db, "editor theme")) == 5  # no tags: turns and memories alike
    assert hits(db, "editor theme", tags=["nothing-has-this"]) == []
    shown = db.execute(
        "select components -> 'tags' from memory.recall('editor theme', agent_id => 'coder', tags => '{docker}')"
    ).fetchone()[0]
    assert shown == ["docker"]


def test_the_setting_recall_tags_filters_every_recall_of_the_session(db, chat):
    remember(db, "Rebuild the editor image with the dark theme baked in.", tags=["docker"])
    db.execute("set memory.recall_tags = '[\"docker\"]'")
    assert [content for *_, content, _ in hits(db, "editor theme")] == [
        "Rebuild the editor image with the dark theme baked in."
    ]


def test_the_opt_in_tag_signal_lifts_a_memory_whose_tag_the_query_names(db, chat):
    tagged = remember(db, "Fonts are set per workspace in this team.", tags=["fonts"])
    remember(db, "Fonts come from the system in the new release.")
    query = "which fonts does the editor use?"

    def rank_and_value(weights):
        rows = db.execute(
            "select rank, components #>> '{signals,tag,value}' from memory.explain_recall(%s, agent_id => 'coder',"
            " weights => %s) where memory_id = %s",
            (query, Jsonb(weights), tagged),
        ).fetchone()
        return rows[0], float(rows[1])

    plain_rank, value = rank_and_value({})
    lifted_rank, _ = rank_and_value({"weight_tag": 5})
    assert value == 1 and lifted_rank == 1 < plain_rank
