"""The first hour of a new user, as issue 14 reported it: each test is one of its nine items, run the way
the user ran it (the client, the agent-memory command, the MCP server over stdio, psql), and failed
before the fix. The detailed behaviour of each part is tested beside it (test_memory, test_cli,
test_hooks, test_mcp, test_typing, tests/sql)."""

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SERVER
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from psycopg.types.json import Json

from agent_memory import AsyncMemory, ConnectionFailed, InvalidInput, Memory, NotInstalled

BIN = Path(sys.executable).parent
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CODING_SESSION = [
    {
        "role": "user",
        "content": "Migrate the DB layer from SQLAlchemy 1.4 to 2.0 and replace query.get with Session.get.",
    },
    {
        "role": "assistant",
        "content": "Running the migration test first.",
        "tool_calls": [{"function": {"name": "Bash", "arguments": '{"command": "pytest -q tests/test_models.py"}'}}],
    },
    {
        "role": "tool",
        "content": 'psycopg.errors.FeatureNotSupported: NULLS NOT DISTINCT is not supported for index "users_email"',
    },
    {"role": "assistant", "content": "Pinned httpx==0.27 and the docs job passes."},
    {"role": "assistant", "content": "I bumped the image to postgres:16 in .github/workflows/ci.yml for the tests."},
]


def cli(*args, cwd=None, env=None):
    environment = {**os.environ, **(env or {})}
    return subprocess.run([str(BIN / "agent-memory"), *args], capture_output=True, text=True, cwd=cwd, env=environment)


def mcp_calls(dsn, *calls):
    async def session():
        server = StdioServerParameters(command=str(BIN / "agent-memory"), args=["--dsn", dsn, "mcp"])
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            started = await client.initialize()
            return started, [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(asyncio.wait_for(session(), timeout=120))


def test_1_a_remembered_fact_is_found_by_the_next_recall_over_mcp(dsn):
    _, (remembered, recalled) = mcp_calls(
        dsn,
        ("remember", {"content": "The CI must test against Postgres 16.", "kind": "rule"}),
        ("recall", {"query": "which postgres version must CI test?"}),
    )
    assert not remembered.is_error
    assert recalled.structured_content["hits"][0]["content"] == "The CI must test against Postgres 16."


def test_1_and_in_sql_within_the_same_transaction(db):
    db.execute("select * from memory.remember('The CI must test against Postgres 16.', kind => 'rule')")
    (first,) = db.execute("select content from memory.recall('which postgres version must CI test?', k => 1)")
    assert first == ("The CI must test against Postgres 16.",)


def test_2_summaries_of_code_conversations_keep_versions_names_and_paths_whole(dsn):
    with Memory(dsn) as memory:
        memory.commit("chat-sqla", CODING_SESSION, agent_id="coder", enrich="now")
        text = memory.bootstrap(agent_id="coder").text()
    assert "from SQLAlchemy 1.4 to 2.0 and replace query.get with Session.get." in text
    assert "Pinned httpx==0.27 and the docs job passes." in text
    assert "postgres:16 in .github/workflows/ci.yml for the tests." in text


def test_3_an_exact_error_from_a_tool_result_finds_that_tool_turn_first(dsn):
    with Memory(dsn) as memory:
        memory.commit("chat-sqla", CODING_SESSION, agent_id="coder", enrich="now")
        hits = memory.recall("NULLS NOT DISTINCT", agent_id="coder")
        command = memory.recall("pytest -q tests/test_models.py", agent_id="coder")
    assert (hits[0].role, hits[0].content) == ("tool", CODING_SESSION[2]["content"])
    assert command[0].content == "Running the migration test first."  # its tool call's arguments


def test_3_changing_what_is_indexed_says_so_and_reindex_queues_the_sessions(db):
    db.execute("select * from memory.commit('s1', %s, enrich => 'now')", (Json(CODING_SESSION),))
    notices = []
    db.add_notice_handler(lambda notice: notices.append(notice.message_primary))
    db.execute("""insert into memory.config (key, value) values ('index_roles', '["user", "assistant"]')""")
    assert notices == ["agent_memory: index setting index_roles changed: sessions enriched before keep their old index"]
    assert db.execute("select * from memory.reindex()").fetchone() == (1, 1)
    db.commit()
    db.autocommit = True
    db.execute("call memory.work(10)")
    roles = db.execute("select distinct t.role from memory.chunks join memory.turns t using (tenant_id, turn_id)")
    assert sorted(role for (role,) in roles) == ["assistant", "user"]


def test_4_the_command_finds_the_local_server_from_any_directory(tmp_path, db):
    env = {key: value for key, value in os.environ.items() if key != "AGENT_MEMORY_HOME"}
    result = subprocess.run(
        [str(BIN / "agent-memory"), "db", "url", "--dbname", "postgres"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0 and result.stderr == ""
    assert f"host={SERVER.socket_dir}&port={SERVER.port}" in result.stdout
    assert subprocess.run(["psql", result.stdout.strip(), "-c", "select 1"], capture_output=True).returncode == 0


def test_5_a_type_checker_sees_the_client_from_a_users_directory(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(
        "from agent_memory import Memory\n"
        "with Memory() as memory:\n"
        "    hits = memory.recall('docker', level='turn')\n"
        "    reveal_type(hits[0].score)\n"
        "    memory.recall('docker', level='sessions')\n"
    )
    result = subprocess.run([str(BIN / "mypy"), "--strict", script.name], capture_output=True, text=True, cwd=tmp_path)
    assert 'Revealed type is "float"' in result.stdout
    assert re.search(r"agent\.py:5: error: .*\"level\"", result.stdout), result.stdout


def test_6_one_agent_rule_and_errors_that_say_what_to_do(dsn, monkeypatch):
    with Memory(dsn) as memory:
        memory.commit("chat-sqla", CODING_SESSION[:1], agent_id="coder")
        assert memory.forget("chat-sqla").turns_removed == 1
    monkeypatch.setenv("DATABASE_URL", dsn)
    with Memory() as memory:
        assert memory.stats() == []
    with pytest.raises(ConnectionFailed, match="async with AsyncMemory"):
        asyncio.run(AsyncMemory(dsn).recall("x"))
    with pytest.raises(InvalidInput, match="agent-memory db url"):
        Memory("not a dsn")
    with pytest.raises(ConnectionFailed, match="agent-memory db start"):
        Memory("postgresql://postgres@/x?host=/nonexistent&port=1")


def test_6_a_database_without_the_extension_says_how_to_install_it(bare_db):
    info = bare_db.info
    dsn = f"postgresql://{info.user}@/{info.dbname}?host={info.host}&port={info.port}"
    with Memory(dsn) as memory, pytest.raises(NotInstalled, match="agent-memory install"):
        memory.stats()


def test_7_options_after_the_command_wrong_formats_and_missing_files(dsn, tmp_path):
    with Memory(dsn) as memory:
        memory.commit("chat-docker", [{"role": "user", "content": "The docker image builds in CI now."}], enrich="now")
    recalled = cli("recall", "docker", "--json", "--dsn", dsn)
    assert recalled.returncode == 0 and json.loads(recalled.stdout)[0]["session_id"] == "chat-docker"
    wrong = cli("--dsn", dsn, "import", "jsonl", str(FIXTURES / "claude-code-session.jsonl"))
    assert wrong.returncode == 1 and len(wrong.stderr.splitlines()) == 1
    assert "agent-memory import claude-code" in wrong.stderr
    missing = cli("--dsn", dsn, "import", "jsonl", str(tmp_path / "chats.jsonl"))
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "chats.jsonl" in missing.stderr
    assert "Errno" not in missing.stderr
    table = cli("--dsn", dsn, "recall", "docker")
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", table.stdout), table.stdout


def test_8_mcp_answers_compactly_with_a_version_and_the_missing_tools(dsn):
    with Memory(dsn) as memory:
        memory.commit("chat-sqla", CODING_SESSION, agent_id="coder", enrich="now")
    started, (recalled, explained) = mcp_calls(
        dsn, ("recall", {"query": "postgres image in CI", "k": 3}), ("explain_recall", {"query": "postgres image"})
    )
    assert started.server_info.version not in ("", None)
    answer = recalled.content[0].text
    assert answer.count(json.dumps(recalled.structured_content["sessions"]["chat-sqla"])) == 1
    assert "null" not in answer and '"score"' not in answer
    assert not explained.is_error


def test_9_psql_names_an_unknown_setting_and_a_bad_value_in_one_short_error(dsn):
    typo = subprocess.run(
        ["psql", dsn, "-c", "set memory.wieght_dense = 1", "-c", "select count(*) from memory.recall('x')"],
        capture_output=True,
        text=True,
    )
    assert (
        "ERROR:  agent_memory: unknown setting memory.wieght_dense (did you mean memory.weight_dense?)" in typo.stderr
    )
    bad = subprocess.run(
        ["psql", dsn, "-c", "set memory.weight_dense = 'abc'", "-c", "select count(*) from memory.recall('x')"],
        capture_output=True,
        text=True,
    )
    assert "ERROR:  agent_memory: setting memory.weight_dense must be a JSON number, got abc" in bad.stderr
    assert len(bad.stderr.splitlines()) <= 8 and "array_agg" not in bad.stderr  # no statement text in CONTEXT


def test_9_df_memory_lists_the_public_api_only(dsn):
    listed = subprocess.run(["psql", dsn, "-Atc", r"\df memory.*"], capture_output=True, text=True).stdout
    names = {line.split("|")[1] for line in listed.splitlines()}
    assert names and not {name for name in names if name.startswith("_") or name.startswith("signal_")} - {
        "signal_definitions"
    }
    assert {"recall", "commit", "remember", "forget", "reindex", "explain_recall"} <= names
