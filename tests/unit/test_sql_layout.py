"""sql/idempotent/ is read in the order it runs: a folder per subsystem, and no file calls a later one."""

from __future__ import annotations

import re
from pathlib import Path

import assemble
import declarations

IDEMPOTENT = Path(__file__).resolve().parents[2] / "sql" / "idempotent"
SUBSYSTEMS = {"security", "settings", "operations", "write", "graph", "curated", "lifecycle", "recall", "signals"}
DEFINED = re.compile(
    r"create\s+(?:or\s+replace\s+)?(?:function|procedure|view|type)\s+((?:memory|memory_internal)\.\w+)", re.I
)
NAMED = re.compile(r"\b((?:memory|memory_internal)\.\w+)\b")
# The one recursion: enrichment proposes curated memories, and remembering one commits its turn, which
# enrichment indexes (the turns of session 'remembered' propose nothing, so it ends there).
RECURSION = {("062-enrich.sql", "memory_internal._extract_memories")}


def code(text: str) -> str:
    """The SQL without its -- comments and '...' literals (so without messages, hints and comment texts);
    bodies in $tag$ quotes are code and stay."""
    kept, at = [], 0
    for match in re.finditer(r"--[^\n]*|'(?:[^']|'')*'", text):
        kept.append(text[at : match.start()])
        at = match.end()
    return "".join(kept) + text[at:]


def test_every_file_is_in_a_subsystems_folder_with_a_number_of_its_own():
    files = assemble.idempotent_files(IDEMPOTENT)
    assert {path.parent.name for path in files} <= SUBSYSTEMS
    assert len(files) == len([*IDEMPOTENT.rglob("*.sql"), *IDEMPOTENT.rglob("*.toml")])


def sql_of(path: Path) -> str:
    """A file's SQL as the build writes it (a declarations file's generated statements)."""
    return declarations.declaration_sql(path, IDEMPOTENT) if path.suffix == ".toml" else path.read_text()


def test_no_file_calls_a_later_one():
    """(A settings file calls nothing: the function that checks a setting's values is called once every file
    has run.)"""
    files = assemble.idempotent_files(IDEMPOTENT)
    defined_in: dict[str, int] = {}
    for position, path in enumerate(files):
        for name in DEFINED.findall(sql_of(path)):
            defined_in.setdefault(name.lower(), position)
    later = sorted(
        f"{path.parent.name}/{path.name} uses {name}, of {files[defined_in[name]].relative_to(IDEMPOTENT)}"
        for position, path in enumerate(files)
        for name in {found.lower() for found in NAMED.findall(code(sql_of(path)))}
        if defined_in.get(name, -1) > position and (path.name, name) not in RECURSION
    )
    assert later == []


def test_the_recursion_is_still_there():
    """The exception above names a call that exists (else it would hide a new one of the same name)."""
    files = {path.name: path for path in assemble.idempotent_files(IDEMPOTENT)}
    for file, name in RECURSION:
        assert name in code(files[file].read_text())


def test_code_leaves_out_comments_and_literals_but_keeps_bodies():
    text = "-- memory.a()\nselect 'memory.b()', $$ select memory.c() $$; raise 'it''s memory.d()';"
    assert NAMED.findall(code(text)) == ["memory.c"]
