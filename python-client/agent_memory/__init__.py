"""Thin Python client for agent_memory: long-term memory for AI agents inside PostgreSQL."""

from agent_memory.async_client import AsyncMemory
from agent_memory.client import Memory
from agent_memory.errors import AgentMemoryError, ConnectionFailed, InvalidInput, NotFound, NotInstalled
from agent_memory.results import (
    AgentStats,
    Bootstrap,
    BootstrapItem,
    Candidate,
    Committed,
    ContextItem,
    Enriched,
    Feedback,
    Forgotten,
    Health,
    Hit,
    Remembered,
    TaskContext,
    Worked,
)

__version__ = "0.3.0"

__all__ = [
    "AgentMemoryError",
    "AgentStats",
    "AsyncMemory",
    "Bootstrap",
    "BootstrapItem",
    "Candidate",
    "Committed",
    "ConnectionFailed",
    "ContextItem",
    "Enriched",
    "Feedback",
    "Forgotten",
    "Health",
    "Hit",
    "InvalidInput",
    "Memory",
    "NotFound",
    "NotInstalled",
    "Remembered",
    "TaskContext",
    "Worked",
]
