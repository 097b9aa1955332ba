"""The Pydantic AI Harness memory store over agent_memory: the behaviour the harness documents for its stores
(compare-and-set versions, operation receipts, write metadata, bounded reads, listings and search), and an
agent (FunctionModel, no network) that saves a note in one run which a new agent over the same database finds."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_harness import Memory
from pydantic_ai_harness.memory import (
    MemoryConflictError,
    MemoryOperation,
    MemoryOperationConflictError,
    MemoryStore,
    MetadataMemoryStore,
    SearchableMemoryStore,
)

from agent_memory import AsyncMemory
from agent_memory.integrations.pydantic_ai import AgentMemoryStore

Scenario = Callable[[AgentMemoryStore, AsyncMemory], Awaitable[Any]]


def run(dsn: str, scenario: Scenario, agent_id: str = "bot") -> Any:
    """scenario(store, memory) over a client of the test's database."""

    async def main() -> Any:
        async with AsyncMemory(dsn) as memory:
            return await scenario(AgentMemoryStore(memory, agent_id=agent_id), memory)

    return asyncio.run(main())


def op(name: str, fingerprint: str = "f1") -> MemoryOperation:
    return MemoryOperation(id=name, fingerprint=fingerprint)


def test_the_store_is_each_of_the_harness_store_protocols(tenant_dsn):
    async def scenario(store, memory):
        return [isinstance(store, kind) for kind in (MemoryStore, MetadataMemoryStore, SearchableMemoryStore)]

    assert run(tenant_dsn, scenario) == [True, True, True]


def test_only_an_async_client_is_taken():
    with pytest.raises(TypeError, match=r"needs an agent_memory\.AsyncMemory"):
        AgentMemoryStore(object())  # type: ignore[arg-type]


def test_a_path_nothing_was_written_to_reads_as_none(tenant_dsn):
    async def scenario(store, memory):
        return await store.read("u1/main/MEMORY.md", max_chars=100)

    assert run(tenant_dsn, scenario) is None


def test_a_write_reads_back_exactly_with_its_version(tenant_dsn):
    async def scenario(store, memory):
        mutation = await store.write("u1/main/MEMORY.md", "\n- Ana prefers tea.\n\n", expected_version=None)
        return mutation, await store.read("u1/main/MEMORY.md", max_chars=1000)

    mutation, file = run(tenant_dsn, scenario)
    assert (mutation.replayed, mutation.existed) == (False, False)
    assert (file.content, file.version, file.truncated) == ("\n- Ana prefers tea.\n\n", mutation.version, False)
    assert (file.operation_id, file.metadata) == (None, None)


def test_a_file_is_the_agents_curated_memory_under_its_path(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "- Ana prefers tea.\n", expected_version=None)
        return await memory.get("u1/main/MEMORY.md", agent_id="bot")

    [item] = run(tenant_dsn, scenario)
    assert (item.content, item.kind, item.tags) == ("- Ana prefers tea.", "fact", ["pydantic-ai"])


def test_a_read_is_bounded_by_max_chars_and_keeps_the_whole_files_version(tenant_dsn):
    async def scenario(store, memory):
        mutation = await store.write("u1/main/notes.md", "0123456789", expected_version=None)
        return mutation, await store.read("u1/main/notes.md", max_chars=4)

    mutation, file = run(tenant_dsn, scenario)
    assert (file.content, file.truncated, file.version) == ("0123", True, mutation.version)


def test_a_read_of_no_characters_is_refused(tenant_dsn):
    async def scenario(store, memory):
        await store.read("u1/main/MEMORY.md", max_chars=0)

    with pytest.raises(ValueError, match="max_chars must be positive"):
        run(tenant_dsn, scenario)


@pytest.mark.parametrize("path", ["../etc/passwd", "u1//MEMORY.md", "u1/./MEMORY.md", "u1/a b.md", ""])
def test_a_path_outside_the_harness_rules_is_refused(tenant_dsn, path):
    async def scenario(store, memory):
        await store.write(path, "x", expected_version=None)

    with pytest.raises(ValueError, match="invalid memory path"):
        run(tenant_dsn, scenario)


def test_creating_a_file_that_exists_conflicts(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "first\n", expected_version=None)
        with pytest.raises(MemoryConflictError, match="changed before it could be written"):
            await store.write("u1/main/MEMORY.md", "second\n", expected_version=None)
        return (await store.read("u1/main/MEMORY.md", max_chars=100)).content

    assert run(tenant_dsn, scenario) == "first\n"


def test_replacing_a_file_that_does_not_exist_conflicts(tenant_dsn):
    async def scenario(store, memory):
        with pytest.raises(MemoryConflictError):
            await store.write("u1/main/MEMORY.md", "x\n", expected_version="1")
        return await store.read("u1/main/MEMORY.md", max_chars=100)

    assert run(tenant_dsn, scenario) is None


def test_a_replace_at_the_current_version_supersedes_it_keeping_history(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/MEMORY.md", "- Ana prefers tea.\n", expected_version=None)
        second = await store.write("u1/main/MEMORY.md", "- Ana prefers coffee.\n", expected_version=first.version)
        history = await memory.list_memories(agent_id="bot", key_prefix="u1/", status="superseded")
        return first, second, await store.read("u1/main/MEMORY.md", max_chars=100), history

    first, second, file, history = run(tenant_dsn, scenario)
    assert (second.existed, second.version != first.version) == (True, True)
    assert (file.content, file.version) == ("- Ana prefers coffee.\n", second.version)
    assert [(str(item.memory_id), item.content) for item in history] == [(first.version, "- Ana prefers tea.")]


def test_a_replace_at_a_stale_version_conflicts(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/MEMORY.md", "one\n", expected_version=None)
        await store.write("u1/main/MEMORY.md", "two\n", expected_version=first.version)
        with pytest.raises(MemoryConflictError):
            await store.write("u1/main/MEMORY.md", "three\n", expected_version=first.version)
        return (await store.read("u1/main/MEMORY.md", max_chars=100)).content

    assert run(tenant_dsn, scenario) == "two\n"


def test_of_two_concurrent_replaces_at_one_version_one_conflicts(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/MEMORY.md", "zero\n", expected_version=None)
        async with AsyncMemory(tenant_dsn) as other_client:
            other = AgentMemoryStore(other_client, agent_id="bot")
            outcomes = await asyncio.gather(
                store.write("u1/main/MEMORY.md", "one\n", expected_version=first.version),
                other.write("u1/main/MEMORY.md", "two\n", expected_version=first.version),
                return_exceptions=True,
            )
        file = await store.read("u1/main/MEMORY.md", max_chars=100)
        return outcomes, file

    outcomes, file = run(tenant_dsn, scenario)
    [won] = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    assert [type(outcome) for outcome in outcomes if isinstance(outcome, BaseException)] == [MemoryConflictError]
    assert (file.version, file.content in {"one\n", "two\n"}) == (won.version, True)


def test_a_rewrite_remember_takes_for_the_same_claim_still_reads_back_as_written(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/MEMORY.md", "Ana prefers TEA.", expected_version=None)
        second = await store.write("u1/main/MEMORY.md", "ana prefers tea", expected_version=first.version)
        return first, second, await store.read("u1/main/MEMORY.md", max_chars=100)

    first, second, file = run(tenant_dsn, scenario)
    assert (file.content, file.version, second.version != first.version) == ("ana prefers tea", second.version, True)


def test_writing_the_same_content_again_keeps_the_version(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/MEMORY.md", "same\n", expected_version=None)
        return first, await store.write("u1/main/MEMORY.md", "same\n", expected_version=first.version)

    first, again = run(tenant_dsn, scenario)
    assert (again.version, again.existed) == (first.version, True)


def test_a_write_of_white_space_only_ends_the_file(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/MEMORY.md", "gone soon\n", expected_version=None)
        emptied = await store.write("u1/main/MEMORY.md", "\n", expected_version=first.version)
        return emptied, await store.read("u1/main/MEMORY.md", max_chars=100)

    emptied, file = run(tenant_dsn, scenario)
    assert (emptied.version, emptied.existed, file) == (None, True, None)


def test_content_with_a_nul_character_is_refused(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "a\x00b", expected_version=None)

    with pytest.raises(ValueError, match="NUL"):
        run(tenant_dsn, scenario)


def test_a_delete_at_the_current_version_resolves_the_memory_keeping_it_in_history(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/old.md", "old notes\n", expected_version=None)
        deleted = await store.delete("u1/main/old.md", expected_version=first.version)
        resolved = await memory.list_memories(agent_id="bot", key_prefix="u1/", status="resolved")
        return first, deleted, await store.read("u1/main/old.md", max_chars=100), resolved

    first, deleted, file, resolved = run(tenant_dsn, scenario)
    assert (deleted.version, deleted.existed, deleted.replayed, file) == (None, True, False, None)
    assert [str(item.memory_id) for item in resolved] == [first.version]


def test_a_delete_at_a_stale_version_conflicts(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/old.md", "one\n", expected_version=None)
        await store.write("u1/main/old.md", "two\n", expected_version=first.version)
        with pytest.raises(MemoryConflictError, match="changed before it could be deleted"):
            await store.delete("u1/main/old.md", expected_version=first.version)
        return (await store.read("u1/main/old.md", max_chars=100)).content

    assert run(tenant_dsn, scenario) == "two\n"


def test_deleting_a_file_that_does_not_exist_did_nothing(tenant_dsn):
    async def scenario(store, memory):
        return await store.delete("u1/main/never.md", expected_version=None)

    assert run(tenant_dsn, scenario).existed is False


def test_deleting_without_a_version_a_file_that_exists_conflicts(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/old.md", "kept\n", expected_version=None)
        with pytest.raises(MemoryConflictError):
            await store.delete("u1/main/old.md", expected_version=None)
        return (await store.read("u1/main/old.md", max_chars=100)).content

    assert run(tenant_dsn, scenario) == "kept\n"


def test_a_replayed_write_returns_its_receipt_and_is_not_applied_again(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/MEMORY.md", "once\n", expected_version=None, operation=op("w1"))
        replay = await store.write("u1/main/MEMORY.md", "once\n", expected_version=None, operation=op("w1"))
        file = await store.read("u1/main/MEMORY.md", max_chars=100)
        return first, replay, await store.get_operation(op("w1")), file

    first, replay, receipt, file = run(tenant_dsn, scenario)
    assert (replay.version, replay.replayed) == (first.version, True)
    assert (receipt.version, receipt.replayed) == (first.version, True)
    assert (file.version, file.operation_id) == (first.version, "w1")


def test_an_operation_id_reused_with_other_arguments_conflicts(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "once\n", expected_version=None, operation=op("w1"))
        with pytest.raises(MemoryOperationConflictError, match="reused with different arguments"):
            await store.get_operation(op("w1", fingerprint="other"))

    run(tenant_dsn, scenario)


def test_an_unknown_operation_has_no_receipt(tenant_dsn):
    async def scenario(store, memory):
        return await store.get_operation(op("never"))

    assert run(tenant_dsn, scenario) is None


def test_a_replayed_delete_returns_its_receipt(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/old.md", "x\n", expected_version=None)
        await store.delete("u1/main/old.md", expected_version=first.version, operation=op("d1"))
        return await store.delete("u1/main/old.md", expected_version=first.version, operation=op("d1"))

    replay = run(tenant_dsn, scenario)
    assert (replay.version, replay.existed, replay.replayed) == (None, True, True)


def test_write_metadata_is_read_back_and_a_plain_write_records_none(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write_with_metadata(
            "u1/main/MEMORY.md", "typed\n", expected_version=None, metadata={"updated_by": "ui"}
        )
        with_metadata = await store.read("u1/main/MEMORY.md", max_chars=100)
        await store.write("u1/main/MEMORY.md", "typed\n", expected_version=first.version)
        return with_metadata, await store.read("u1/main/MEMORY.md", max_chars=100)

    with_metadata, after_plain_write = run(tenant_dsn, scenario)
    assert (with_metadata.metadata, after_plain_write.metadata) == ({"updated_by": "ui"}, None)
    assert after_plain_write.content == "typed\n"


@pytest.mark.parametrize(
    ("metadata", "error", "message"),
    [
        ({"by": 1}, TypeError, "must be strings"),
        ({"by": "a\x00"}, ValueError, "NUL"),
        ({"by": "x" * 5000}, ValueError, "the limit is 4096"),
    ],
)
def test_write_metadata_the_bundled_stores_refuse_is_refused(tenant_dsn, metadata, error, message):
    async def scenario(store, memory):
        await store.write_with_metadata("u1/main/MEMORY.md", "x", expected_version=None, metadata=metadata)

    with pytest.raises(error, match=message):
        run(tenant_dsn, scenario)


def test_paths_are_listed_sorted_below_a_prefix_up_to_the_limit(tenant_dsn):
    async def scenario(store, memory):
        for path in ["u2/main/MEMORY.md", "u1/main/b.md", "u1/main/MEMORY.md", "u1/main/a.md"]:
            await store.write(path, f"{path}\n", expected_version=None)
        await memory.remember("Ana leads security.", agent_id="bot", key="security.lead")
        return await store.list_paths("u1/", limit=10), await store.list_paths("u1/", limit=2)

    assert run(tenant_dsn, scenario) == (
        ["u1/main/MEMORY.md", "u1/main/a.md", "u1/main/b.md"],
        ["u1/main/MEMORY.md", "u1/main/a.md"],
    )


def test_a_listing_leaves_out_deleted_files(tenant_dsn):
    async def scenario(store, memory):
        first = await store.write("u1/main/old.md", "x\n", expected_version=None)
        await store.write("u1/main/MEMORY.md", "y\n", expected_version=None)
        await store.delete("u1/main/old.md", expected_version=first.version)
        return await store.list_paths("u1/main/", limit=10)

    assert run(tenant_dsn, scenario) == ["u1/main/MEMORY.md"]


def test_a_listing_of_no_paths_is_refused(tenant_dsn):
    async def scenario(store, memory):
        await store.list_paths("u1/", limit=0)

    with pytest.raises(ValueError, match="limit must be positive"):
        run(tenant_dsn, scenario)


def test_another_agents_files_are_not_seen(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "the bot's\n", expected_version=None)
        other = AgentMemoryStore(memory, agent_id="other")
        return await other.read("u1/main/MEMORY.md", max_chars=100), await other.list_paths("", limit=10)

    assert run(tenant_dsn, scenario) == (None, [])


def test_search_finds_files_of_its_scope_only(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "- Ana prefers green tea.\n", expected_version=None)
        await store.write("u1/main/deploys.md", "- Deploys go out on Fridays.\n", expected_version=None)
        await store.write("u1/main/nested/tea.md", "- tea in a nested scope\n", expected_version=None)
        await store.write("u2/main/MEMORY.md", "- Bo prefers tea too.\n", expected_version=None)
        return await store.search("u1/main/", "tea", limit=10, max_files=100, max_chars=1000, max_file_chars=1000)

    result = run(tenant_dsn, scenario)
    assert [match.path for match in result.matches] == ["u1/main/MEMORY.md"]
    assert (result.matches[0].snippet, result.scanned, result.truncated) == ("- Ana prefers green tea.\n", 2, False)


def test_search_finds_a_file_by_meaning_without_a_shared_word(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "- Ana prefers green tea.\n", expected_version=None)
        await store.write("u1/main/deploys.md", "- Deploys go out on Fridays.\n", expected_version=None)
        return await store.search(
            "u1/main/", "release schedule", limit=10, max_files=100, max_chars=1000, max_file_chars=1000
        )

    assert [match.path for match in run(tenant_dsn, scenario).matches] == ["u1/main/deploys.md"]


def test_search_keeps_to_its_result_limit(tenant_dsn):
    async def scenario(store, memory):
        for name in ["a.md", "b.md", "c.md"]:
            await store.write(f"u1/main/{name}", f"tea notes {name}\n", expected_version=None)
        return await store.search("u1/main/", "tea", limit=2, max_files=100, max_chars=1000, max_file_chars=1000)

    result = run(tenant_dsn, scenario)
    assert (len(result.matches), result.truncated) == (2, True)


def test_search_keeps_to_its_character_budget(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "tea " * 100, expected_version=None)
        return await store.search("u1/main/", "tea", limit=10, max_files=100, max_chars=30, max_file_chars=1000)

    [match] = run(tenant_dsn, scenario).matches
    assert len("MEMORY.md") + len(match.snippet) == 30


def test_an_empty_search_finds_nothing(tenant_dsn):
    async def scenario(store, memory):
        await store.write("u1/main/MEMORY.md", "tea\n", expected_version=None)
        return await store.search("u1/main/", "  ", limit=10, max_files=100, max_chars=1000, max_file_chars=1000)

    assert run(tenant_dsn, scenario).matches == []


def note_taker(note: str) -> FunctionModel:
    """A model that saves the note with write_memory, then answers."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
            return ModelResponse(parts=[TextPart("Saved.")])
        return ModelResponse(parts=[ToolCallPart("write_memory", {"content": note})])

    return FunctionModel(respond)


def note_finder(seen: list[str]) -> FunctionModel:
    """A model that searches memory for tea, keeping every request's text in seen, then answers."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(str(part.content) for m in messages if isinstance(m, ModelRequest) for part in m.parts)
        if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
            return ModelResponse(parts=[TextPart("Found it.")])
        return ModelResponse(parts=[ToolCallPart("search_memory", {"query": "tea"})])

    return FunctionModel(respond)


def test_an_agent_saves_a_note_in_one_run_that_a_new_agent_finds_in_a_later_run(tenant_dsn):
    async def first_run() -> None:
        async with AsyncMemory(tenant_dsn) as memory:
            agent = Agent(note_taker("Ana prefers green tea."), capabilities=[Memory(AgentMemoryStore(memory))])
            await agent.run("Remember that Ana prefers green tea.")

    async def later_run(seen: list[str]) -> Any:
        async with AsyncMemory(tenant_dsn) as memory:
            agent = Agent(note_finder(seen), capabilities=[Memory(AgentMemoryStore(memory))])
            result = await agent.run("What does Ana drink?")
            return [
                part.content
                for message in result.all_messages()
                for part in message.parts
                if isinstance(part, ToolReturnPart)
            ]

    asyncio.run(first_run())
    seen: list[str] = []
    [search] = asyncio.run(later_run(seen))
    assert [(match["file"], match["snippet"]) for match in search["matches"]] == [
        ("MEMORY.md", "Ana prefers green tea.\n")
    ]
    assert any("<memory>" in text and "Ana prefers green tea." in text for text in seen)
