"""The OpenAI-compatible client against a real HTTP server on loopback."""

import pytest
from http_stub import Stub, fake_vector

from agent_memory_db import openai_compat
from agent_memory_db.openai_compat import Endpoint, ProviderError, chat, embed


@pytest.fixture
def stub():
    with Stub(dimensions=4) as server:
        yield server


def test_embeddings_come_back_in_input_order(stub):
    vectors = embed(Endpoint(stub.base_url, "k"), "m", ["a", "b"], 4)
    assert vectors == [pytest.approx(fake_vector("a", 4)), pytest.approx(fake_vector("b", 4))]
    assert stub.requests[0][2] == "Bearer k"


def test_no_texts_make_no_request(stub):
    assert embed(Endpoint(stub.base_url), "m", [], 4) == []
    assert stub.requests == []


def test_retries_then_succeeds(stub):
    stub.fail_next = [502]
    assert len(embed(Endpoint(stub.base_url, backoff=0.01), "m", ["a"], 4)) == 1
    assert len(stub.requests) == 2


def test_waits_between_retries_go_through_the_wait_hook(stub, monkeypatch):
    # In the database the hook is pg_sleep, which a cancel or statement timeout interrupts.
    waited = []
    monkeypatch.setattr(openai_compat, "wait", waited.append)
    stub.fail_next = [502, 503]
    embed(Endpoint(stub.base_url, "k", retries=2, backoff=0.25), "m", ["a"], 4)
    assert waited == [0.25, 0.5]


def test_client_errors_are_not_retried(stub):
    stub.fail_next = [401]
    with pytest.raises(ProviderError, match=r"answered 401 Unauthorized \(after 1 attempt\)"):
        embed(Endpoint(stub.base_url, backoff=0.01), "m", ["a"], 4)
    assert len(stub.requests) == 1


def test_an_error_answer_is_summarized_and_its_body_kept_for_the_log(stub):
    stub.fail_next = [401]
    stub.fail_message = "Incorrect API key provided: sk-abc1***********wxyz"
    with pytest.raises(ProviderError) as refused:
        embed(Endpoint(stub.base_url, "sk-abc123", retries=0), "m", ["a"], 4)
    assert str(refused.value) == "the endpoint answered 401 Unauthorized (after 1 attempt)"
    assert "sk-abc1***" in refused.value.detail and stub.base_url in refused.value.detail


def test_unreachable_endpoint_is_named_in_the_detail():
    with pytest.raises(ProviderError, match="could not be reached") as failed:
        embed(Endpoint("http://127.0.0.1:9/v1", retries=0), "m", ["a"], 4)
    assert "127.0.0.1:9" in failed.value.detail and "127.0.0.1" not in str(failed.value)


def test_chat_returns_the_message_content(stub):
    assert '"summary"' in chat(Endpoint(stub.base_url), "c", [{"role": "user", "content": "hi"}])
