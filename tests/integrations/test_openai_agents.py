"""AgentMemorySession, the OpenAI Agents SDK's Session over agent_memory: the cases SQLiteSession is held to
(order, limit, pop, clear, empty, items of every kind) against a real database as a tenant's login role, and
Runner.run resuming a conversation from agent_memory with a scripted model (no network)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.memory import Session, SessionSettings
from agents.run_config import CallModelData, ModelInputData
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from agent_memory import AsyncMemory, Memory
from agent_memory.integrations.openai_agents import CONTEXT_TITLE, ITEM_KEY, AgentMemorySession

USER = {"role": "user", "content": "What is the weather in Lisbon today?"}
ASSISTANT = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Let me look that up.", "annotations": []}],
}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city": "Lisbon"}',
    "status": "completed",
}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 24 degrees"}
REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "The user asks for the weather: call get_weather."}],
}
ITEMS = [USER, REASONING, ASSISTANT, CALL, OUTPUT]


def numbered(n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"message {i}"} for i in range(n)]


def run(dsn: str, scenario: Any, session_id: str = "chat-1", **options: Any) -> Any:
    """scenario(session, memory) over a new AsyncMemory and AgentMemorySession."""

    async def main() -> Any:
        async with AsyncMemory(dsn) as memory:
            return await scenario(AgentMemorySession(session_id, memory, **options), memory)

    return asyncio.run(asyncio.wait_for(main(), timeout=120))


def test_it_is_a_session_of_the_sdk(tenant_dsn):
    assert run(tenant_dsn, lambda session, memory: asyncio.sleep(0, isinstance(session, Session)))


def test_items_of_every_kind_come_back_unchanged(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items(copy.deepcopy(ITEMS))
        return await session.get_items()

    assert run(tenant_dsn, scenario) == ITEMS


def test_each_item_is_a_turn_with_its_words(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items(copy.deepcopy(ITEMS))
        return (await memory.export(session_id="chat-1", agent_id="default"))[0]["messages"]

    turns = run(tenant_dsn, scenario)
    assert [(t["role"], t["content"]) for t in turns] == [
        ("user", USER["content"]),
        ("assistant", "The user asks for the weather: call get_weather."),
        ("assistant", "Let me look that up."),
        ("assistant", ""),
        ("tool", "Sunny, 24 degrees"),
    ]
    assert turns[3]["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'}}
    ]
    assert turns[4]["tool_call_id"] == "call_1"
    assert [t["metadata"][ITEM_KEY] for t in turns] == ITEMS
    assert len({t["id"] for t in turns}) == 5


def test_items_keep_their_order_across_adds(tenant_dsn):
    async def scenario(session, memory):
        for item in numbered(4):
            await session.add_items([item])
        return await session.get_items()

    assert run(tenant_dsn, scenario) == numbered(4)


def test_the_same_item_added_twice_is_two_items(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items([USER])
        await session.add_items([USER])
        return await session.get_items()

    assert run(tenant_dsn, scenario) == [USER, USER]


def test_limit_returns_the_latest_items_in_order(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items(numbered(5))
        return [await session.get_items(limit=n) for n in (2, 1, 5, 9, 0)]

    items = numbered(5)
    assert run(tenant_dsn, scenario) == [items[3:], items[4:], items, items, []]


def test_a_negative_limit_is_refused(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items(numbered(2))
        with pytest.raises(ValueError, match="limit must be None or a whole number >= 0, got -1"):
            await session.get_items(limit=-1)
        return await session.get_items(limit=1)

    assert run(tenant_dsn, scenario) == numbered(2)[1:]


def test_session_settings_limit_is_the_default_limit(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items(numbered(3))
        return await session.get_items(), await session.get_items(limit=3)

    latest, every = run(tenant_dsn, scenario, session_settings=SessionSettings(limit=2))
    assert latest == numbered(3)[1:] and every == numbered(3)


def test_an_empty_session_has_no_items_and_nothing_to_pop_or_clear(tenant_dsn):
    async def scenario(session, memory):
        return await session.get_items(), await session.get_items(limit=3), await session.pop_item()

    assert run(tenant_dsn, scenario) == ([], [], None)
    assert run(tenant_dsn, lambda session, memory: session.clear_session()) is None


def test_pop_returns_the_latest_item_and_removes_it(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items(copy.deepcopy(ITEMS))
        popped = await session.pop_item()
        return popped, await session.get_items()

    assert run(tenant_dsn, scenario) == (OUTPUT, ITEMS[:-1])


def test_pop_empties_the_session_newest_first(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items(numbered(3))
        popped = [await session.pop_item() for _ in range(4)]
        await session.add_items([USER])
        return popped, await session.get_items()

    popped, left = run(tenant_dsn, scenario)
    assert popped == [*reversed(numbered(3)), None]
    assert left == [USER]


def test_clear_removes_every_item_and_the_session_takes_new_ones(tenant_dsn):
    async def scenario(session, memory):
        await session.add_items(copy.deepcopy(ITEMS))
        await session.clear_session()
        cleared = await session.get_items()
        await session.add_items([USER])
        return cleared, await session.get_items()

    assert run(tenant_dsn, scenario) == ([], [USER])


def test_sessions_and_agents_are_kept_apart(tenant_dsn):
    async def scenario(session, memory):
        other_session = AgentMemorySession("chat-2", memory)
        other_agent = AgentMemorySession("chat-1", memory, agent_id="other-bot")
        await session.add_items([USER])
        await other_session.add_items([OUTPUT])
        await other_agent.add_items([CALL])
        await other_agent.clear_session()
        return [await s.get_items() for s in (session, other_session, other_agent)]

    assert run(tenant_dsn, scenario) == [[USER], [OUTPUT], []]


def test_turns_committed_otherwise_come_back_as_messages(tenant_dsn):
    async def scenario(session, memory):
        await memory.commit(
            "chat-1",
            [
                {"role": "user", "content": "Book a table."},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "type": "function"}]},
                {"role": "tool", "content": "booked", "tool_call_id": "t1"},
                {"role": "assistant", "content": "Done."},
            ],
        )
        return await session.get_items(), await session.pop_item(), await session.pop_item()

    items, last, before = run(tenant_dsn, scenario)
    assert items == [
        {"role": "user", "content": "Book a table."},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "Done."},
    ]
    assert (last, before) == ({"role": "assistant", "content": "Done."}, {"role": "assistant", "content": ""})


@pytest.mark.parametrize(
    ("session_id", "options", "problem"),
    [
        ("", {}, "session_id must be a non-empty string, got ''"),
        ("chat-1", {"agent_id": " "}, "agent_id must be a non-empty string, got ' '"),
        ("chat-1", {"enrich": "later"}, "enrich must be one of queue, now, none, got 'later'"),
        ("remembered", {}, "session 'remembered' holds the words of curated memories, not a conversation"),
    ],
)
def test_bad_arguments_are_refused_by_name(tenant_dsn, session_id, options, problem):
    async def scenario(session, memory):
        return session.session_id

    assert run(tenant_dsn, scenario) == "chat-1"
    with pytest.raises(ValueError) as refused:
        run(tenant_dsn, scenario, session_id=session_id, **options)
    assert str(refused.value) == problem


def test_a_sync_memory_is_refused(tenant_dsn):
    with Memory(tenant_dsn) as memory, pytest.raises(TypeError, match="memory must be an AsyncMemory"):
        AgentMemorySession("chat-1", memory)  # type: ignore[arg-type]


def test_an_item_that_is_not_a_dict_is_refused_and_nothing_is_stored(tenant_dsn):
    async def scenario(session, memory):
        with pytest.raises(ValueError, match="item 1 is not a dict"):
            await session.add_items([USER, "hello"])
        await session.add_items([])
        return await session.get_items()

    assert run(tenant_dsn, scenario) == []


class ScriptedModel(Model):
    """A Model that answers with the scripted outputs in turn and records the input of every call."""

    def __init__(self, outputs: list[Any]) -> None:
        self.outputs = list(outputs)
        self.inputs: list[Any] = []
        self.instructions: list[str | None] = []

    async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(copy.deepcopy(input))
        self.instructions.append(system_instructions)
        return ModelResponse(output=[self.outputs.pop(0)], usage=Usage(), response_id=None)

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the tests do not stream")
        yield


def said(text: str, n: int) -> ResponseOutputMessage:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return ResponseOutputMessage(id=f"msg_{n}", type="message", role="assistant", status="completed", content=content)


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def test_a_second_run_resumes_the_conversation_from_agent_memory(tenant_dsn):
    set_tracing_disabled(True)
    call = ResponseFunctionToolCall(
        type="function_call", id="fc_1", call_id="call_1", name="get_weather", arguments='{"city": "Lisbon"}'
    )
    model = ScriptedModel([call, said("It is sunny in Lisbon.", 1), said("You asked about Lisbon.", 2)])
    agent = Agent(name="assistant", instructions="Be brief.", model=model, tools=[get_weather])

    async def first(session, memory):
        return (await Runner.run(agent, "What is the weather in Lisbon?", session=session)).final_output

    async def second(session, memory):
        return (await Runner.run(agent, "Which city did I ask about?", session=session)).final_output

    assert run(tenant_dsn, first, session_id="trip") == "It is sunny in Lisbon."
    assert run(tenant_dsn, second, session_id="trip") == "You asked about Lisbon."
    seen = model.inputs[2]
    assert [item.get("type", "message") for item in seen] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
    ]
    assert seen[0]["content"] == "What is the weather in Lisbon?"
    assert (seen[1]["call_id"], seen[2]["call_id"], seen[2]["output"]) == ("call_1", "call_1", "Sunny in Lisbon")
    assert seen[3]["content"][0]["text"] == "It is sunny in Lisbon."
    assert seen[4] == {"role": "user", "content": "Which city did I ask about?"}
    stored = run(tenant_dsn, lambda session, memory: session.get_items(), session_id="trip")
    assert len(stored) == 6 and stored[-1]["content"][0]["text"] == "You asked about Lisbon."


def test_recall_filter_adds_other_sessions_memory_to_the_instructions(tenant_dsn):
    async def scenario(session, memory):
        await AgentMemorySession("old", memory, enrich="now").add_items(
            [{"role": "user", "content": "Our staging database runs on PostgreSQL 15 in Frankfurt."}]
        )
        await session.add_items([{"role": "user", "content": "The staging database is slow again."}])
        question = {"role": "user", "content": "Where does the staging database run?"}
        data = CallModelData(
            model_data=ModelInputData(input=[question], instructions="Be brief."), agent=None, context=None
        )
        found = await session.recall_filter(k=3)(data)
        empty = ModelInputData(input=[], instructions="Be brief.")
        unchanged = await session.recall_filter()(CallModelData(model_data=empty, agent=None, context=None))
        return found, unchanged, empty

    found, unchanged, empty = run(tenant_dsn, scenario, session_id="now", enrich="now")
    head, context = found.instructions.split("\n\n", 1)
    lines = context.splitlines()
    assert head == "Be brief." and lines[0] == CONTEXT_TITLE
    assert lines[1].startswith("- Our staging database runs on PostgreSQL 15 in Frankfurt. (old, ")
    assert "slow again" not in context
    assert unchanged is empty


def test_recall_filter_refuses_a_bad_k(tenant_dsn):
    async def scenario(session, memory):
        with pytest.raises(ValueError, match="k and max_chars must be at least 1, got k=0, max_chars=2000"):
            session.recall_filter(k=0)
        return callable(session.recall_filter(k=1))

    assert run(tenant_dsn, scenario)


def test_recall_filter_in_a_run_leaves_the_session_as_it_was(tenant_dsn):
    set_tracing_disabled(True)
    model = ScriptedModel([said("Frankfurt.", 1)])
    agent = Agent(name="assistant", instructions="Be brief.", model=model)

    async def scenario(session, memory):
        await AgentMemorySession("old", memory, enrich="now").add_items(
            [{"role": "user", "content": "Our staging database runs on PostgreSQL 15 in Frankfurt."}]
        )
        config = RunConfig(call_model_input_filter=session.recall_filter())
        await Runner.run(agent, "Where does the staging database run?", session=session, run_config=config)
        return await session.get_items()

    items = run(tenant_dsn, scenario, session_id="now")
    assert CONTEXT_TITLE in (model.instructions[0] or "")
    assert [item.get("role") for item in items] == ["user", "assistant"]
