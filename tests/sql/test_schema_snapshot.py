"""sql/schema.txt is the schema a fresh install creates: every table whole, however many migrations built
it. A change to the schema changes the file in the same commit (`make schema` writes it)."""

import difflib
from pathlib import Path

from schema_snapshot import snapshot

ROOT = Path(__file__).resolve().parents[2]


def test_a_fresh_install_is_the_checked_in_schema(db):
    expected = (ROOT / "sql" / "schema.txt").read_text()
    actual = snapshot(db)
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "sql/schema.txt", "fresh"))
    assert not diff, f"the schema changed; run `make schema` and commit sql/schema.txt:\n{diff}"
