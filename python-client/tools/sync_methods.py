"""Writes agent_memory/methods.py, Memory's methods, from agent_memory/async_methods.py, AsyncMemory's.

The API is written once, for asyncio; the synchronous client's is the same text without async and await,
formatted by ruff as the rest of the code. tests/unit/test_sync_methods.py fails when methods.py is not what
this writes.

    python3 python-client/tools/sync_methods.py      (or: make client)
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python-client" / "agent_memory"
SOURCE = PACKAGE / "async_methods.py"
TARGET = PACKAGE / "methods.py"

HEADER = '''"""The methods of Memory, one per SQL function. Generated from agent_memory/async_methods.py by
python-client/tools/sync_methods.py (`make client`): edit that file, not this one.
"""
'''

# What differs between the two: the words of asyncio, and the class names.
REPLACEMENTS = [
    (r"\basync def ", "def "),
    (r"\bawait ", ""),
    (r"\bAsyncMethods\b", "Methods"),
    (r"\bAsyncMemory\b", "Memory"),
]


class NotAsyncMethods(Exception):
    """The source holds what a text substitution cannot carry over (async with, async for, an async iterator)."""


def sync_methods(source: str) -> str:
    """methods.py's text for async_methods.py's."""
    for construct in ("async with", "async for", "AsyncIterator", "asynccontextmanager"):
        if construct in source:
            raise NotAsyncMethods(f"async_methods.py uses {construct}: keep that in AsyncMemory itself")
    docstring = re.match(r'"""(?:.|\n)*?"""\n', source)
    if docstring is None:
        raise NotAsyncMethods("async_methods.py must start with its docstring")
    text = HEADER + source[docstring.end() :]
    for pattern, replacement in REPLACEMENTS:
        text = re.sub(pattern, replacement, text)
    return _formatted(text)


def _formatted(text: str) -> str:
    """The text as ruff formats methods.py (shorter lines without async may fit on one)."""
    command = [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET.relative_to(ROOT)), "-"]
    done = subprocess.run(command, input=text, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise NotAsyncMethods(f"ruff could not format the generated methods: {done.stderr.strip()}")
    return done.stdout


def main() -> int:
    TARGET.write_text(sync_methods(SOURCE.read_text()))
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
