"""A user's script, outside the repository, type-checks against the installed client: mypy finds the
package through the virtualenv's install, sees every result's type (no Any), and refuses values outside
the closed sets the SQL functions check."""

import os
import re
import subprocess
from pathlib import Path

import pytest

MYPY = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "mypy"  # the project's virtualenv (make provision)

GOOD = """\
import asyncio
from datetime import datetime

from agent_memory import (
    AgentMemoryError,
    AsyncMemory,
    ConnectionFailed,
    Enrich,
    ExportedSession,
    Hit,
    InvalidInput,
    Kind,
    Level,
    Memory,
    NotFound,
    NotInstalled,
)


def use(memory: Memory, kind: Kind, level: Level, enrich: Enrich) -> list[str]:
    messages = [{"role": "user", "content": "We moved auth to Postgres.", "id": "m1"}]
    committed = memory.commit(
        "chat-1", messages, agent_id="bot", enrich=enrich, started_at=datetime(2025, 1, 1), metadata={"tags": ["a"]}
    )
    added: int = committed.turns_added
    reveal_type(memory.recall("auth"))
    hits: list[Hit] = memory.recall("auth", k=3, level=level, entity_mode="all", weights={"weight_dense": 0.5})
    ranks = [hit.components["signals"]["dense"].get("rank") for hit in hits]
    remembered = memory.remember("Ana leads security.", kind=kind, metadata={"by": "Ana"}, enrich="queue")
    outcome: str = remembered.outcome
    text: str = memory.bootstrap(max_chars=2000).text()
    sessions: list[ExportedSession] = memory.export(agent_id="bot")
    for session in sessions:
        contents: list[str] = [message["content"] for message in session["messages"]]
        memory.commit(
            session["session_id"],
            session["messages"],
            agent_id=session["agent_id"],
            source=session.get("source"),
            started_at=session["started_at"],
            metadata=session["metadata"],
        )
    jobs: int = memory.reindex(agent_id="bot").jobs
    try:
        removed: int = memory.forget("chat-1").turns_removed
    except NotFound as exc:
        state: str | None = exc.sqlstate
    except (InvalidInput, NotInstalled, ConnectionFailed) as exc:
        print(f"{exc}: {exc.sqlstate}")
    return [hit.content for hit in hits] + [text, str(added), outcome, str(jobs), str(ranks)]


async def use_async(dsn: str) -> int:
    async with AsyncMemory(dsn, tenant="acme") as memory:
        await memory.commit("chat-1", [{"role": "user", "content": "hi"}], enrich="none")
        hits: list[Hit] = await memory.recall("hi", level="session")
        fact = await memory.remember("Deploys on Fridays.", kind="rule")
        exported: list[ExportedSession] = await memory.export()
        await memory.reindex(session_id="chat-1")
        try:
            return (await memory.forget("chat-1", agent_id="bot")).turns_removed + len(hits) + len(exported)
        except AgentMemoryError:
            return fact.turn_id


print(asyncio.run(use_async("postgresql:///app")))
"""

BAD = """\
from agent_memory import AsyncMemory, Memory


def wrong(memory: Memory) -> None:
    memory.recall("auth", level="sessions")  # level
    memory.commit("chat-1", [], enrich="later")  # enrich
    memory.remember("Ana leads security.", kind="facts")  # kind


async def wrong_async(memory: AsyncMemory) -> None:
    await memory.explain_recall("auth", entity_mode="every")  # entity_mode
"""


def mypy(directory: Path, script: str) -> subprocess.CompletedProcess[str]:
    """mypy --strict on a script in a directory of its own: only the virtualenv's install can be found."""
    path = directory / "script.py"
    path.write_text(script)
    env = {key: value for key, value in os.environ.items() if key not in ("MYPYPATH", "PYTHONPATH")}
    command = [str(MYPY), "--strict", "--disallow-any-expr", "--no-error-summary", "--cache-dir", "cache", path.name]
    return subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("user-script")


def test_a_users_script_sees_every_type_of_the_installed_client(directory):
    result = mypy(directory, GOOD)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'Revealed type is "list[agent_memory.results.Hit]"' in result.stdout


def test_values_outside_the_closed_sets_are_type_errors_on_their_lines(directory):
    result = mypy(directory, BAD)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = BAD.splitlines()
    for value, marker in [
        ("sessions", "# level"),
        ("later", "# enrich"),
        ("facts", "# kind"),
        ("every", "# entity_mode"),
    ]:
        number = next(i for i, line in enumerate(lines, 1) if line.endswith(marker))
        pattern = rf"^script\.py:{number}: error: .*\"Literal\['{value}'\]\""
        assert re.search(pattern, result.stdout, re.MULTILINE), result.stdout
