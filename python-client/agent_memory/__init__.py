"""Thin Python client for agent_memory: long-term memory for AI agents inside PostgreSQL."""

__version__ = "0.2.0"
