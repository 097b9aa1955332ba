"""No hand-written function is over 120 lines (issue 27): a function that long does several things, and each
should have a name."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOST = 120
GENERATED = {"python-client/agent_memory/methods.py"}


def sql_functions() -> dict[str, int]:
    lengths = {}
    for path in sorted((ROOT / "sql" / "idempotent").rglob("*.sql")):
        pattern = r"create or replace (?:function|procedure) ([\w.]+)\(.*?as (\$\w*\$)(.*?)\2"
        for match in re.finditer(pattern, path.read_text(), re.S):
            lengths[match.group(1)] = match.group(0).count("\n") + 1
    return lengths


def python_functions() -> dict[str, int]:
    lengths = {}
    for folder in ("python-client/agent_memory", "plpython/agent_memory_db", "python-client/tools", "extension/tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if name in GENERATED:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno:
                    lengths[f"{name}:{node.name}"] = node.end_lineno - node.lineno + 1
    return lengths


def test_no_function_is_over_120_lines():
    lengths = sql_functions() | python_functions()
    assert len(lengths) > 300
    assert {name: lines for name, lines in lengths.items() if lines > MOST} == {}, "split these"
