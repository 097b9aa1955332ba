"""Adapters of agent_memory to the seams for memory of agent frameworks, each a thin class over the client
(Memory or AsyncMemory) installed with its extra: langgraph, openai-agents, pydantic-ai, llama-index.
docs/integrations.md says how to adopt each, what maps to what and what is not supported."""
