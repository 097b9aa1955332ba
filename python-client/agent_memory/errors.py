"""The client's exceptions: a few kinds a caller can act on, each keeping the server's own message and
adding, where the server cannot, what to do next."""

from __future__ import annotations

import psycopg
from psycopg import errors as pg

INSTALL = "install or update it with `agent-memory install` (or in psql: `create extension agent_memory cascade`)"
CHECK_DSN = (
    "check the connection string (`agent-memory db url` prints the local server's) and that the server is running "
    "(`agent-memory db start` starts the local one)"
)


class AgentMemoryError(Exception):
    """Anything the database refused; the message is the server's, with its hint when it gave one."""

    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class InvalidInput(AgentMemoryError, ValueError):
    """Bad arguments: a malformed message, an unknown setting, a value out of range, a malformed DSN."""


class NotFound(AgentMemoryError, LookupError):
    """No such session, turn or agent in this tenant."""


class ForgottenSession(AgentMemoryError):
    """A commit of a session memory.forget removed (pass allow_forgotten=True to store it again)."""


class NotInstalled(AgentMemoryError):
    """The database has no agent_memory extension (or an older one without this function)."""


class ConnectionFailed(AgentMemoryError):
    """The database could not be reached, or the client's pool is not open."""


def from_connect(exc: psycopg.Error) -> AgentMemoryError:
    """The client exception for a failed first connection: a malformed DSN, or a server out of reach."""
    reason = " ".join(str(exc).split())
    if isinstance(exc, psycopg.ProgrammingError) and exc.sqlstate is None:
        return InvalidInput(
            f"not a connection string ({reason}): expected postgresql://user@host:port/dbname or key=value pairs; "
            "`agent-memory db url` prints the local server's"
        )
    if isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None:
        return ConnectionFailed(f"cannot connect to the database: {reason}; {CHECK_DSN}")
    return from_psycopg(exc)


def from_psycopg(exc: psycopg.Error) -> AgentMemoryError:
    """The client exception for a driver error."""
    if "vector type not found" in str(exc):  # raised by pgvector's type registration
        return NotInstalled(f"the database has no vector type, so no agent_memory extension: {INSTALL}")
    diag = exc.diag
    message = diag.message_primary or str(exc).strip()
    if diag.message_hint:
        message = f"{message} (hint: {diag.message_hint})"
    state = exc.sqlstate
    if isinstance(exc, pg.NoDataFound):
        return NotFound(message, state)
    if isinstance(exc, pg.ObjectNotInPrerequisiteState) and "was forgotten" in message:
        return ForgottenSession(message, state)
    if isinstance(exc, (pg.UndefinedFunction, pg.InvalidSchemaName, pg.UndefinedTable)) and "memory." in str(exc):
        return NotInstalled(f"{message}: is the agent_memory extension installed and up to date? {INSTALL}", state)
    if isinstance(
        exc,
        (pg.DataError, pg.RaiseException, pg.InvalidParameterValue, pg.NotNullViolation, pg.CardinalityViolation),
    ) or (state is not None and state.startswith("P0")):  # P0003 too_many_rows, P0004 assert_failure
        return InvalidInput(message, state)
    if isinstance(exc, psycopg.OperationalError) and (state is None or state[:2] == "08" or state[:3] == "57P"):
        return ConnectionFailed(f"{message}; {CHECK_DSN}", state)  # 08: connection lost, 57P: server shut down
    if isinstance(exc, pg.InsufficientPrivilege):
        grants = "memory_tenant (its tenant's memory), memory_app (choosing the tenant) or memory_admin (settings)"
        return AgentMemoryError(f"{message}: the role needs one of {grants}; see docs/SECURITY.md", state)
    return AgentMemoryError(message, state)
