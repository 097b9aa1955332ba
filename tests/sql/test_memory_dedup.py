"""Semantic dedup: a paraphrase of a memory held is merged into it, a changed value is not, and shadow mode
only records the merges it would make."""

import pytest


def remember(db, content, **extra):
    names = "".join(f", {key} => %({key})s" for key in extra)
    return db.execute(
        f"select memory_id, outcome from memory.remember(%(content)s{names})", {"content": content, **extra}
    ).fetchone()


def merges(db):
    return db.execute(
        "select memory_id, content, merged, created_memory_id, similarity >= 0.9 from memory.memory_merges"
        " order by merge_id"
    ).fetchall()


def test_a_paraphrase_is_merged_into_the_memory_held_with_its_evidence(db):
    db.execute('select from memory.commit(\'s\', \'[{"role": "user", "content": "dark themes please"}]\')')
    evidence = [db.execute("select turn_id from memory.turns where content = 'dark themes please'").fetchone()[0]]
    first, created = remember(db, "The user prefers a dark theme in the editor.", kind="preference")
    again, merged = remember(db, "In the editor, the user likes a dark theme.", kind="preference", evidence=evidence)
    assert (created, merged, again) == ("created", "merged", first)
    assert merges(db) == [(first, "In the editor, the user likes a dark theme.", True, None, True)]
    assert db.execute("select count(*) from memory.memories").fetchone() == (1,)
    assert db.execute("select evidence_turn_ids from memory.memory_items").fetchone() == (evidence,)


def test_a_changed_value_or_another_kind_is_not_a_paraphrase(db):
    tuesday = remember(db, "Deploys go out on Tuesdays.", kind="rule")[0]
    assert remember(db, "Deploys go out on Thursdays.", kind="rule")[1] == "created"
    assert remember(db, "Deploys never go out on Tuesdays.", kind="rule")[1] == "created"
    assert remember(db, "Deploys go out on Tuesdays!", kind="fact")[1] == "created"
    # Under a key, a changed value supersedes the version it changes.
    remember(db, "The daily API quota is 1,000 calls.", kind="fact", key="quota")
    assert remember(db, "The daily API quota is 1,200 calls.", kind="fact", key="quota")[1] == "updated"
    assert merges(db) == [] and tuesday is not None


def test_shadow_mode_records_the_merge_it_would_make_and_changes_nothing(db):
    db.execute("set memory.memory_dedup = 'shadow'")
    first = remember(db, "The user prefers a dark theme in the editor.", kind="preference")[0]
    second, outcome = remember(db, "The user prefers dark themes in the editor.", kind="preference")
    assert outcome == "created" and second != first
    assert merges(db) == [(first, "The user prefers dark themes in the editor.", False, second, True)]
    held = db.execute("select memory_id, evidence_turn_ids from memory.memory_items order by memory_id").fetchall()
    assert held == [(first, []), (second, [])]


@pytest.mark.parametrize(("mode", "threshold"), [("off", 0.9), ("merge", 1)])
def test_dedup_off_or_a_threshold_of_one_keeps_paraphrases_apart(db, mode, threshold):
    db.execute(f"set memory.memory_dedup = '{mode}'")
    db.execute(f"set memory.memory_dedup_threshold = {threshold}")
    remember(db, "The user prefers a dark theme in the editor.", kind="preference")
    assert remember(db, "The user prefers dark themes in the editor.", kind="preference")[1] == "created"
    assert merges(db) == []


def test_a_claim_said_again_with_more_confidence_raises_the_memorys(db):
    first = remember(db, "The user prefers a dark theme in the editor.", kind="preference", confidence=0.5)[0]
    remember(db, "The user prefers a dark theme in the editor.", kind="preference", confidence=0.7)
    remember(db, "In the editor, the user likes a dark theme.", kind="preference", confidence=0.9)
    remember(db, "In the editor, the user likes a dark theme!", kind="preference", confidence=0.2)
    assert db.execute("select memory_id, confidence from memory.memories").fetchall() == [(first, 0.9)]
