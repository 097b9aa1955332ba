"""Fixtures of the Citus suite: the cluster (cluster.py), made and distributed once per run."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from cluster import COORDINATOR, NODES, CitusNode, distributed_database


@pytest.fixture(scope="session")
def cluster() -> Iterator[list[CitusNode]]:
    """The three nodes, running, with a fresh database in which the extension is created and distributed."""
    started = [node.start() for node in NODES]
    try:
        distributed_database()
        yield NODES
    finally:
        for node, was_started in zip(NODES, started, strict=True):
            if was_started:
                node.stop()


@pytest.fixture
def coordinator(cluster: list[CitusNode]) -> Iterator[psycopg.Connection]:
    """A superuser's connection to the coordinator."""
    with COORDINATOR.connect() as conn:
        yield conn
