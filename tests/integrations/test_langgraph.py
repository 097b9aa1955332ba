"""agent_memory as LangGraph's BaseStore: the cases LangGraph documents for a store (put, get, delete, search
by prefix with filters and pagination, list_namespaces, batch, sync and async), run against the real
extension as a tenant role, and a graph whose node remembers in one thread and recalls in another."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, TypedDict

import pytest
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, ListNamespacesOp, PutOp, SearchOp

from agent_memory import AsyncMemory, Memory
from agent_memory.integrations.langgraph import AgentMemoryStore, AsyncAgentMemoryStore, memory_key, words


@pytest.fixture
def memory(tenant_dsn):
    with Memory(tenant_dsn) as client:
        yield client


@pytest.fixture
def store(memory):
    return AgentMemoryStore(memory, agent_id="assistant")


def test_put_then_get_returns_the_value_with_its_namespace_and_times(store):
    store.put(("users", "ana"), "diet", {"text": "Ana is vegetarian.", "since": 2019})
    item = store.get(("users", "ana"), "diet")
    assert (item.namespace, item.key, item.value) == (
        ("users", "ana"),
        "diet",
        {"text": "Ana is vegetarian.", "since": 2019},
    )
    assert item.created_at <= item.updated_at
    assert store.get(("users", "ana"), "missing") is None
    assert store.get(("users", "bo"), "diet") is None


def test_a_put_under_the_same_key_replaces_the_value_and_keeps_the_history(store, memory):
    store.put(("users", "ana"), "city", {"text": "Ana lives in Porto."})
    first = store.get(("users", "ana"), "city")
    store.put(("users", "ana"), "city", {"text": "Ana lives in Lisbon."})
    item = store.get(("users", "ana"), "city")
    assert item.value == {"text": "Ana lives in Lisbon."} and item.created_at == first.created_at
    history = memory.list_memories(agent_id="assistant", status="superseded")
    assert [old.content for old in history] == ["Ana lives in Porto."]
    # The same value again, however it is indexed, changes nothing.
    store.put(("users", "ana"), "city", {"text": "Ana lives in Lisbon."})
    store.put(("users", "ana"), "city", {"text": "Ana lives in Lisbon."}, index=["text"])
    assert len(memory.list_memories(agent_id="assistant", status="superseded")) == 1


def test_a_value_whose_unsearched_fields_change_is_stored_whole(memory):
    store = AgentMemoryStore(memory, agent_id="assistant", fields=["text"])
    store.put(("notes",), "n1", {"text": "Ship the beta on Monday.", "owner": "ana", "done": False})
    store.put(("notes",), "n1", {"text": "Ship the beta on Monday.", "owner": "bo"})
    assert store.get(("notes",), "n1").value == {"text": "Ship the beta on Monday.", "owner": "bo"}
    assert [m.content for m in memory.list_memories(agent_id="assistant")] == ["Ship the beta on Monday."]


def test_delete_removes_the_item_and_a_put_brings_it_back(store):
    store.put(("users", "ana"), "pet", {"text": "Ana has a cat named Miso."})
    store.delete(("users", "ana"), "pet")
    assert store.get(("users", "ana"), "pet") is None
    store.delete(("users", "ana"), "pet")  # deleting what is not there is not an error
    store.put(("users", "ana"), "pet", {"text": "Ana has a dog named Rex."})
    assert store.get(("users", "ana"), "pet").value == {"text": "Ana has a dog named Rex."}


def test_keys_and_labels_with_slashes_or_white_space_at_the_ends_do_not_collide(store):
    store.put(("a/b",), "c", {"v": 1})
    store.put(("a",), "b/c", {"v": 2})
    store.put(("a",), "x ", {"v": 3})
    store.put(("a",), "x", {"v": 4})
    assert memory_key(("a/b",), "c") != memory_key(("a",), "b/c")
    assert store.get(("a/b",), "c").value == {"v": 1} and store.get(("a",), "b/c").value == {"v": 2}
    assert store.get(("a",), "x ").value == {"v": 3} and store.get(("a",), "x").value == {"v": 4}


def test_short_and_empty_values_are_stored_and_found(store):
    store.put(("people",), "ana", {"name": "Ana Silva"})
    store.put(("people",), "ok", {"answer": "yes"})
    store.put(("people",), "blank", {})
    assert store.get(("people",), "blank").value == {}
    assert store.search(("people",), query="Ana Silva")[0].key == "ana"
    assert "ok" in [hit.key for hit in store.search(("people",), query="yes")]


def test_search_without_a_query_lists_a_prefix_newest_first_with_filters_and_pages(store):
    for n, (who, kind) in enumerate([("ana", "food"), ("ana", "travel"), ("bo", "food"), ("ana", "food")]):
        store.put(("users", who, "prefs"), f"p{n}", {"text": f"preference {n}", "kind": kind, "rank": n})
    assert [item.key for item in store.search(("users", "ana"))] == ["p3", "p1", "p0"]
    assert [item.key for item in store.search(("users",), filter={"kind": "food"})] == ["p3", "p2", "p0"]
    assert [item.key for item in store.search(("users",), filter={"rank": {"$gte": 1, "$lt": 3}})] == ["p2", "p1"]
    assert [item.key for item in store.search(("users",), filter={"kind": {"$ne": "food"}})] == ["p1"]
    assert [item.key for item in store.search(("users",), filter={"rank": {"$gt": "1"}})] == []
    assert [item.key for item in store.search((), limit=2, offset=1)] == ["p2", "p1"]
    assert store.search(("users", "cy")) == []
    with pytest.raises(ValueError, match=r"unknown filter operator \$regex"):
        store.search(("users",), filter={"kind": {"$regex": "f.*"}})


def test_search_with_a_query_finds_a_paraphrase_within_the_prefix_only(store):
    store.put(("users", "ana"), "diet", {"text": "Ana does not eat meat or fish."})
    store.put(("users", "ana"), "job", {"text": "Ana works as a nurse at the city hospital."})
    store.put(("users", "bo"), "diet", {"text": "Bo does not eat meat or fish either."})
    hits = store.search(("users", "ana"), query="is she vegetarian?", limit=2)
    assert hits[0].key == "diet" and {hit.namespace for hit in hits} == {("users", "ana")}
    assert hits[0].score is not None and hits[0].score > 0
    nurse = {"text": "Ana works as a nurse at the city hospital."}
    assert [hit.key for hit in store.search(("users", "ana"), query="hospital job", filter=nurse)] == ["job"]
    assert [hit.key for hit in store.search(("users", "ana"), query="hospital job", filter={"text": "x"})] == []


def test_the_same_words_in_two_namespaces_are_found_in_each(store):
    for user in ("alice", "bob"):
        store.put(("users", user), "pref", {"text": "Prefers dark mode in every editor."})
    for user in ("alice", "bob"):
        assert [(hit.namespace, hit.key) for hit in store.search(("users", user), query="dark mode editor")] == [
            (("users", user), "pref")
        ]
    assert len(store.search(("users",), query="dark mode editor")) == 2


def test_an_item_put_without_index_is_never_found_by_a_query(store):
    store.put(("notes",), "secret", {"text": "The vault code is 4417."}, index=False)
    store.put(("notes",), "other", {"text": "The vault is in the basement."})
    assert [hit.key for hit in store.search(("notes",), query="vault code")] == ["other"]
    assert sorted(item.key for item in store.search(("notes",))) == ["other", "secret"]


def test_search_turns_finds_what_the_agent_was_told_in_conversation(memory):
    said = [{"role": "user", "id": "m1", "content": "My flight to Oslo leaves at 7am on Thursday."}]
    memory.commit("chat-1", said, agent_id="assistant", enrich="now")
    store = AgentMemoryStore(memory, agent_id="assistant", search_turns=True)
    store.put(("users", "ana"), "seat", {"text": "Ana prefers an aisle seat."})
    hits = store.search(("users", "ana"), query="when does the Oslo flight leave?")
    assert (hits[0].namespace, hits[0].key, hits[0].value["role"]) == (("turns", "chat-1"), "m1", "user")
    assert AgentMemoryStore(memory, agent_id="assistant").search(("users",), query="Oslo flight")[0].key == "seat"
    # A memory of the agent that is no item of the store (remembered, or taken from a conversation) too.
    wifi = memory.remember("The office wifi password is on the fridge.", agent_id="assistant")
    hit = store.search(("users", "ana"), query="where is the wifi password?")[0]
    assert (hit.namespace, hit.key, hit.value["kind"]) == (("memories", "fact"), str(wifi.memory_id), "fact")
    items_only = AgentMemoryStore(memory, agent_id="assistant").search((), query="wifi password")
    assert {hit.namespace for hit in items_only} == {("users", "ana")}


def test_searches_rank_by_recency_as_the_store_is_configured(memory):
    january = [
        {"role": "user", "id": "o1", "content": "My dentist is Dr. Costa.", "created_at": "2026-01-06T10:00:00Z"}
    ]
    memory.commit("january", january, agent_id="assistant", enrich="now")
    memory.commit("now", [{"role": "user", "id": "n1", "content": "My dentist is Dr. Lima now."}], agent_id="assistant")
    other = ["Book a table for two at Nola on Friday.", "Remind me to renew my passport.", "The car needs new tyres."]
    said = [{"role": "user", "id": f"m{n}", "content": text} for n, text in enumerate(other)]
    memory.commit("errands", said, agent_id="assistant", enrich="now")
    memory.enrich("now", agent_id="assistant")
    plain = AgentMemoryStore(memory, agent_id="assistant", search_turns=True)
    recent = AgentMemoryStore(
        memory, agent_id="assistant", search_turns=True, weights={"weight_recency": 1, "recency_half_life_days": 30}
    )
    assert [hit.key for hit in plain.search((), query="who is my dentist?", limit=2)] == ["o1", "n1"]
    assert [hit.key for hit in recent.search((), query="who is my dentist?", limit=2)] == ["n1", "o1"]


def test_list_namespaces_with_prefix_suffix_depth_and_pages(store):
    for namespace in [("users", "ana", "prefs"), ("users", "bo", "prefs"), ("users", "bo", "notes"), ("docs",)]:
        store.put(namespace, "k", {"v": 1})
    assert store.list_namespaces() == [
        ("docs",),
        ("users", "ana", "prefs"),
        ("users", "bo", "notes"),
        ("users", "bo", "prefs"),
    ]
    assert store.list_namespaces(prefix=("users", "*"), suffix=("prefs",)) == [
        ("users", "ana", "prefs"),
        ("users", "bo", "prefs"),
    ]
    assert store.list_namespaces(max_depth=2) == [("docs",), ("users", "ana"), ("users", "bo")]
    assert store.list_namespaces(limit=1, offset=1) == [("users", "ana", "prefs")]


def test_batch_runs_every_kind_of_operation_in_order(store):
    done = store.batch(
        [
            PutOp(("users", "ana"), "tz", {"text": "Ana is in Lisbon time."}),
            GetOp(("users", "ana"), "tz"),
            SearchOp(("users",)),
            ListNamespacesOp(),
            PutOp(("users", "ana"), "tz", None),
            GetOp(("users", "ana"), "tz"),
        ]
    )
    assert done[0] is None and done[1].value == {"text": "Ana is in Lisbon time."}
    assert [item.key for item in done[2]] == ["tz"] and done[3] == [("users", "ana")]
    assert done[4] is None and done[5] is None


def test_bad_arguments_are_refused_by_name(memory, tenant_dsn, store):
    with pytest.raises(ValueError, match="agent_id must not be empty"):
        AgentMemoryStore(memory, agent_id=" ")
    with pytest.raises(TypeError, match="takes an agent_memory Memory, got AsyncMemory"):
        AgentMemoryStore(AsyncMemory(tenant_dsn))
    with pytest.raises(InvalidNamespaceError):
        store.put(("users", "a.b"), "k", {"v": 1})
    with pytest.raises(NotImplementedError):
        store.put(("users",), "k", {"v": 1}, ttl=5)


def test_the_async_store_does_the_same_over_async_memory(tenant_dsn):
    async def scenario() -> tuple[Any, ...]:
        async with AsyncMemory(tenant_dsn) as client:
            store = AsyncAgentMemoryStore(client, agent_id="assistant")
            await store.aput(("users", "ana"), "lang", {"text": "Ana writes Rust at work."})
            item = await store.aget(("users", "ana"), "lang")
            hits = await store.asearch(("users",), query="which programming language does Ana use?")
            # A node of a sync graph runs in a worker thread: batch there runs on the store's loop.
            box: list[Any] = []
            worker = threading.Thread(target=lambda: box.append(store.get(("users", "ana"), "lang")))
            worker.start()
            await asyncio.get_running_loop().run_in_executor(None, worker.join)
            await store.adelete(("users", "ana"), "lang")
            return item.value, hits[0].key, box[0].value, await store.aget(("users", "ana"), "lang")

    value, top, from_thread, gone = asyncio.run(scenario())
    assert value == from_thread == {"text": "Ana writes Rust at work."} and top == "lang" and gone is None


def test_the_async_store_says_which_methods_to_call_where_sync_ones_cannot_run(tenant_dsn):
    async def scenario() -> AsyncAgentMemoryStore:
        async with AsyncMemory(tenant_dsn) as client:
            store = AsyncAgentMemoryStore(client, agent_id="assistant")
            with pytest.raises(RuntimeError, match="in the event loop's own thread, use aget"):
                store.get(("users",), "k")
            return store

    stopped = asyncio.run(scenario())
    with pytest.raises(RuntimeError, match="its event loop is not running"):
        stopped.get(("users",), "k")


def test_the_sync_store_answers_async_calls_too(store):
    async def scenario() -> Any:
        await store.aput(("users", "bo"), "team", {"text": "Bo is on the payments team."})
        return (await store.aget(("users", "bo"), "team")).value

    assert asyncio.run(scenario()) == {"text": "Bo is on the payments team."}


def test_words_are_the_value_text_recall_searches():
    assert words({"text": "Ana is vegetarian."}, None) == "Ana is vegetarian."
    assert words({"food": "pizza", "stars": 5}, None) == "food: pizza\nstars: 5"
    assert words({"a": {"b": "deep"}, "c": "top"}, ["a.b", "c"]) == "deep\ntop"


class Chat(TypedDict):
    user: str
    said: str
    answer: str


def remember_or_recall(state: Chat, *, store: BaseStore) -> dict[str, str]:
    """Remembers what the user says starting with "remember:", else answers from what it recalls."""
    namespace = ("users", state["user"], "memories")
    if state["said"].startswith("remember:"):
        fact = state["said"].removeprefix("remember:").strip()
        store.put(namespace, f"m{len(store.search(namespace, limit=100))}", {"text": fact})
        return {"answer": "noted"}
    hits = store.search(namespace, query=state["said"], limit=1)
    return {"answer": hits[0].value["text"] if hits else "I don't know"}


def test_a_graph_node_remembers_in_one_thread_and_recalls_in_another(store):
    builder = StateGraph(Chat)
    builder.add_node("remember_or_recall", remember_or_recall)
    builder.add_edge(START, "remember_or_recall")
    graph = builder.compile(store=store)
    first = {"configurable": {"thread_id": "thread-1"}}
    graph.invoke({"user": "ana", "said": "remember: My daughter's name is Lena.", "answer": ""}, first)
    graph.invoke({"user": "ana", "said": "remember: I drive a blue Volvo.", "answer": ""}, first)
    later = {"configurable": {"thread_id": "thread-2"}}
    answer = graph.invoke({"user": "ana", "said": "what is my kid called?", "answer": ""}, later)["answer"]
    assert answer == "My daughter's name is Lena."
    assert (
        graph.invoke({"user": "bo", "said": "what is my kid called?", "answer": ""}, later)["answer"] == "I don't know"
    )
