"""Entities found by rules (agent_memory_db.entities.extract)."""

import pytest

from agent_memory_db.entities import MAX_ENTITIES, TYPES, Entity
from agent_memory_db.entities.extract import extract_entities

CODING = (
    "Migrate the DB layer from SQLAlchemy 1.4 to 2.0 and replace query.get with Session.get in "
    "src/app/models.py; ping @maria and see https://docs.sqlalchemy.org/en/20/"
)
PYTEST_LOG = """\
=================================== FAILURES ===================================
__________________________________ test_login __________________________________
tests/test_auth.py:42: in test_login
    assert resp.status_code == 200
E   AssertionError: assert 500 == 200
FAILED tests/test_auth.py::test_login - AssertionError
"""
POSTGRES_LOG = (
    'ERROR:  duplicate key value violates unique constraint "users_email_key"\n'
    "DETAIL:  Key (email)=(ana@example.com) already exists.\n"
)
CHAT = "Caroline went to a LGBTQ support group in Boston last Friday with Melanie"


def found(text, **options):
    return {entity.name: entity.type for entity in extract_entities(text, **options)}


def test_a_coding_request_names_its_tools_code_files_people_and_links():
    assert found(CODING) == {
        "DB": "concept",
        "SQLAlchemy": "tool",
        "query.get": "concept",
        "Session.get": "concept",
        "src/app/models.py": "doc",
        "@maria": "person",
        "https://docs.sqlalchemy.org/en/20/": "doc",
    }


def test_versions_and_bare_numbers_are_no_entities():
    names = found("Upgrade Postgres 16 to 17.2 and SQLAlchemy 1.4 to 2.0, 3 times.")
    assert names == {"Postgres": "tool", "SQLAlchemy": "tool"}


def test_a_pytest_failure_names_its_test_file_test_and_error():
    assert found(PYTEST_LOG) == {
        "test_login": "concept",
        "tests/test_auth.py": "doc",
        "resp.status_code": "concept",
        "AssertionError": "concept",
    }


def test_log_words_are_no_entities():
    names = found(PYTEST_LOG + POSTGRES_LOG)
    assert not {"FAILURES", "FAILED", "ERROR", "DETAIL", "Key", "E"} & names.keys()


def test_a_postgres_error_names_its_constraint_and_the_mailbox():
    assert found(POSTGRES_LOG) == {"users_email_key": "concept", "ana@example.com": "person"}


def test_a_chat_names_people_places_and_concepts():
    assert found(CHAT) == {"Caroline": "person", "LGBTQ": "concept", "Boston": "place", "Melanie": "person"}


@pytest.mark.parametrize(
    "text",
    [
        "Migrate the tables first.",
        "Thanks for the help.",
        "Yes, that works.",
        "We shipped it.",
        "Sounds good to me.",
        "Friday works for me.",
        "## Next Steps",
        "- Install Dependencies first",
        "1. Root Cause: a missing index",
    ],
)
def test_a_capitalized_word_that_starts_a_sentence_is_no_entity(text):
    assert found(text) == {}


def test_the_same_capitalized_word_inside_a_sentence_is_an_entity():
    assert found("We met Zorblax at the fair.") == {"Zorblax": "other"}


def test_an_abbreviation_dot_ends_no_sentence():
    assert found("Ask Dr. Okafor about it.") == {"Okafor": "person"}


def test_a_greeting_marks_a_person():
    assert found("Hey Mel! How are you?") == {"Mel": "person"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ('I finished "The Pragmatic Programmer" last week.', {"The Pragmatic Programmer": "doc"}),
        ("Update the 'Q3 roadmap' please.", {"Q3 roadmap": "doc"}),
        ("Read \u201cDesigning Data Intensive Applications\u201d.", {"Designing Data Intensive Applications": "doc"}),
        ('She said "I love it so much" and left.', {}),
        ('He wrote "Done." and left.', {}),
        ("Caroline's and Melanie's plans", {"Caroline": "person", "Melanie": "person"}),
        ('{"name": "Maria Lopez", "city": "New York"}', {"Maria Lopez": "person", "New York": "place"}),
    ],
)
def test_quoted_titles_are_docs_and_other_quotes_are_not(text, names):
    assert found(text) == names


@pytest.mark.parametrize(
    "path",
    [
        "./x.py",
        "../setup.cfg",
        "src/app/models.py",
        "/etc/nginx/nginx.conf",
        "~/.bashrc",
        "C:\\x\\y",
        "README.md",
        "ci.yml",
        ".github/",
        "tests/unit/",
        "docs/",
        "github.com/pgvector/pgvector",
    ],
)
def test_a_file_path_is_a_doc(path):
    assert found(f"Look at {path} now.") == {path: "doc"}


@pytest.mark.parametrize("text", ["and/or", "TCP/IP", "24/7", "/help", "e.g. this", "i.e. that"])
def test_slashes_and_abbreviations_are_no_paths(text):
    assert not any(kind == "doc" for kind in found(f"say {text} here").values())


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("ask @maria-lopez", {"@maria-lopez": "person"}),
        ("mail maria@acme.io", {"maria@acme.io": "person"}),
        ("tagged #postgres and #ops-review", {"#postgres": "topic", "#ops-review": "topic"}),
        ("issue #123 in colour #fff", {}),
        ("decorate with @pytest.fixture", {"pytest.fixture": "concept"}),
    ],
)
def test_handles_tags_and_mail(text, names):
    assert found(text) == names


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("call `getUserName` on it", {"getUserName": "concept"}),
        ("the user_id column", {"user_id": "concept"}),
        ("a `Session.get()` call", {"Session.get": "concept"}),
        ("run `pytest -q tests/unit/test_x.py`", {"tests/unit/test_x.py": "doc"}),
        ("enable `postgres`", {"postgres": "tool"}),
        ("the AssertionError and a HashMap", {"AssertionError": "concept", "HashMap": "concept"}),
        ("we met McDonald today", {"McDonald": "other"}),
    ],
)
def test_code_identifiers_are_concepts(text, names):
    assert found(text) == names


def test_a_fenced_block_is_read_for_paths_and_dotted_names_only():
    text = "Here:\n```python\nfrom app.models import User\nreturn self.session.get(User, 1)  # src/app/x.py\n```\n"
    assert found(text) == {"app.models": "concept", "session.get": "concept", "src/app/x.py": "doc"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("p95 latency 120 ms", {"p95 latency": "metric"}),
        ("the error rate of 2% is high", {"error rate": "metric"}),
        ("CPU at 85% all day", {"CPU": "metric"}),
        ("120 ms latency", {"latency": "metric"}),
        ("recall_any@5 0.55", {"recall_any@5": "metric"}),
        ("latency matters", {}),
    ],
)
def test_a_metric_needs_a_number_or_a_percentile(text, names):
    assert found(text) == names


def test_org_words_make_orgs():
    assert found("She joined Acme Corp after the University of Michigan.") == {
        "Acme Corp": "org",
        "University of Michigan": "org",
    }


def test_a_person_and_an_org_are_not_joined_by_of():
    assert found("It was Maria Lopez of Acme Corp.") == {"Maria Lopez": "person", "Acme Corp": "org"}


def test_place_lists_and_place_words_make_places():
    assert found("We flew to New York City, then drove over the Golden Gate Bridge to San Francisco.") == {
        "New York City": "place",
        "Golden Gate Bridge": "place",
        "San Francisco": "place",
    }


def test_a_name_that_is_also_a_place_is_a_place_only_after_a_preposition():
    assert found("I met Paris at the hotel.") == {"Paris": "person"}
    assert found("I met her in Paris.") == {"Paris": "place"}


@pytest.mark.parametrize(
    "text",
    ["We shipped project Atlas.", "The Atlas project shipped.", "Project Atlas shipped.", "The Atlas Project shipped."],
)
def test_project_cues_make_projects(text):
    assert found(text) == {"Atlas": "project"}


def test_a_code_word_after_project_is_a_project():
    assert found("the project agent_memory") == {"agent_memory": "project"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("We deploy with Docker on Kubernetes in AWS.", {"Docker": "tool", "Kubernetes": "tool", "AWS": "org"}),
        ("Push it to GitHub Actions.", {"GitHub Actions": "tool"}),
        ("Written in C++ and C#.", {"C++": "tool", "C#": "tool"}),
        ("Uses Chart.js and node.js", {"Chart.js": "tool", "node.js": "tool"}),
        ("Learning Rust now.", {"Rust": "tool"}),
        ("the rust on my bike", {}),
        ("Install python3.11 first.", {"python": "tool"}),
    ],
)
def test_the_default_gazetteer(text, names):
    assert found(text) == names


def test_a_gazetteer_extends_and_overrides_the_default():
    gazetteer = {"Acme Billing": "project", "postgres": "org"}
    assert found("Acme Billing runs on Postgres.", gazetteer=gazetteer) == {
        "Acme Billing": "project",
        "Postgres": "org",
    }


def test_names_of_several_words_match_whole_beside_shorter_names_with_the_same_first_word():
    gazetteer = {"Acme": "org", "Acme Billing Service Platform": "project"}
    text = "Acme Billing Service Platform is down. Acme pays on Amazon Web Services."
    assert found(text, gazetteer=gazetteer) == {
        "Acme Billing Service Platform": "project",
        "Acme": "org",
        "Amazon Web Services": "org",
    }


def test_a_gazetteer_type_must_be_one_of_the_twelve():
    with pytest.raises(ValueError, match="'product'"):
        extract_entities("x", gazetteer={"acme": "product"})


def test_a_gazetteer_name_must_not_be_empty():
    with pytest.raises(ValueError, match="empty"):
        extract_entities("x", gazetteer={"...": "tool"})


def test_the_speaker_is_a_person_mentioned_first():
    assert extract_entities(CHAT, speaker="Melanie")[0] == Entity("Melanie", "person", 2)


def test_a_bare_role_is_no_speaker():
    assert "assistant" not in found("Done.", speaker="assistant")


@pytest.mark.parametrize(
    "spoof",
    ["Doc\u200bker", "Doc\u00adker", "\u202eDocker\u202c", "D\u043eck\u0435r", "\uff24\uff4f\uff43\uff4b\uff45\uff52"],
)
def test_a_spoofed_tool_name_is_still_the_tool(spoof):
    assert [entity.type for entity in extract_entities(f"We run {spoof} here.")] == ["tool"]


@pytest.mark.parametrize("text", ["", "   \n\t", "\U0001f418\U0001f680", "?!...", "42 3.14 2024-01-01"])
def test_text_without_names_has_no_entities(text):
    assert extract_entities(text) == []


def test_mentions_merge_across_aliases_and_spellings():
    entities = extract_entities("Postgres is up; postgres restarted; PostgreSQL 16 and p\u043estgres too.")
    assert entities == [Entity("Postgres", "tool", 4)]


def test_the_most_specific_type_wins():
    entities = extract_entities("Our CPU is fine, CPU at 85% now.")
    assert entities == [Entity("CPU", "metric", 2)]


def test_the_first_surface_form_names_the_entity():
    entities = extract_entities("k8s first, then Kubernetes, then K8S.")
    assert entities == [Entity("k8s", "tool", 3)]


def test_entities_come_in_order_of_first_mention():
    assert [e.name for e in extract_entities("See README.md, ask @maria, use Docker.")] == [
        "README.md",
        "@maria",
        "Docker",
    ]


def test_keys_under_two_characters_are_dropped():
    assert found("use `x` and `y`, then x.y") == {}


def test_entities_per_text_are_capped():
    text = " ".join(f"item_{n}" for n in range(MAX_ENTITIES + 50))
    assert len(extract_entities(text)) == MAX_ENTITIES


def test_a_long_text_is_read_whole():
    text = "Caroline met Melanie in Boston. " * 5000
    assert extract_entities(text)[0] == Entity("Caroline", "person", 5000)


def test_every_type_is_one_of_the_twelve():
    text = CODING + PYTEST_LOG + POSTGRES_LOG + CHAT + " #ops p95 latency 3 ms, project Atlas, Acme Inc."
    assert {entity.type for entity in extract_entities(text)} <= set(TYPES)


def test_extraction_is_deterministic():
    assert extract_entities(CODING + CHAT) == extract_entities(CODING + CHAT)
