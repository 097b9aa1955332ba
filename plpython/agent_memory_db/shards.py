"""A statement's tables named by a Citus node's shards of them (memory_internal._on_local_shards).

renamed(statement, names) replaces each schema-qualified name of the extension's schemas that names maps (for
example memory.turns to memory.turns_102008) wherever the whole name stands, in one pass: not where it begins a
longer name (memory.turns in memory.turns_archive), and not again in a name it put there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_QUALIFIED = re.compile(r"\b(?:memory|memory_internal)\.[A-Za-z_][A-Za-z0-9_$]*")


def renamed(statement: str, names: Mapping[str, str]) -> str:
    """The statement with each qualified name in names replaced by what it maps to."""
    return _QUALIFIED.sub(lambda found: names.get(found.group(0), found.group(0)), statement)
