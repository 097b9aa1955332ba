"""The client's exceptions: a few kinds a caller can act on, each keeping the server's own message."""

from __future__ import annotations

import psycopg
from psycopg import errors as pg


class AgentMemoryError(Exception):
    """Anything the database refused; the message is the server's, with its hint when it gave one."""

    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class InvalidInput(AgentMemoryError, ValueError):
    """Bad arguments: a malformed message, an unknown setting, a value out of range."""


class NotFound(AgentMemoryError, LookupError):
    """No such session, turn or agent in this tenant."""


class NotInstalled(AgentMemoryError):
    """The database has no agent_memory extension (or an older one without this function)."""


class ConnectionFailed(AgentMemoryError):
    """The database could not be reached."""


def from_psycopg(exc: psycopg.Error) -> AgentMemoryError:
    """The client exception for a driver error."""
    if "vector type not found" in str(exc):  # raised by pgvector's type registration
        return NotInstalled("the database has no vector type: is the agent_memory extension installed?")
    diag = exc.diag
    message = diag.message_primary or str(exc).strip()
    if diag.message_hint:
        message = f"{message} (hint: {diag.message_hint})"
    state = exc.sqlstate
    if isinstance(exc, pg.NoDataFound):
        return NotFound(message, state)
    if isinstance(exc, (pg.UndefinedFunction, pg.InvalidSchemaName, pg.UndefinedTable)) and "memory." in str(exc):
        return NotInstalled(f"{message}: is the agent_memory extension installed and up to date?", state)
    if isinstance(exc, (pg.DataError, pg.RaiseException, pg.InvalidParameterValue, pg.NotNullViolation)):
        return InvalidInput(message, state)
    if isinstance(exc, psycopg.OperationalError) and state is None:
        return ConnectionFailed(message, state)
    return AgentMemoryError(message, state)
