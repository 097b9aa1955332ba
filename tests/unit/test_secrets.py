"""A key goes only to the origin it was stored for, only over http or https, never after a redirect."""

import re

import pytest
from http_stub import Stub

from agent_memory_db.openai_compat import ProviderError, check_url, post_json
from agent_memory_db.secrets import key_for


def test_the_key_of_a_request_to_its_origin():
    assert key_for("k", "https://api.openai.com/v1", ("sk-1", "https://api.openai.com")) == "sk-1"
    assert key_for("k", "HTTPS://API.openai.com/v1", ("sk-1", "https://api.openai.com")) == "sk-1"
    assert key_for("k", "http://127.0.0.1:8080/v1", ("sk-1", "http://127.0.0.1:8080")) == "sk-1"


def test_no_key_stored_is_no_key():
    assert key_for("k", "https://api.openai.com/v1", None) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:18080/v1",  # another host
        "https://api.openai.com:8443/v1",  # another port
        "https://api.openai.com@evil.example/v1",  # user info: the host is evil.example
        "https://evil.example/api.openai.com",
        "http://api.openai.com/v1",  # the same host over plain http
    ],
)
def test_a_key_is_not_sent_to_another_origin(url):
    with pytest.raises(ProviderError, match=r"secret k is stored for https://api\.openai\.com and is not sent to"):
        key_for("k", url, ("sk-1", "https://api.openai.com"))


def test_a_key_stored_without_an_origin_is_sent_nowhere():
    with pytest.raises(ProviderError, match=r"stored for \(no origin\)"):
        key_for("k", "https://api.openai.com/v1", ("sk-1", None))


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("file:///etc/passwd#", "scheme 'file' is not allowed"),
        ("gopher://127.0.0.1:70/", "scheme 'gopher' is not allowed"),
        ("127.0.0.1:8080/v1", "has no scheme"),
        ("/v1/embeddings", "has no scheme"),
        ("http:///v1", "has no host"),
    ],
)
def test_only_http_and_https_urls_with_a_host_are_called(url, problem):
    with pytest.raises(ProviderError, match=problem):
        check_url(url)
    with pytest.raises(ProviderError, match=problem):
        post_json(url, {}, api_key="sk-1")


def test_a_redirect_is_not_followed_with_the_key():
    with Stub() as target, Stub() as redirecting:
        redirecting.redirect_to = target.base_url + "/embeddings"
        refused = r"answered 307: redirect to http://127\.0\.0\.1:\d+/v1/embeddings not followed"
        with pytest.raises(ProviderError, match="answered 307 Temporary Redirect, a redirect, not followed") as error:
            post_json(redirecting.base_url + "/embeddings", {"input": ["x"], "model": "m"}, api_key="sk-1", retries=0)
        assert re.search(refused, error.value.detail)
        assert [auth for _, _, auth in redirecting.requests] == ["Bearer sk-1"]
        assert target.requests == []
