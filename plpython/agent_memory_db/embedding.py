"""Which embedder the settings choose, and one call to embed texts with it.

Providers: local (all-MiniLM-L6-v2 in this process), openai (an OpenAI-compatible endpoint),
client (vectors come from the caller; nothing to compute here), none (no vectors at all).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass

from agent_memory_db import embedder as local
from agent_memory_db import openai_compat


@dataclass(frozen=True)
class Model:
    provider: str
    name: str
    dimensions: int


def model_of(settings: dict) -> Model | None:
    provider = settings["embedder"]
    if provider == "local":
        return Model("local", local.MODEL_NAME, local.DIMENSIONS)
    if provider == "openai":
        return Model("openai", settings["openai_embedding_model"], int(settings["openai_embedding_dimensions"]))
    if provider == "client":
        return Model("client", "client", int(settings["client_dimensions"]))
    return None


def settings_for(settings: dict, model: Model) -> dict:
    """The settings under which a registered model embeds: those given, with the model's provider and name (an
    earlier model of the same endpoint, or the local one). A client's model has no vectors to make here."""
    if model.provider == "local":
        if model.name != local.MODEL_NAME:
            raise ValueError(f"local model {model.name} is not the one installed ({local.MODEL_NAME})")
        return settings | {"embedder": "local"}
    if model.provider == "openai":
        return settings | {
            "embedder": "openai",
            "openai_embedding_model": model.name,
            "openai_embedding_dimensions": model.dimensions,
        }
    raise ValueError(f"model {model.name} takes its vectors from the client, which the database cannot make")


def endpoint(settings: dict, api_key: str | None) -> openai_compat.Endpoint:
    return openai_compat.Endpoint(
        base_url=settings["openai_base_url"],
        api_key=api_key,
        timeout=float(settings["http_timeout_seconds"]),
        retries=int(settings["http_retries"]),
    )


def embed(
    settings: dict,
    texts: Sequence[str],
    api_key: str | None,
    cache: MutableMapping,
    between_batches: Callable[[], object] | None = None,
) -> list[list[float]]:
    """Vectors for texts with the configured embedder; the local model is kept in `cache`;
    `between_batches` is called between the local model's batches."""
    model = model_of(settings)
    if model is None:
        raise ValueError("no embedder is configured (setting embedder = none)")
    if model.provider == "client":
        raise ValueError("the client embedder takes vectors from the caller; pass query_vector or message embeddings")
    if model.provider == "openai":
        return openai_compat.embed(endpoint(settings, api_key), model.name, texts, model.dimensions)
    if "local_embedder" not in cache:
        cache["local_embedder"] = local.LocalEmbedder()
    return cache["local_embedder"].embed(texts, between_batches=between_batches)


AHEAD = "vectors_ahead"


def keep_ahead(cache: MutableMapping, owner: tuple[str, str], texts: Sequence[str], vectors: Sequence[str]) -> None:
    """Keeps vectors (pgvector text) made ahead of the calls that will ask for them, for one owner
    (tenant, model): they replace any kept before, so at most one batch is held."""
    cache[AHEAD] = (owner, dict(zip(texts, vectors, strict=True)))


def embed_text_form(
    settings: dict,
    texts: Sequence[str],
    api_key: str | None,
    cache: MutableMapping,
    owner: tuple[str, str] | None,
    between_batches: Callable[[], object] | None = None,
) -> list[str]:
    """Vectors for texts in pgvector's text form: those kept ahead for the same owner (tenant, model)
    are taken as they are, the rest are embedded (in one call, each distinct text once)."""
    kept_owner, kept = cache.get(AHEAD, (None, {}))
    ready = kept if owner is not None and kept_owner == owner else {}
    missing = list(dict.fromkeys(text for text in texts if text not in ready))
    vectors = embed(settings, missing, api_key, cache, between_batches) if missing else []
    made = dict(zip(missing, map(as_pgvector, vectors), strict=True))
    return [ready[text] if text in ready else made[text] for text in texts]


@functools.lru_cache(maxsize=8)
def _vector_format(dimensions: int) -> str:
    return "[" + ",".join(["%.7g"] * dimensions) + "]"


def as_pgvector(vector: Sequence[float]) -> str:
    """pgvector's text form, seven significant digits: one format operation per vector, which takes
    half the time of formatting each number on its own."""
    return _vector_format(len(vector)) % tuple(vector)
