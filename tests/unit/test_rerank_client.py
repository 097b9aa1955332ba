"""The rerank client against a real HTTP server on loopback (tests/http_stub.py)."""

import re
import time

import pytest
from http_stub import Stub, rerank_score

from agent_memory_db import openai_compat
from agent_memory_db.openai_compat import ProviderError
from agent_memory_db.rerank import rerank

QUERY = "postgres vector index"
DOCS = ["the cat sat on the mat", "postgres index tuning", "a vector index in postgres"]


@pytest.fixture
def stub():
    with Stub() as server:
        yield server


def test_scores_are_aligned_with_the_input_order(stub):
    assert rerank(stub.rerank_url, QUERY, DOCS) == pytest.approx([0.0, 2 / 3, 1.0])
    assert [rerank_score(QUERY, d) for d in DOCS] == pytest.approx([0.0, 2 / 3, 1.0])


def test_the_request_is_model_query_documents_and_top_n_posted_to_the_url(stub):
    rerank(stub.rerank_url, QUERY, DOCS, model="rr", top_n=2)
    assert stub.requests == [("/rerank", {"model": "rr", "query": QUERY, "documents": DOCS, "top_n": 2}, None)]


def test_without_a_model_the_request_has_no_model_key(stub):
    rerank(stub.rerank_url, QUERY, DOCS)
    assert "model" not in stub.requests[0][1]


def test_top_n_above_the_number_of_documents_is_capped(stub):
    rerank(stub.rerank_url, QUERY, DOCS, top_n=50)
    assert stub.requests[0][1]["top_n"] == 3


def test_documents_beyond_top_n_are_none(stub):
    assert rerank(stub.rerank_url, QUERY, DOCS, top_n=2) == [None, pytest.approx(2 / 3), 1.0]


def test_tei_shape_is_read(stub):
    stub.rerank_shape = "tei"
    assert rerank(stub.rerank_url, QUERY, DOCS) == pytest.approx([0.0, 2 / 3, 1.0])


def test_the_key_is_sent_as_a_bearer_token(stub):
    rerank(stub.rerank_url, QUERY, DOCS, api_key="k")
    assert stub.requests[0][2] == "Bearer k"


def test_no_key_sends_no_authorization(stub):
    rerank(stub.rerank_url, QUERY, DOCS)
    assert stub.requests[0][2] is None


def test_retries_a_503_then_succeeds(stub):
    stub.fail_next = [503]
    assert rerank(stub.rerank_url, QUERY, DOCS, backoff=0.01) == pytest.approx([0.0, 2 / 3, 1.0])
    assert len(stub.requests) == 2


def test_a_slow_endpoint_is_a_provider_error_at_the_timeout(stub):
    stub.delay = 5
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"could not be reached: timed out \(after 1 attempt\)") as failed:
        rerank(stub.rerank_url, QUERY, DOCS, timeout=0.2, retries=0)
    assert re.search(r"/rerank failed: timed out \(after 1 attempt\)", failed.value.detail)
    assert time.monotonic() - started < 1.5


def test_no_documents_make_no_request(stub):
    assert rerank(stub.rerank_url, QUERY, []) == []
    assert stub.requests == []


def test_top_n_below_one_is_refused(stub):
    with pytest.raises(ValueError, match="top_n must be at least 1"):
        rerank(stub.rerank_url, QUERY, DOCS, top_n=0)
    assert stub.requests == []


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"data": []}, r'expected \{"results": \[\.\.\.\]\} or a list'),
        ("ranked", r'expected \{"results": \[\.\.\.\]\} or a list'),
        ({"results": {"index": 0, "relevance_score": 0.5}}, r'"results" is dict, not a list'),
        ({"results": [0.5]}, r"result 0 is float, not an object"),
        ({"results": [{"relevance_score": 0.5}]}, r"result 0 has no integer index: None"),
        ({"results": [{"index": "0", "relevance_score": 0.5}]}, r"result 0 has no integer index: '0'"),
        ({"results": [{"index": 1.0, "relevance_score": 0.5}]}, r"result 0 has no integer index: 1\.0"),
        ({"results": [{"index": 3, "relevance_score": 0.5}]}, r"index 3 is out of range for 3 documents"),
        ({"results": [{"index": -1, "relevance_score": 0.5}]}, r"index -1 is out of range for 3 documents"),
        ({"results": [{"index": 0, "relevance_score": "high"}]}, r"relevance_score of index 0 is not a finite number"),
        ({"results": [{"index": 0}]}, r"relevance_score of index 0 is not a finite number: None"),
        ({"results": [{"index": 0, "relevance_score": True}]}, r"relevance_score of index 0 is not a finite number"),
        (
            {"results": [{"index": 0, "relevance_score": float("nan")}]},
            r"relevance_score of index 0 is not a finite number: nan",
        ),
        ([{"index": 0, "relevance_score": 0.5}], r"score of index 0 is not a finite number: None"),
        (
            {"results": [{"index": 1, "relevance_score": 0.5}, {"index": 1, "relevance_score": 0.4}]},
            r"index 1 appears more than once",
        ),
    ],
)
def test_a_malformed_answer_is_a_provider_error_naming_the_problem(stub, answer, problem):
    stub.rerank_reply = answer
    with pytest.raises(ProviderError) as refused:
        rerank(stub.rerank_url, QUERY, DOCS)
    # The detail, for the server log, has the URL and what the endpoint sent; the message only the problem.
    assert re.search(r"rerank answer from http://127\.0\.0\.1:\d+/rerank: " + problem, refused.value.detail)
    told = str(refused.value).removeprefix("rerank answer: ")
    assert refused.value.detail.split("/rerank: ", 1)[1].startswith(told)
    assert "127.0.0.1" not in str(refused.value)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("file:///etc/passwd", "URL scheme 'file' is not allowed; use http or https"),
        ("ftp://127.0.0.1/rerank", "URL scheme 'ftp' is not allowed; use http or https"),
        ("127.0.0.1:8080/rerank", "URL '127.0.0.1:8080/rerank' has no scheme; use http or https"),
        ("http:///rerank", "URL 'http:///rerank' has no host"),
    ],
)
def test_a_url_that_is_not_http_with_a_host_is_refused_without_a_request(monkeypatch, url, problem):
    def no_request(*args, **kwargs):
        raise AssertionError("a request was made")

    monkeypatch.setattr(openai_compat._OPENER, "open", no_request)
    with pytest.raises(ProviderError, match=re.escape(problem)):
        rerank(url, QUERY, DOCS)
