"""Fixtures of the Citus suite: the cluster (cluster.py), made and distributed once per run."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from cluster import COORDINATOR, NODES, WORKERS, CitusNode, fresh_database


@pytest.fixture(scope="session")
def cluster() -> Iterator[list[CitusNode]]:
    """The three nodes, running, with a fresh database in which the extension is created and distributed."""
    started = [node.start() for node in NODES]
    try:
        for node in NODES:
            fresh_database(node)
        with COORDINATOR.connect() as conn:
            conn.execute("select citus_set_coordinator_host(%s, %s)", (str(COORDINATOR.socket_dir), COORDINATOR.port))
            for worker in WORKERS:
                conn.execute("select citus_add_node(%s, %s)", (str(worker.socket_dir), worker.port))
            conn.execute("create extension agent_memory cascade")
            conn.execute("select memory_internal._distribute()")
            conn.execute("select memory_internal._distribute()")  # again, once it has ended: adapts every node
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
