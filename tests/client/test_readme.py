"""The README's SQL and Python tours run as written (against a fresh database)."""

import re
import subprocess
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def block(heading, language):
    section = README.split(heading, 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert match, f"no {language} block after {heading}"
    return match.group(1)


def test_the_sql_tour_runs(dsn):
    result = subprocess.run(
        ["psql", "-X", "-v", "ON_ERROR_STOP=1", dsn], input=block("### In SQL", "sql"), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "Ana" in result.stdout and "trust_after" in result.stdout


def test_the_python_tour_runs(dsn, capsys):
    code = block("### In Python", "python").replace('"postgresql:///app"', repr(dsn))
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "Ana: We decided to use Postgres for the auth service." in printed
    assert "assistant: Noted. I still need to set up row level security" in printed
    assert "\n## Open loops\n- I still need to set up row level security next week. (chat-1, " in printed
