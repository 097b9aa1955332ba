"""Retention archives: export records as gzipped JSON lines, the file `agent-memory import jsonl` reads back.

gzip_lines(lines) returns the bytes of a gzip file with one line per record. The header carries no time or
name (mtime 0), so the same records always give the same bytes and the archive's sha256 identifies them.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable


def gzip_lines(lines: Iterable[str]) -> bytes:
    """Each text as one line (a line break inside one is an error: JSON text has none), gzipped."""
    body = []
    for number, line in enumerate(lines, start=1):
        if "\n" in line or "\r" in line:
            raise ValueError(f"line {number} has a line break inside it")
        body.append(line + "\n")
    return gzip.compress("".join(body).encode("utf-8"), mtime=0)
