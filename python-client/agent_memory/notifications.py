"""What memory.notification_channel() carries, read: a commit's new turns (event "session") and a memory
remembered, shared or unshared (event "memory"), sent when the writing transaction commits. The client's
subscribe() and `agent-memory watch` read them through these functions."""

from __future__ import annotations

import json
from typing import Any

from psycopg import sql

from .results import Notification

LISTEN = "select memory.notification_channel()"


def listen(channel: str) -> sql.Composed:
    """LISTEN on a channel (a name memory.notification_channel() gave, quoted as an identifier)."""
    return sql.SQL("listen {}").format(sql.Identifier(channel))


def parse(payload: str) -> Notification:
    """One notification's payload as a Notification; a payload that is not one (another sender on the
    channel) is an error naming it."""
    try:
        event: dict[str, Any] = json.loads(payload)
        return Notification(
            event=event["event"],
            agent_id=event["agent_id"],
            shared=bool(event["shared"]),
            session_id=event.get("session_id"),
            turns=event.get("turns"),
            memory_id=event.get("memory_id"),
            kind=event.get("kind"),
            outcome=event.get("outcome"),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not an agent_memory notification: {payload[:200]!r}") from exc


def read(payload: str) -> Notification | None:
    """A payload as a Notification, or None for one that is not (any role may NOTIFY on a channel it can name:
    a subscriber goes on past it)."""
    try:
        return parse(payload)
    except ValueError:
        return None


def wanted(event: Notification, agent_id: str | None, shared_only: bool) -> bool:
    """Whether a subscriber sees an event: for an agent, its own and what the other agents share (shared_only:
    only those); for no agent, every event of the tenant (shared_only: only what is shared)."""
    # A memory no longer shared is news to the agents that saw it.
    fleet = event.shared or event.outcome == "unshared"
    if shared_only:
        return fleet and event.agent_id != agent_id
    return fleet or agent_id in (None, event.agent_id)


def describe(event: Notification) -> str:
    """One line for `agent-memory watch`."""
    shared = " (shared)" if event.shared else ""
    if event.event == "session":
        turns = f"{event.turns} turn" + ("" if event.turns == 1 else "s")
        return f"{event.agent_id}: {turns} in session {event.session_id}{shared}"
    return f"{event.agent_id}: memory {event.memory_id} ({event.kind}) {event.outcome}{shared}"
