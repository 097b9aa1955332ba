"""The LlamaIndex adapter (agent_memory.integrations.llama_index) under LlamaIndex's own Memory, chat engine and
agent workflow, driven by its test models (MockLLM, MockFunctionCallingLLM, MockEmbedding: no network), against
a real database as a tenant's login role."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core import Settings
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import (
    ChatMessage,
    CompletionResponse,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from llama_index.core.bridge.pydantic import Field, ValidationError
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory as ChatMemory

from agent_memory import AsyncMemory, Memory
from agent_memory.integrations.llama_index import (
    AgentMemoryBlock,
    acommit_chat_history,
    commit_chat_history,
    to_agent_memory_messages,
)

BILLING = "We decided to run the billing service on Postgres 16 with logical replication."
STAGING = "The staging cluster moves to the Frankfurt region next Monday, after the freeze."
KEYS = "Remind me to rotate the payment gateway API keys before the spring release."
HISTORY = [
    ChatMessage(role="system", content="You are the platform team's assistant."),
    ChatMessage(role="user", content=BILLING, additional_kwargs={"name": "Ana"}),
    ChatMessage(role="assistant", content="Noted: billing on Postgres 16."),
]


class RecordingLLM(MockLLM):
    """MockLLM that keeps every prompt it is given and always answers "Noted."."""

    prompts: list[str] = Field(default_factory=list)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text="Noted.")


@pytest.fixture(autouse=True)
def offline_settings() -> None:
    """LlamaIndex's defaults are OpenAI's: the test models instead."""
    Settings.llm = MockLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)


def chat_memory(block: AgentMemoryBlock, session_id: str, token_limit: int = 20) -> ChatMemory:
    """A LlamaIndex Memory whose short-term window holds about 0.7 * token_limit words."""
    return ChatMemory.from_defaults(
        session_id=session_id,
        memory_blocks=[block],
        token_limit=token_limit,
        token_flush_size=10,
        tokenizer_fn=str.split,
    )


def stored(client: Memory, session_id: str) -> list[dict[str, Any]]:
    sessions = client.export(session_id=session_id)
    return [dict(message) for session in sessions for message in session["messages"]]


def test_messages_map_roles_text_tool_calls_and_metadata() -> None:
    call = ToolCallBlock(tool_call_id="call-1", tool_name="lookup_ticket", tool_kwargs={"ticket": 42})
    messages = [
        ChatMessage(role="developer", content="Be brief."),
        ChatMessage(role="user", content="Status of 42?", additional_kwargs={"name": "Ana", "channel": "web"}),
        ChatMessage(role="assistant", blocks=[ThinkingBlock(content="look it up"), call]),
        ChatMessage(role="tool", content="open", additional_kwargs={"tool_call_id": "call-1", "session_id": "s"}),
        ChatMessage(role="chatbot", blocks=[TextBlock(text="It is"), TextBlock(text="open.")]),
    ]
    converted = [{key: value for key, value in m.items() if key != "id"} for m in to_agent_memory_messages(messages)]
    assert converted == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Status of 42?", "name": "Ana", "metadata": {"channel": "web"}},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "lookup_ticket", "arguments": '{"ticket": 42}'},
                }
            ],
            "metadata": {"omitted_blocks": ["thinking"]},
        },
        {"role": "tool", "content": "open", "tool_call_id": "call-1"},
        {"role": "assistant", "content": "It is\nopen."},
    ]


def test_openai_style_tool_calls_in_additional_kwargs_are_kept() -> None:
    call = {"id": "call-1", "type": "function", "function": {"name": "lookup_ticket", "arguments": "{}"}}
    message = ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]})
    [converted] = to_agent_memory_messages([message])
    assert (converted["content"], converted["tool_calls"], "metadata" in converted) == (None, [call], False)


def test_a_message_without_text_or_tool_calls_is_left_out() -> None:
    image = ChatMessage(role="user", blocks=[ImageBlock(url="https://example.com/a.png")])
    assert [m["content"] for m in to_agent_memory_messages([image, HISTORY[1]])] == [BILLING]


def test_ids_follow_the_history_so_a_repeated_message_is_kept() -> None:
    ok = ChatMessage(role="user", content="ok")
    ids = [m["id"] for m in to_agent_memory_messages([ok, HISTORY[2], ok])]
    assert len(set(ids)) == 3
    assert ids == [m["id"] for m in to_agent_memory_messages([ok, HISTORY[2], ok])]


def test_committing_a_history_again_adds_nothing_and_a_longer_one_only_its_new_messages(tenant_dsn: str) -> None:
    with Memory(tenant_dsn) as client:
        first = commit_chat_history(client, "chat-1", HISTORY, agent_id="bot")
        again = commit_chat_history(client, "chat-1", HISTORY, agent_id="bot")
        grown = commit_chat_history(
            client, "chat-1", [*HISTORY, ChatMessage(role="user", content=STAGING)], agent_id="bot"
        )
        assert (first.turns_added, again.turns_added, grown.turns_added) == (3, 0, 1)
        assert [m["content"] for m in stored(client, "chat-1")] == [m.content for m in HISTORY] + [STAGING]
        assert stored(client, "chat-1")[1]["name"] == "Ana"


def test_commit_chat_history_refuses_an_async_client(tenant_dsn: str) -> None:
    with pytest.raises(TypeError, match="acommit_chat_history"):
        commit_chat_history(AsyncMemory(tenant_dsn), "chat-1", HISTORY)  # type: ignore[arg-type]


def test_acommit_chat_history_commits_with_an_async_client(tenant_dsn: str) -> None:
    async def commit_twice() -> tuple[int, int]:
        async with AsyncMemory(tenant_dsn) as client:
            first = await acommit_chat_history(client, "chat-1", HISTORY, agent_id="bot")
            again = await acommit_chat_history(client, "chat-1", HISTORY, agent_id="bot")
            return first.turns_added, again.turns_added

    assert asyncio.run(commit_twice()) == (3, 0)


def test_the_block_needs_an_agent_memory_client() -> None:
    with pytest.raises(ValidationError, match="client"):
        AgentMemoryBlock(client="postgresql:///app")


def test_the_block_commits_what_memory_flushes_out_of_its_window(tenant_dsn: str) -> None:
    with Memory(tenant_dsn) as client:
        memory = chat_memory(AgentMemoryBlock(client=client, agent_id="bot", enrich="none"), "chat-1")
        memory.put_messages([ChatMessage(role="user", content=text) for text in (BILLING, STAGING, KEYS)])
        assert [m["content"] for m in stored(client, "chat-1")] == [BILLING, STAGING]
        assert [m.content for m in memory.get_all()][-1] == KEYS


def test_a_flush_after_commit_chat_history_adds_nothing_new(tenant_dsn: str) -> None:
    with Memory(tenant_dsn) as client:
        history = [ChatMessage(role="user", content=text) for text in (BILLING, STAGING, KEYS)]
        commit_chat_history(client, "chat-1", history, agent_id="bot")
        memory = chat_memory(AgentMemoryBlock(client=client, agent_id="bot", enrich="none"), "chat-1")
        memory.put_messages(history)
        assert [m["content"] for m in stored(client, "chat-1")] == [BILLING, STAGING, KEYS]


def test_commit_chat_history_after_flushes_adds_only_the_window(tenant_dsn: str) -> None:
    with Memory(tenant_dsn) as client:
        memory = chat_memory(AgentMemoryBlock(client=client, agent_id="bot", enrich="none"), "chat-1")
        memory.put_messages([ChatMessage(role="user", content=text) for text in (BILLING, STAGING, KEYS)])
        committed = commit_chat_history(client, "chat-1", memory.get_all(), agent_id="bot")
        assert committed.turns_added == 1
        assert [m["content"] for m in stored(client, "chat-1")] == [BILLING, STAGING, KEYS]


def test_a_new_chat_recalls_what_an_earlier_one_flushed_into_the_prompt(tenant_dsn: str) -> None:
    llm = RecordingLLM()
    with Memory(tenant_dsn) as client:
        block = AgentMemoryBlock(client=client, agent_id="bot", enrich="now")
        earlier = SimpleChatEngine.from_defaults(llm=llm, memory=chat_memory(block, "chat-1"))
        for text in (BILLING, STAGING, KEYS):
            earlier.chat(text)
        later = SimpleChatEngine.from_defaults(llm=llm, memory=chat_memory(block, "chat-2", token_limit=400))
        later.chat("Which Postgres version did we pick for the billing service?")
    assert "<agent_memory>" in llm.prompts[-1]
    assert f"session chat-1): {BILLING}" in llm.prompts[-1]


def test_an_async_chat_recalls_with_an_async_client(tenant_dsn: str) -> None:
    llm = RecordingLLM()

    async def chat() -> None:
        async with AsyncMemory(tenant_dsn) as client:
            block = AgentMemoryBlock(client=client, agent_id="bot", enrich="now")
            earlier = SimpleChatEngine.from_defaults(llm=llm, memory=chat_memory(block, "chat-1"))
            for text in (BILLING, STAGING, KEYS):
                await earlier.achat(text)
            later = SimpleChatEngine.from_defaults(llm=llm, memory=chat_memory(block, "chat-2", token_limit=400))
            await later.achat("Which Postgres version did we pick for the billing service?")

    asyncio.run(chat())
    assert f"session chat-1): {BILLING}" in llm.prompts[-1]


def test_turns_of_the_short_term_window_are_not_recalled_again(tenant_dsn: str) -> None:
    with Memory(tenant_dsn) as client:
        commit_chat_history(client, "chat-1", [ChatMessage(role="user", content=BILLING)], agent_id="bot", enrich="now")
        commit_chat_history(client, "chat-2", HISTORY[1:], agent_id="bot", enrich="now")
        block = AgentMemoryBlock(client=client, agent_id="bot")
        hits = asyncio.run(block.arecall("billing Postgres 16", HISTORY[1:], "chat-2"))
        assert [(hit.session_id, hit.content) for hit in hits if hit.content == BILLING] == [("chat-1", BILLING)]


def test_curated_memories_render_with_their_kind(tenant_dsn: str) -> None:
    with Memory(tenant_dsn) as client:
        client.remember("Deploys go out on Fridays only.", kind="rule", agent_id="bot")
        block = AgentMemoryBlock(client=client, agent_id="bot")
        text = asyncio.run(block.aget([ChatMessage(role="user", content="When do deploys go out?")]))
        assert "- rule: Deploys go out on Fridays only." in text.splitlines()


def test_bootstrap_context_comes_first_without_a_query(tenant_dsn: str) -> None:
    with Memory(tenant_dsn) as client:
        client.remember("Ana leads the security work.", kind="fact", agent_id="bot")
        block = AgentMemoryBlock(client=client, agent_id="bot", bootstrap_chars=2000)
        assert asyncio.run(block.aget([])) == "## Remembered\n- Ana leads the security work."


def test_a_flush_without_a_session_is_refused(tenant_dsn: str) -> None:
    with Memory(tenant_dsn) as client:
        block = AgentMemoryBlock(client=client)
        with pytest.raises(ValueError, match="no session"):
            asyncio.run(block.aput([ChatMessage(role="user", content=BILLING)]))
        remembered = AgentMemoryBlock(client=client, session_id="remembered")
        with pytest.raises(ValueError, match="session 'remembered' holds the words of curated memories"):
            asyncio.run(remembered.aput([ChatMessage(role="user", content=BILLING)]))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydantic's, from inside the agent workflow
def test_an_agent_workflow_s_tool_calls_are_committed(tenant_dsn: str) -> None:
    def lookup_ticket(ticket: int = 42) -> str:
        """The status of a support ticket."""
        return f"ticket {ticket} is open"

    async def run() -> list[ChatMessage]:
        async with AsyncMemory(tenant_dsn) as client:
            memory = chat_memory(AgentMemoryBlock(client=client, agent_id="bot"), "chat-1", token_limit=4000)
            agent = FunctionAgent(tools=[lookup_ticket], llm=MockFunctionCallingLLM())
            await agent.run("What is the status of ticket 42?", memory=memory)
            history = await memory.aget_all()
            await acommit_chat_history(client, "chat-1", history, agent_id="bot")
            return history

    asyncio.run(run())
    with Memory(tenant_dsn) as client:
        messages = stored(client, "chat-1")
    call = next(m for m in messages if m.get("tool_calls"))
    result = next(m for m in messages if m["role"] == "tool")
    assert call["tool_calls"][0]["function"] == {"name": "lookup_ticket", "arguments": '{"ticket": 42}'}
    assert (result["tool_call_id"], result["content"]) == (call["tool_calls"][0]["id"], "ticket 42 is open")
