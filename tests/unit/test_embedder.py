"""The local embedder outside the database (the same code runs inside it)."""

import math

import pytest

from agent_memory_db import embedder, embedding


@pytest.fixture(scope="module")
def model():
    return embedder.LocalEmbedder()


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_have_the_models_dimensions_and_unit_length(model):
    vectors = model.embed(["The deploy failed because the token expired.", "hi"])
    assert [len(v) for v in vectors] == [embedder.DIMENSIONS] * 2
    assert all(math.isclose(math.sqrt(cosine(v, v)), 1.0, abs_tol=1e-5) for v in vectors)


def test_paraphrase_is_closer_than_unrelated_text(model):
    query, paraphrase, unrelated = model.embed(
        ["Where does Maria go running?", "Maria jogs in the park every morning.", "The invoice is due Friday."]
    )
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.2


def test_batching_does_not_change_vectors(model):
    texts = [f"turn number {i} about {'long ' * i}topics" for i in range(10)]
    together = model.embed(texts, batch_tokens=None, batch_size=32)
    alone = [model.embed([text])[0] for text in texts]
    assert all(cosine(a, b) > 0.9999 for a, b in zip(together, alone, strict=True))


def test_batches_hold_as_many_texts_as_their_token_budget_pads():
    # Sorted by length; each batch padded to its last (longest) text stays within 40 tokens: 5, 5 and 10 pad to
    # 30, a fourth of 12 would make 48.
    assert embedder.batches([30, 5, 10, 5, 12, 200], 40) == [[1, 3, 2], [4], [0], [5]]
    # A batch of three texts of 10 pads to 30; a fourth would make 40; a text longer than the budget runs alone.
    assert embedder.batches([10, 10, 10, 10, 50], 30) == [[0, 1, 2], [3], [4]]
    assert embedder.batches([3] * 5, None, batch_size=2) == [[0, 1], [2, 3], [4]]
    assert embedder.batches([3] * 5, 100, batch_size=2) == [[0, 1], [2, 3], [4]]
    assert embedder.batches([], 256) == []
    with pytest.raises(ValueError, match="batch_tokens or batch_size"):
        embedder.batches([3], None)


def test_empty_input_gives_no_vectors(model):
    assert model.embed([]) == []


def test_a_single_string_is_refused(model):
    with pytest.raises(TypeError, match="sequence of texts"):
        model.embed("not a list")


def test_damaged_model_file_is_reported(tmp_path):
    damaged = tmp_path / "model.onnx"
    damaged.write_bytes(b"not a model")
    with pytest.raises(embedder.EmbedderUnavailable, match="sha256"):
        embedder._checked(damaged, embedder.MODEL_SHA256)


def test_missing_model_file_is_reported(tmp_path):
    with pytest.raises(embedder.EmbedderUnavailable, match="missing"):
        embedder._checked(tmp_path / "absent.onnx", embedder.MODEL_SHA256)


def test_pgvector_text_keeps_seven_significant_digits_of_each_number(model):
    from agent_memory_db.embedding import as_pgvector

    assert as_pgvector([0.5, -1.23456789e-8, 3.0]) == "[0.5,-1.234568e-08,3]"
    assert as_pgvector([]) == "[]"
    vector = model.embed(["The deploy failed."])[0]
    parsed = [float(x) for x in as_pgvector(vector).strip("[]").split(",")]
    assert len(parsed) == 384
    assert all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) for a, b in zip(parsed, vector, strict=True))


def test_vectors_kept_ahead_are_handed_out_to_their_owner_only(model):
    from agent_memory_db import embedding

    settings = {"embedder": "local"}
    cache = {"local_embedder": model}
    tenant_a = ("a", embedder.MODEL_NAME)
    embedding.keep_ahead(cache, tenant_a, ["kept"], ["[1,2,3]"])
    fresh = embedding.as_pgvector(model.embed(["kept"])[0])

    assert embedding.embed_text_form(settings, ["kept", "new"], None, cache, tenant_a)[0] == "[1,2,3]"
    # Another tenant, another model, or no owner at all: the text is embedded, not taken from tenant a.
    assert embedding.embed_text_form(settings, ["kept"], None, cache, ("b", embedder.MODEL_NAME)) == [fresh]
    assert embedding.embed_text_form(settings, ["kept"], None, cache, ("a", "other-model")) == [fresh]
    assert embedding.embed_text_form(settings, ["kept"], None, cache, None) == [fresh]


def test_kept_vectors_replace_the_batch_before_and_repeated_texts_are_embedded_once(model):
    from agent_memory_db import embedding

    calls = []

    class Counting:
        def embed(self, texts, between_batches=None):
            calls.append(list(texts))
            return model.embed(texts)

    cache = {"local_embedder": Counting()}
    owner = ("a", embedder.MODEL_NAME)
    embedding.keep_ahead(cache, owner, ["first"], ["[1]"])
    embedding.keep_ahead(cache, owner, ["second"], ["[2]"])
    vectors = embedding.embed_text_form({"embedder": "local"}, ["second", "first", "first"], None, cache, owner)
    assert vectors[0] == "[2]"
    assert vectors[1] == vectors[2] != "[1]"
    assert calls == [["first"]]
    with pytest.raises(ValueError):
        embedding.keep_ahead(cache, owner, ["one", "two"], ["[1]"])


def test_the_settings_choose_the_model_the_package_maps_them_to():
    """SQL asks this mapping (memory_internal._embedding_model): the local model is the embedder's own."""
    settings = {"openai_embedding_model": "m", "openai_embedding_dimensions": "1536", "client_dimensions": 12}
    assert embedding.model_of(settings | {"embedder": "local"}) == embedding.Model("local", embedder.MODEL_NAME, 384)
    assert embedding.model_of(settings | {"embedder": "openai"}) == embedding.Model("openai", "m", 1536)
    assert embedding.model_of(settings | {"embedder": "client"}) == embedding.Model("client", "client", 12)
    assert embedding.model_of(settings | {"embedder": "none"}) is None


def test_a_registered_model_embeds_under_the_settings_with_its_provider_and_name():
    settings = {"embedder": "openai", "openai_embedding_model": "new", "openai_embedding_dimensions": 3072}
    older = embedding.Model("openai", "text-embedding-3-small", 1536)
    assert embedding.model_of(embedding.settings_for(settings, older)) == older
    local = embedding.Model("local", embedder.MODEL_NAME, 384)
    assert embedding.model_of(embedding.settings_for(settings, local)) == local


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        (embedding.Model("local", "another-local-model", 384), "is not the one installed"),
        (embedding.Model("client", "client", 12), "takes its vectors from the client"),
    ],
)
def test_a_model_the_database_cannot_embed_with_says_why(model, problem):
    with pytest.raises(ValueError, match=problem):
        embedding.settings_for({"embedder": "local"}, model)
