"""The extension installed in a database against the one on the server's disk: what `agent-memory db status`
says and what `agent-memory db upgrade` applies. Read from PostgreSQL's catalogs, so it works whatever version
is installed (memory.health() says the same from 0.4.0 on)."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

# memory_internal._extension_update() asks the same of the catalogs; it is not called here because an install
# older than 0.4.0 does not have it, and this must answer for any installed version (or none).
STATE = """
select e.extversion, a.default_version, (
    select p.path from pg_catalog.pg_extension_update_paths('agent_memory') as p
    where p.source = e.extversion and p.target = a.default_version
)
from pg_catalog.pg_available_extensions as a
left join pg_catalog.pg_extension as e on e.extname = a.name
where a.name = 'agent_memory'
"""

# The extensions the version on disk requires that the database does not have. CREATE EXTENSION ... CASCADE
# makes them; ALTER EXTENSION ... UPDATE refuses instead (0.4.0 requires btree_gin, which 0.3.0 did not).
MISSING_REQUIRED = """
select r.name from pg_catalog.pg_available_extensions as a
inner join pg_catalog.pg_available_extension_versions as v on v.name = a.name and v.version = a.default_version
cross join lateral unnest(v.requires) as r (name)
where a.name = 'agent_memory' and not exists (select from pg_catalog.pg_extension as e where e.extname = r.name)
order by r.name
"""


@dataclass(frozen=True)
class ExtensionState:
    database: str
    on_disk: bool  # the server has the extension's files
    installed: str | None  # None: not installed in the database
    available: str | None  # the version on disk (its control file's default_version)
    path: str | None  # the versions an update goes through, "0.3.0--0.4.0"; None when none

    @property
    def pending(self) -> bool:
        """An update to apply: the installed version is not the one on disk and a path leads there."""
        return self.installed is not None and self.installed != self.available and self.path is not None

    def describe(self) -> str:
        if not self.on_disk:
            return f"agent_memory is not on this server's disk (database {self.database}): run `make install`"
        if self.installed is None:
            return f"agent_memory {self.available} is on disk, not installed in database {self.database}: " + (
                "`agent-memory install`"
            )
        if self.installed == self.available:
            return f"agent_memory {self.installed} is installed in database {self.database}, the version on disk"
        if self.path is None:
            return (
                f"agent_memory {self.installed} is installed in database {self.database} and {self.available} is on"
                " disk, with no update path between them"
            )
        return (
            f"agent_memory {self.installed} is installed in database {self.database} and {self.available} is on disk:"
            " `agent-memory db upgrade` (alter extension agent_memory update, after creating the extensions it"
            f" requires) applies {self.steps()}"
        )

    def steps(self) -> str:
        return (self.path or "").replace("--", " -> ")


def extension_state(conn: psycopg.Connection) -> ExtensionState:
    row = conn.execute(STATE).fetchone()
    database = conn.info.dbname
    if row is None:
        return ExtensionState(database, False, None, None, None)
    return ExtensionState(database, True, *row)


def upgrade(conn: psycopg.Connection) -> tuple[ExtensionState, ExtensionState]:
    """ALTER EXTENSION agent_memory UPDATE when an update is pending, after creating the extensions the new version
    requires that the database lacks: the state before and after."""
    before = extension_state(conn)
    if before.pending:
        for (name,) in conn.execute(MISSING_REQUIRED).fetchall():
            conn.execute(sql.SQL("create extension if not exists {} cascade").format(sql.Identifier(name)))
        conn.execute("alter extension agent_memory update")
    return before, extension_state(conn)
