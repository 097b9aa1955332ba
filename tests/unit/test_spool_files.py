"""The spool's files without a server: one per tenant and agent, entries in order, fsynced whole, private."""

import json
import stat

from agent_memory.spool import Spool, default_directory


def test_each_tenant_and_agent_has_a_file_of_its_own_in_order(tmp_path):
    spool = Spool(tmp_path / "spool")
    for n in range(3):
        spool.add("acme", f"s{n}", [{"role": "user", "content": f"message {n}"}], {"agent_id": "bot/1"})
    assert spool.add(None, "x", [{"role": "user", "content": "hi"}], {"agent_id": None, "enrich": None}) == 1
    files = {(f.tenant, f.agent_id): f for f in spool.files()}
    assert {key: f.entries for key, f in files.items()} == {("acme", "bot/1"): 3, (None, "default"): 1}
    lines = files["acme", "bot/1"].path.read_text().splitlines()
    assert [json.loads(line)["session_id"] for line in lines] == ["s0", "s1", "s2"]
    assert json.loads(lines[0])["options"] == {"agent_id": "bot/1"}
    assert files["acme", "bot/1"].path.name == "bot%2F1.jsonl"  # a name is never a path
    assert stat.S_IMODE((tmp_path / "spool" / "acme").stat().st_mode) == 0o700


def test_the_directory_comes_from_the_environment():
    assert str(default_directory({"AGENT_MEMORY_SPOOL": "/var/spool/am"})) == "/var/spool/am"
    assert str(default_directory({"XDG_STATE_HOME": "/s"})) == "/s/agent-memory/spool"


def test_names_are_quoted_so_that_no_name_reaches_another_file(tmp_path):
    spool = Spool(tmp_path / "spool")
    for tenant, agent in [("_default", "a"), (None, "a"), ("..", "foo.rejected"), ("a/b", "")]:
        spool.add(tenant, "s", [{"role": "user", "content": "hi"}], {"agent_id": agent})
    assert {(f.tenant, f.agent_id, f.entries) for f in spool.files()} == {
        ("_default", "a", 1),
        (None, "a", 1),
        ("..", "foo.rejected", 1),
        ("a/b", "default", 1),
    }
    assert all(path.parent.parent == tmp_path / "spool" for path in (tmp_path / "spool").glob("*/*.jsonl"))
    assert stat.S_IMODE((tmp_path / "spool").stat().st_mode) == 0o700


def test_a_line_cut_short_stays_apart_from_the_next_entry(tmp_path):
    spool = Spool(tmp_path)
    spool.add(None, "s1", [{"role": "user", "content": "a\u2028b"}], {})  # a line break JSON keeps in a string
    (file,) = spool.files()
    with file.path.open("a") as cut:
        cut.write('{"spooled_at": "2026')
    assert spool.add(None, "s2", [{"role": "user", "content": "c"}], {}) == 3
    lines = file.path.read_text().split("\n")
    assert json.loads(lines[0])["messages"][0]["content"] == "a\u2028b"
    assert lines[1] == '{"spooled_at": "2026' and json.loads(lines[2])["session_id"] == "s2"
